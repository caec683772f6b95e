"""Sphinx configuration of a reportgen site, written by reportgen when none existed; edit freely."""

from reportgen.site import STATIC_DIR

project = "torch.compile reports"
html_title = project
extensions = ["myst_parser"]
html_theme = "furo"
html_show_copyright = False
# reportgen.css: long kernel names wrap in tables; a compact reports index; full-width pages for kernel tables.
# reportgen.js: kernel tables sort by a column and filter their rows in the browser.
html_static_path = [str(STATIC_DIR)]
html_css_files = ["reportgen.css"]
html_js_files = ["reportgen.js"]
html_favicon = str(STATIC_DIR / "favicon.svg")
exclude_patterns = ["_build", ".*", "**/.*"]
# The recipe is shown as YAML; a file Pygments cannot lex should not fail a `-W` build.
suppress_warnings = ["misc.highlighting_failure"]
