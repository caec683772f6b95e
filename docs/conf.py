"""Sphinx configuration of reportgen's own documentation (`reportgen` renders `reports/` into it)."""

from pathlib import Path

from reportgen.recipe import env_policy_markdown, recipe_reference_markdown
from reportgen.site import STATIC_DIR

project = "reportgen"
html_title = project
extensions = ["myst_parser", "reportgen.sphinx"]
html_theme = "furo"
html_show_copyright = False
# reportgen.css: long kernel names wrap in tables; a compact reports index.
html_static_path = [str(STATIC_DIR)]
html_css_files = ["reportgen.css"]
html_js_files = ["reportgen.js"]
exclude_patterns = ["_build", ".*", "**/.*"]
# Recipes are shown as YAML; a file Pygments cannot lex should not fail a `-W` build.
suppress_warnings = ["misc.highlighting_failure"]

# The recipe reference is derived from the recipe model: regenerate it on every build.
_generated = Path(__file__).parent / "_generated"
_generated.mkdir(exist_ok=True)
(_generated / "recipe_reference.md").write_text(recipe_reference_markdown(), encoding="utf-8")
(_generated / "env_policy.md").write_text(env_policy_markdown(), encoding="utf-8")
exclude_patterns.append("_generated")
