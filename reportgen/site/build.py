"""Assemble a Sphinx project around the rendered report pages and build it to HTML."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

from reportgen.errors import SiteError
from reportgen.render import render_site_pages

__all__ = ["REPORTS_DIR", "build_site", "ensure_project", "run_sphinx"]

REPORTS_DIR = "reports"
_TEMPLATE_FILES = ("conf.py", "index.md")
_TAIL_LINES = 30


def ensure_project(source_dir: Path) -> None:
    """Write the default Sphinx project into `source_dir` when it has no conf.py.

    Existing files (an index.md of the user's) are kept.
    """
    if (source_dir / "conf.py").exists():
        return
    source_dir.mkdir(parents=True, exist_ok=True)
    template = resources.files("reportgen.site").joinpath("template")
    for name in _TEMPLATE_FILES:
        target = source_dir / name
        if not target.exists():
            target.write_text(template.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8")


def run_sphinx(source_dir: Path, html_dir: Path) -> None:
    """Run `sphinx-build -W --keep-going -n -b html`; SiteError with its output's tail on failure."""
    command = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "--keep-going",
        "-n",
        "-b",
        "html",
        str(source_dir),
        str(html_dir),
    ]
    try:
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    except OSError as exc:
        raise SiteError(f"cannot run sphinx-build: {exc}", path=source_dir) from exc
    if result.returncode != 0:
        tail = "\n".join(result.stdout.splitlines()[-_TAIL_LINES:])
        raise SiteError(
            f"sphinx-build failed with exit code {result.returncode}:\n{tail}",
            path=source_dir,
            hint="fix the warnings above; every warning fails the build",
        )


def build_site(results_dir: Path, source_dir: Path, html_dir: Path | None = None) -> Path:
    """Render the bundles of `results_dir` into `source_dir/reports/` and build the HTML site.

    :param source_dir: a Sphinx project; a default one is written when it has no conf.py
    :param html_dir: output directory, `source_dir/_build/html` by default
    :returns: the HTML directory
    """
    ensure_project(source_dir)
    render_site_pages(results_dir, source_dir / REPORTS_DIR)
    html_dir = html_dir if html_dir is not None else source_dir / "_build" / "html"
    run_sphinx(source_dir, html_dir)
    return html_dir
