"""Site stage: a Sphinx project around the rendered report pages, built to HTML."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

from reportgen.bundle import replace_dir
from reportgen.errors import SiteError, os_failure

__all__ = ["REPORTS_DIR", "STATIC_DIR", "build_html", "default_html_dir", "ensure_project", "run_sphinx"]

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
    template = resources.files("reportgen.site").joinpath("template")
    try:
        source_dir.mkdir(parents=True, exist_ok=True)
        for name in _TEMPLATE_FILES:
            target = source_dir / name
            if not target.exists():
                target.write_text(template.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8")
    except OSError as exc:
        raise os_failure(exc, SiteError, "write the Sphinx project", source_dir) from exc


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


def default_html_dir(source_dir: Path) -> Path:
    """Where the HTML of `source_dir` goes unless told otherwise: `source_dir/_build/html`."""
    return source_dir / "_build" / "html"


def build_html(source_dir: Path, html_dir: Path) -> None:
    """Build into a copy of the previous HTML (Sphinx stays incremental), then swap it in whole.

    A build killed or failing at any point leaves the previous site as it was. Callers hold
    `build_lock(source_dir)`.
    """

    def build(tmp: Path) -> None:
        if html_dir.is_dir():
            shutil.copytree(html_dir, tmp, symlinks=True, dirs_exist_ok=True)
        run_sphinx(source_dir, tmp)

    replace_dir(html_dir, build, SiteError, "the HTML site")
