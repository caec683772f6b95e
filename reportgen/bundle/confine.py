"""Reading a bundle that may come from elsewhere: every file read is a regular file inside the bundle.

Bundles are untrusted input (CI shards, other hosts, other people). A path a bundle names (`trace_file`,
`modules[].path`, ...) is refused when it is absolute or climbs out with `..`; a file is refused when any
part of its path inside the bundle is a symbolic link, when it is not a regular file (FIFO, device,
directory), when it has other hard links (an outside file linked in), or when it is larger than the
reader's bound. Building a site therefore reads nothing outside the bundles it is given.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from reportgen.errors import BundleError

__all__ = ["MAX_JSON_BYTES", "MAX_MODULE_BYTES", "MAX_TRACE_BYTES", "bundle_file"]

MAX_JSON_BYTES = 512 << 20
"""manifest, capture, analysis: mixnet_l's analysis.json is 1.4 MB."""
MAX_MODULE_BYTES = 64 << 20
"""A compiled wrapper or kernel module: a training wrapper is ~3 MB."""
MAX_TRACE_BYTES = 16 << 30
"""A chrome trace: the streaming reader handles GBs."""


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
