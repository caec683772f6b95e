"""Reading a bundle that may come from elsewhere: every file read is a regular file inside the bundle.

Bundles are untrusted input (CI shards, other hosts, other people). A path a bundle names (`trace_file`,
`modules[].path`, ...) is refused when it is absolute or climbs out with `..`; a file is refused when any
part of its path inside the bundle is a symbolic link, when it is not a regular file (FIFO, device,
directory), when it has other hard links (an outside file linked in), or when it is larger than the
reader's bound. Building a site therefore reads nothing outside the bundles it is given.

Every walk of a bundle's directories (`walk_entries`: digests, merges, the modules archive, the run's
scrub) lists entries without following a symbolic link, a linked root included, and stops at
`MAX_WALK_DEPTH` levels and `MAX_WALK_ENTRIES` entries with one warning: a `modules -> /` link or a planted
tree of a million files costs one line, not a walk of the file system.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from reportgen.errors import BundleError

__all__ = [
    "MAX_JSON_BYTES",
    "MAX_MODULES_BYTES",
    "MAX_MODULE_BYTES",
    "MAX_TRACE_BYTES",
    "MAX_WALK_DEPTH",
    "MAX_WALK_ENTRIES",
    "Entry",
    "ReadBudget",
    "bundle_file",
    "is_plain_file",
    "open_plain",
    "walk_entries",
]

logger = logging.getLogger(__name__)

MAX_JSON_BYTES = 32 << 20
"""manifest, capture, analysis, provenance, comparison: mixnet_l's analysis.json is 1.4-4.7 MB (7x headroom);
parsed and validated whole, so a 300 MB file would cost minutes and gigabytes."""
MAX_MODULE_BYTES = 16 << 20
"""A compiled wrapper or kernel module (each may become a source page): a training wrapper is ~3 MB."""
MAX_MODULES_BYTES = 256 << 20
"""The compiled modules one bundle may make one reader (its module index, its source pages, its modules archive)
read in all: mixnet_l training's 521 modules are ~7 MB (36x headroom). Without it, a manifest listing one 16 MiB
module 250,000 times would cost terabytes of reading."""
MAX_TRACE_BYTES = 4 << 30
"""A chrome trace file: the bound on its text (`formats.bounds.MAX_INFLATED_BYTES`), which a plain one is."""
MAX_WALK_DEPTH = 8
"""Directory levels a walk descends below its root: a bundle's deepest file is 2 levels down
(`modules/kernels/<file>`), a results directory's 4 (`.history/<name>/<run id>/<file>`) plus a bundle's."""
MAX_WALK_ENTRIES = 100_000
"""Entries (files, directories, links) one walk visits: a bundle of mixnet_l holds ~1,100 (521 kernel modules,
their graphs); 100,000 lstat calls take well under a second."""

Entry = tuple[str, str, os.stat_result]
"""A walked entry: its path relative to the walk's root (`/`-separated), its path, its `lstat`."""


def is_plain_file(info: os.stat_result) -> bool:
    """A regular file with no other hard link: what a bundle may hold, and all a merge or scrub touches."""
    return stat.S_ISREG(info.st_mode) and info.st_nlink == 1


def open_plain(path: str | Path, info: os.stat_result) -> BinaryIO | None:
    """`path` opened for reading when it is still the plain file `info` (its `lstat`) described: a link,
    a FIFO or another file swapped in since is not opened (None); a FIFO never blocks the open."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    now = os.fstat(fd)
    if not is_plain_file(now) or (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
        os.close(fd)
        return None
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def walk_entries(root: Path, what: str = "walk") -> list[Entry]:
    """Every entry under directory `root` but the directories themselves, sorted by relative path; links are
    listed, never followed (a `root` that is a link is not walked). Directories deeper than `MAX_WALK_DEPTH`
    are left out, and the walk stops after `MAX_WALK_ENTRIES` entries; either costs one warning saying `what`
    was cut short.

    Plain strings, not `Path`s: a no-change check walks every entry of hundreds of bundles.
    """
    try:
        info = os.lstat(root)
    except OSError:
        return []
    if not stat.S_ISDIR(info.st_mode):
        if stat.S_ISLNK(info.st_mode):
            logger.warning("%s: %s: a symbolic link, not followed", root, what)
        return []
    found: list[Entry] = []
    pending = [("", str(root), 0)]
    visited, cut = 0, []
    while pending and visited <= MAX_WALK_ENTRIES:
        prefix, directory, depth = pending.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    visited += 1
                    if visited > MAX_WALK_ENTRIES:
                        cut.append(f"over {MAX_WALK_ENTRIES} entries")
                        break
                    info = entry.stat(follow_symlinks=False)
                    relative = prefix + entry.name
                    if not stat.S_ISDIR(info.st_mode):
                        found.append((relative, entry.path, info))
                    elif depth < MAX_WALK_DEPTH:
                        pending.append((relative + "/", entry.path, depth + 1))
                    elif not cut:
                        cut.append(f"{relative}/ is deeper than {MAX_WALK_DEPTH} levels")
        except OSError as exc:
            logger.warning("%s: %s: cannot list %s: %s", root, what, directory, exc.strerror or exc)
    if cut:
        logger.warning("%s: %s cut short: %s; the rest is left out", root, what, "; ".join(cut))
    return sorted(found, key=lambda item: item[0])


def bundle_file(bundle_dir: Path, relative: str, max_bytes: int = MAX_JSON_BYTES) -> Path:
    """The regular file `relative` (a path as the bundle names it) inside `bundle_dir`.

    :raises BundleError: for a missing file, a path leading outside, a link, a special file or an oversized one
    """
    hint = "a bundle holds regular files only; re-run the recipe to rewrite it"
    parts = PurePosixPath(relative.replace("\\", "/")).parts
    if not parts or parts[0] == "/" or ".." in parts or relative.startswith("~"):
        raise BundleError(f"{relative!r} leads outside the bundle", path=bundle_dir, hint=hint)
    path = bundle_dir
    for part in parts:
        path = path / part
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            raise BundleError(f"missing {relative}", path=path, hint=hint) from None
        except OSError as exc:
            raise BundleError(f"cannot read {relative}: {exc.strerror}", path=path, hint=hint) from None
        if stat.S_ISLNK(info.st_mode):
            raise BundleError(f"{relative}: a symbolic link, not followed", path=path, hint=hint)
    if not stat.S_ISREG(info.st_mode):
        raise BundleError(f"{relative}: not a regular file", path=path, hint=hint)
    if info.st_nlink > 1:
        raise BundleError(f"{relative}: has {info.st_nlink} hard links (may be an outside file)", path=path, hint=hint)
    if info.st_size > max_bytes:
        raise BundleError(f"{relative}: {info.st_size} bytes, over the {max_bytes}-byte bound", path=path, hint=hint)
    return path


class ReadBudget:
    """Bytes one reader may still read from one bundle's modules (`MAX_MODULES_BYTES`); past it, every further
    file is refused, with one warning for the bundle."""

    def __init__(self, bundle_dir: Path, what: str, limit: int | None = None) -> None:
        self.limit = MAX_MODULES_BYTES if limit is None else limit
        self.bundle_dir, self.what, self.left, self._warned = bundle_dir, what, self.limit, False

    def take(self, size: int) -> bool:
        """Whether `size` more bytes may be read; counts them when they may."""
        if size <= self.left:
            self.left -= size
            return True
        if not self._warned:
            self._warned = True
            logger.warning(
                "%s: %s stops at %d bytes of compiled modules (the bound per bundle); the rest is left out",
                self.bundle_dir,
                self.what,
                self.limit,
            )
        return False
