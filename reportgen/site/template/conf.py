"""Sphinx configuration of a reportgen site, written by reportgen when none existed; edit freely."""

project = "torch.compile reports"
html_title = project
extensions = ["myst_parser"]
html_theme = "furo"
exclude_patterns = ["_build", ".*", "**/.*"]
# The recipe is shown as YAML; a file Pygments cannot lex should not fail a `-W` build.
suppress_warnings = ["misc.highlighting_failure"]
