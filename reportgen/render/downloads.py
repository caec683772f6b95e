"""Files offered for download next to a report page, and the page's "Downloads" section.

Written into the report directory (`recipe.yaml` is already there, see `reportgen.render`)::

    reproduce.ipynb    notebook that re-runs the recipe and compares numbers (render.notebook)
    trace.json.gz      the profiler trace, copied from the bundle (credentials redacted, within the trace bounds)
    modules.tar.gz     the bundle's compiled modules (`modules/`)
    manifest.json      what ran, where, and its headline numbers
"""

from __future__ import annotations

import gzip
import io
import logging
import os
import stat
import tarfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat

from reportgen.bundle import (
    MANIFEST_FILE,
    MAX_MODULE_BYTES,
    MAX_TRACE_BYTES,
    MODULES_DIR,
    RECIPE_FILE,
    TRACE_FILE,
    Bundle,
    ReadBudget,
    bundle_file,
    walk_entries,
    write_if_changed,
)
from reportgen.credentials import redact
from reportgen.errors import BundleError
from reportgen.formats import TraceTooLargeError, rewrite_trace
from reportgen.render.notebook import reproducer_notebook

logger = logging.getLogger(__name__)

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


def _module_files(bundle_dir: Path) -> list[Path]:
    """The bundle's module files that are regular files inside it (links and special files left out; the walk
    follows no link and is bounded: `walk_entries`)."""
    found = []
    budget = ReadBudget(bundle_dir, "the modules archive")
    for relative, _, info in walk_entries(bundle_dir / MODULES_DIR, "modules archive"):
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
            continue
        try:
            path = bundle_file(bundle_dir, f"{MODULES_DIR}/{relative}", MAX_MODULE_BYTES)
        except BundleError as exc:
            logger.warning("left out of the modules archive: %s", exc)
            continue
        if not budget.take(info.st_size):
            break
        found.append(path)
    return found


def write_modules_archive(bundle_dir: Path, files: list[Path], dest: Path) -> Path:
    """Pack `files` (under `bundle_dir/modules`) as `modules/...` into the reproducible gzip'd tarball `dest`,
    credentials redacted (a bundle made elsewhere may hold some); written only when its bytes change."""
    raw = io.BytesIO()
    with (
        gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w") as tar,
    ):
        for path in files:
            data = redact(path.read_bytes().decode("utf-8", errors="replace"))[0].encode("utf-8")
            info = _reset_tarinfo(tarfile.TarInfo(path.relative_to(bundle_dir).as_posix()))
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    write_if_changed(dest, raw.getvalue())
    return dest


def _copy_trace(bundle: Bundle, relative: str, dest: Path) -> bool:
    """Publish the bundle's trace next to the page with its credentials redacted (a `record_function` label, an
    arg), read as a stream within the bounds of any trace read; one past them, or unreadable, is not published."""
    if not os.path.lexists(bundle.path / relative):
        return False
    try:
        path = bundle_file(bundle.path, relative, MAX_TRACE_BYTES)
        data = rewrite_trace(path, lambda text: redact(text)[0], lambda text: bool(redact(text)[1]))
    except BundleError as exc:
        logger.warning("not published: %s", exc)
        return False
    except (TraceTooLargeError, EOFError, zlib.error, OSError) as exc:
        logger.warning("%s: trace not published: %s", bundle.path / relative, exc)
        return False
    write_if_changed(dest, path.read_bytes() if data is None else data)
    return True


def _download(page_dir: Path, file: str, description: str) -> Download:
    return Download(file=file, size_bytes=(page_dir / file).stat().st_size, description=description)


def write_downloads(bundle: Bundle, page_dir: Path, recipe_yaml: str | None) -> list[Download]:
    """Write the bundle's downloadable files into `page_dir`; returns them in the order to list them.

    :param recipe_yaml: the bundle's recipe.yaml text; without it there is no notebook
    """
    downloads = []
    if recipe_yaml is not None:
        notebook = nbformat.writes(reproducer_notebook(bundle.manifest, recipe_yaml, bundle_dir=bundle.path))
        write_if_changed(page_dir / NOTEBOOK_FILE, (notebook if notebook.endswith("\n") else notebook + "\n").encode())
        downloads.append(
            _download(page_dir, NOTEBOOK_FILE, "a notebook that re-runs this recipe and compares the numbers")
        )
    if (page_dir / RECIPE_FILE).is_file():
        downloads.append(_download(page_dir, RECIPE_FILE, "the recipe, as the run used it"))
    trace = bundle.manifest.trace_file
    if trace is not None and _copy_trace(bundle, trace, page_dir / TRACE_FILE):
        description = "the profiler trace; open it in <https://ui.perfetto.dev> or `chrome://tracing`"
        downloads.append(_download(page_dir, TRACE_FILE, description))
    if modules := _module_files(bundle.path):
        write_modules_archive(bundle.path, modules, page_dir / MODULES_ARCHIVE)
        downloads.append(_download(page_dir, MODULES_ARCHIVE, "the compiled wrapper and kernel modules"))
    (page_dir / MANIFEST_FILE).write_text(bundle.manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
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
