"""Assemble a Sphinx project around the rendered report pages and build it to HTML."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from reportgen.bundle.store import replace_dir
from reportgen.errors import SiteError
from reportgen.render import render_site_pages
from reportgen.site.lock import DEFAULT_LOCK_TIMEOUT_S, build_lock

__all__ = ["REPORTS_DIR", "STATIC_DIR", "build_site", "ensure_project", "run_sphinx"]

REPORTS_DIR = "reports"
STATIC_DIR = Path(__file__).resolve().parent / "static"
"""The site's CSS (`reportgen.css`) and icon, for `html_static_path` of the site's and the docs' conf.py."""
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
        "--no-color",
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


def _build_html(source_dir: Path, html_dir: Path) -> None:
    """Build into a copy of the previous HTML (Sphinx stays incremental), then swap it in whole.

    A build killed or failing at any point leaves the previous site as it was.
    """

    def build(tmp: Path) -> None:
        if html_dir.is_dir():
            shutil.copytree(html_dir, tmp, symlinks=True, dirs_exist_ok=True)
        run_sphinx(source_dir, tmp)

    replace_dir(html_dir, build)


def build_site(
    results_dir: Path,
    source_dir: Path,
    html_dir: Path | None = None,
    lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S,
    on_stage: Callable[[str], None] | None = None,
) -> Path:
    """Render the bundles of `results_dir` into `source_dir/reports/` and build the HTML site.

    Builds of one `source_dir` take turns (see `reportgen.site.lock`); pages and HTML are each
    replaced whole, so a killed build leaves the previous ones readable.

    :param source_dir: a Sphinx project; a default one is written when it has no conf.py
    :param html_dir: output directory, `source_dir/_build/html` by default
    :param lock_timeout_s: how long to wait for another build of the same `source_dir`
    :param on_stage: told the name of each stage as it starts
    :returns: the HTML directory
    """
    stage = on_stage or (lambda _: None)
    html_dir = html_dir if html_dir is not None else source_dir / "_build" / "html"
    with build_lock(source_dir, lock_timeout_s):
        ensure_project(source_dir)
        stage("rendering pages")
        render_site_pages(results_dir, source_dir / REPORTS_DIR)
        stage("sphinx-build")
        _build_html(source_dir, html_dir)
    return html_dir
