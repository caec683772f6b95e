"""What a bundle holds, as one content hash; and writes that leave unchanged files alone.

`bundle_digest` hashes every entry of a bundle directory without following anything (a walk bounded in depth
and count, `confine.walk_entries`): a regular file
by its bytes, a symbolic link by its target text, anything else by its type (special files are never
opened). Given the previous digest, a bundle whose entries' stat fields (size, mtime, inode) are all
unchanged is not read again (as git's index does), so a no-change check of hundreds of bundles reads
no bundle bytes. Bundles are replaced whole (new inodes), so any rewrite shows in the stat fields.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from reportgen.bundle.confine import walk_entries

__all__ = ["BundleDigest", "bundle_digest", "write_if_changed"]

_CHUNK = 1 << 20


@dataclass(frozen=True)
class BundleDigest:
    """A bundle's content hash and the stat signature it was computed under.

    :param signature: hash of every entry's path, type, size, mtime and inode (no content read)
    :param content: hash of every entry's path and content (see `bundle_digest`)
    """

    signature: str
    content: str


def _file_sha(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _entry_sha(path: str, status: os.stat_result) -> str:
    if stat.S_ISLNK(status.st_mode):
        return hashlib.sha256(b"link\0" + os.fsencode(os.readlink(path))).hexdigest()  # noqa: PTH115
    if stat.S_ISREG(status.st_mode):
        return _file_sha(Path(path))
    return hashlib.sha256(f"special\0{stat.S_IFMT(status.st_mode)}".encode()).hexdigest()


def bundle_digest(bundle_dir: Path, previous: BundleDigest | None = None) -> BundleDigest:
    """The content hash of everything under `bundle_dir`.

    :param previous: the digest of an earlier call; when no entry's stat changed since, it is returned
        as is and no file is read
    """
    entries = walk_entries(bundle_dir, "bundle digest")
    signature = hashlib.sha256()
    for relative, _, status in entries:
        signature.update(
            f"{relative}\0{status.st_mode}\0{status.st_size}\0{status.st_mtime_ns}\0{status.st_ino}\0".encode()
        )
    if previous is not None and previous.signature == signature.hexdigest():
        return previous
    content = hashlib.sha256()
    for relative, path, status in entries:
        content.update(f"{relative}\0{_entry_sha(path, status)}\0".encode())
    return BundleDigest(signature=signature.hexdigest(), content=content.hexdigest())


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write `data` to `path` (atomically: a temporary sibling renamed into place) unless it already holds
    exactly these bytes; an unchanged file keeps its mtime, so Sphinx sees no change. Returns whether it wrote."""
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}-{secrets.token_hex(4)}.tmp")
    try:
        tmp.write_bytes(data)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return True
