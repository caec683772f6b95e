"""Sphinx configuration of reportgen's own documentation (`reportgen` renders `reports/` into it)."""

project = "reportgen"
html_title = project
extensions = ["myst_parser"]
html_theme = "furo"
exclude_patterns = ["_build", ".*", "**/.*"]
# Recipes are shown as YAML; a file Pygments cannot lex should not fail a `-W` build.
suppress_warnings = ["misc.highlighting_failure"]
