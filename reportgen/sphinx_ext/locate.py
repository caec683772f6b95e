"""Where a directive's bundle is, and which of its files a page depends on."""

from __future__ import annotations

import hashlib
from pathlib import Path

from reportgen import __version__
from reportgen.bundle import ANALYSIS_FILE, CAPTURE_FILE, LOG_FILE, MANIFEST_FILE, RECIPE_FILE, Manifest

__all__ = ["bundle_files", "bundle_key", "resolve_bundle_dir"]


def resolve_bundle_dir(argument: str, doc_dir: Path, srcdir: Path, root: str) -> Path:
    """The bundle directory a directive names.

    :param argument: the directive's path: ``/x`` is relative to `srcdir` (as for images and
        ``include``) when that exists, else the absolute path ``/x``; anything else is relative to `root`
        when it is set, else to `doc_dir`
    :param doc_dir: directory of the document holding the directive
    :param root: the ``reportgen_bundle_root`` option, relative to `srcdir` (or absolute); empty when unset
    """
    if argument.startswith("/"):
        in_project = srcdir / argument.lstrip("/")
        return in_project if in_project.exists() or not Path(argument).exists() else Path(argument)
    base = srcdir / root if root else doc_dir
    return base / argument


def bundle_files(bundle_dir: Path, manifest: Manifest | None) -> list[Path]:
    """The files of a bundle that a page shows: manifest.json always, the others where they exist.

    :param manifest: the bundle's manifest, when it could be read (it names the capture and log files)
    """
    capture = manifest.capture_file if manifest else CAPTURE_FILE
    log = manifest.log_file if manifest else LOG_FILE
    optional = [ANALYSIS_FILE, RECIPE_FILE, *(name for name in (capture, log) if name)]
    return [bundle_dir / MANIFEST_FILE, *(p for p in (bundle_dir / n for n in optional) if p.is_file())]


def bundle_key(bundle_dir: Path, files: list[Path]) -> str:
    """A short hash of the bundle's location, its files' sizes and mtimes, and reportgen's version."""
    digest = hashlib.sha256(f"{__version__}\0{bundle_dir.resolve()}".encode())
    for path in files:
        try:
            stat = path.stat()
        except OSError:
            continue
        digest.update(f"\0{path.name}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]
