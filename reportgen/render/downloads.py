"""Files offered for download next to a report page, and the page's "Downloads" section.

Written into the report directory (`recipe.yaml` is already there, see `reportgen.render`)::

    reproduce.ipynb    notebook that re-runs the recipe and compares numbers (render.notebook)
    trace.json.gz      the profiler trace, copied from the bundle
    modules.tar.gz     the bundle's compiled modules (`modules/`)
    manifest.json      what ran, where, and its headline numbers
"""

from __future__ import annotations

import gzip
import shutil
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat

from reportgen.bundle import MANIFEST_FILE, MODULES_DIR, RECIPE_FILE, TRACE_FILE, Bundle
from reportgen.render.notebook import reproducer_notebook

__all__ = [
    "MODULES_ARCHIVE",
    "NOTEBOOK_FILE",
    "Download",
    "downloads_section",
    "write_downloads",
    "write_modules_archive",
]

NOTEBOOK_FILE = "reproduce.ipynb"
MODULES_ARCHIVE = "modules.tar.gz"


@dataclass(frozen=True)
class Download:
    """One file next to a report page.

    :param file: its name, relative to the page
    :param size_bytes: its size
    :param description: what it is (MyST markup)
    """

    file: str
    size_bytes: int
    description: str


def _reset_tarinfo(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Archive members without owner or time, so the same bundle gives the same archive."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def write_modules_archive(modules_dir: Path, dest: Path) -> Path:
    """Pack `modules_dir` as `modules/...` into the reproducible gzip'd tarball `dest`."""
    with (
        dest.open("wb") as raw,
        gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w") as tar,
    ):
        for path in sorted(modules_dir.rglob("*")):
            if path.is_file():
                tar.add(
                    path, arcname=f"{MODULES_DIR}/{path.relative_to(modules_dir).as_posix()}", filter=_reset_tarinfo
                )
    return dest


def _download(page_dir: Path, file: str, description: str) -> Download:
    return Download(file=file, size_bytes=(page_dir / file).stat().st_size, description=description)


def write_downloads(bundle: Bundle, page_dir: Path, recipe_yaml: str | None) -> list[Download]:
    """Write the bundle's downloadable files into `page_dir`; returns them in the order to list them.

    :param recipe_yaml: the bundle's recipe.yaml text; without it there is no notebook
    """
    downloads = []
    if recipe_yaml is not None:
        nbformat.write(reproducer_notebook(bundle.manifest, recipe_yaml), page_dir / NOTEBOOK_FILE)
        downloads.append(
            _download(page_dir, NOTEBOOK_FILE, "a notebook that re-runs this recipe and compares the numbers")
        )
    if (page_dir / RECIPE_FILE).is_file():
        downloads.append(_download(page_dir, RECIPE_FILE, "the recipe, as the run used it"))
    trace = bundle.path / bundle.manifest.trace_file if bundle.manifest.trace_file else None
    if trace is not None and trace.is_file():
        shutil.copyfile(trace, page_dir / TRACE_FILE)
        description = "the profiler trace; open it in <https://ui.perfetto.dev> or `chrome://tracing`"
        downloads.append(_download(page_dir, TRACE_FILE, description))
    modules_dir = bundle.path / MODULES_DIR
    if modules_dir.is_dir() and any(p.is_file() for p in modules_dir.rglob("*")):
        write_modules_archive(modules_dir, page_dir / MODULES_ARCHIVE)
        downloads.append(_download(page_dir, MODULES_ARCHIVE, "the compiled wrapper and kernel modules"))
    if (bundle.path / MANIFEST_FILE).is_file():
        shutil.copyfile(bundle.path / MANIFEST_FILE, page_dir / MANIFEST_FILE)
        downloads.append(_download(page_dir, MANIFEST_FILE, "the environment manifest: versions, hardware, metrics"))
    return downloads


def _size(size_bytes: int) -> str:
    size = float(size_bytes)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def downloads_section(downloads: Sequence[Download]) -> str:
    """The "Downloads" section of a report page: one `{download}` link per file, with its size."""
    if not downloads:
        return ""
    items = [f"- {{download}}`{d.file} <{d.file}>` ({_size(d.size_bytes)}): {d.description}" for d in downloads]
    return "\n\n".join(["## Downloads", "\n".join(items)])
