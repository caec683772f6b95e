"""A site's build state: kept out of every place a bundle, a merge or `serve` reaches, and sealed.

Sphinx keeps its environment and doctrees as pickles, and reading a pickle runs whatever code it names. So
they are not in the HTML trees (which `serve` shows) nor under `_build/results` (where results directories are
merged), but in `.<html>-state/` beside the trees (`_build/.html-state/` for the default `_build/html`), a
directory of the user's only (0700), one folder per tree (`html-a/doctrees`, `html-b/doctrees`: the doctrees
a tree was built with go with it) with that tree's build stamp (`html-a/stamp.json`).

A file planted there anyway is harmless: after each build reportgen records the tree's stamp and a digest of
every file of its doctrees (`*.doctree`, `environment.pickle`, anything else), sealed with an HMAC-SHA256
under the site's key (`key`, `KEY_BYTES` random bytes, 0600, made on the first build). Before Sphinx reads a
tree's doctrees, the seal and the digest are checked (a file whose size, mtime, ctime and inode are those the
seal records is not read again: `FileIndex`). No stamp (a first build, a site of an older reportgen)
makes a clean build: the tree and its doctrees are emptied first; so, with one warning, does a stamp that is
not a regular file, larger than `STAMP_MAX_BYTES`, malformed or not sealed under this key, or doctrees that
differ in any way from those recorded (a file added, changed or removed, a link, a FIFO). The key itself is
replaced when it is not a 0600 regular file of this user's of `KEY_BYTES` bytes (then no old seal holds).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import logging
import os
import secrets
import shutil
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reportgen.site.stamp import BuildStamp
from reportgen.site.trees import open_regular, read_regular, tree_dirs

__all__ = [
    "KEY_BYTES",
    "KEY_FILE",
    "STAMP_MAX_BYTES",
    "FileIndex",
    "Recorded",
    "SiteState",
    "digest_files",
    "open_state",
    "state_dir",
    "tree_digest",
]

logger = logging.getLogger(__name__)

KEY_FILE = "key"
KEY_BYTES = 32
"""The site key's length: 256 bits, as long as an HMAC-SHA256, beyond guessing."""
STAMP_MAX_BYTES = 64 * 1024 * 1024
"""The largest stamp file read: a stamp holds ~100 bytes per source file, so this is ~600,000 files (a site of
1,000 bundles with 20 kept runs each has ~200,000); a larger one is not read (a clean build)."""
_STAMP_FILE = "stamp.json"
_DOCTREES = "doctrees"
_DIR_MODE = 0o700
_KEY_MODE = 0o600
_CHUNK = 1 << 20


FileIndex = dict[str, tuple[int, int, int, int, str]]
"""Each file of a tree's doctrees when it was last digested: relative path → (size, mtime_ns, ctime_ns, inode,
SHA-256 hex). A file whose four stat fields are unchanged since is not read again: writing to a file (or setting
its times back) moves its ctime, which no call can set. 100 bundles (8,600 doctree files, 2 cores): digesting
the doctrees took 0.87 s per walk, twice a build, whatever changed."""


class _Sealed(BaseModel):
    """A tree's stamp file: the stamp, the digest of its doctrees and their file index, the HMAC over all three
    under the site key."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    stamp: BuildStamp
    doctrees: str = Field(pattern=r"^[0-9a-f]{64}$")
    files: FileIndex = Field(default_factory=dict)
    mac: str = Field(pattern=r"^[0-9a-f]{64}$")


def state_dir(html_dir: Path) -> Path:
    """Where the build state of the site published at `html_dir` lives: `.<name>-state` beside it."""
    return html_dir.with_name(f".{html_dir.name}-state")


@dataclass(frozen=True)
class Recorded:
    """What a tree was built from (`stamp`), the digest of the doctrees that build left (`doctrees`) and their
    file index (`files`: what a later digest of the same tree need not read again)."""

    stamp: BuildStamp
    doctrees: str
    files: FileIndex


@dataclass(frozen=True)
class SiteState:
    """The build state of the site published at `html_dir`, under the site key `key`."""

    html_dir: Path
    key: bytes

    @property
    def root(self) -> Path:
        """The state directory."""
        return state_dir(self.html_dir)

    def doctrees(self, tree: Path) -> Path:
        """Sphinx's doctree directory (`sphinx-build -d`) of `tree`, one of the two HTML trees."""
        return self._folder(tree) / _DOCTREES

    def read(self, tree: Path, *, quiet: bool = False) -> Recorded | None:
        """What `tree` was built from, when its stamp is sealed under this site's key; else None (then build
        from scratch), with one warning when a stamp was there (none when `quiet`)."""
        if tree not in tree_dirs(self.html_dir):
            return None  # a plain HTML directory of an older reportgen: no state of ours
        path = self._folder(tree) / _STAMP_FILE
        data = read_regular(path, STAMP_MAX_BYTES)
        if data is None:
            if (path.exists() or path.is_symlink()) and not quiet:
                logger.warning("%s: not a build stamp of this site; building the HTML from scratch", path)
            return None
        try:
            sealed = _Sealed.model_validate_json(data)
        except ValidationError:
            if not quiet:
                logger.warning("%s: not a build stamp of this site; building the HTML from scratch", path)
            return None
        if not hmac.compare_digest(sealed.mac, self._mac(tree, sealed.stamp, sealed.doctrees, sealed.files)):
            if not quiet:
                logger.warning("%s: not sealed by this site's key; building the HTML from scratch", path)
            return None
        return Recorded(stamp=sealed.stamp, doctrees=sealed.doctrees, files=dict(sealed.files))

    def check(
        self, tree: Path, recorded: Recorded, known: Mapping[str, tuple[int, int, int, int, str]]
    ) -> FileIndex | None:
        """The file index of `tree`'s doctrees when they are, file for file, those `recorded`; else None, with
        one warning. `known`: the tree's own file index from its last build (its unchanged files are not read)."""
        found = digest_files(self.doctrees(tree), known)
        if found is not None and hmac.compare_digest(recorded.doctrees, found[0]):
            return found[1]
        logger.warning("%s: differs from what the last build left; building the HTML from scratch", self.doctrees(tree))
        return None

    def forget(self, tree: Path) -> None:
        """Drop the stamp of `tree` before building into it (a build killed part-way leaves no stamp)."""
        folder = self._folder(tree)
        _make_private_dir(folder)
        (folder / _STAMP_FILE).unlink(missing_ok=True)

    def clear(self, tree: Path) -> None:
        """Empty `tree` and its doctrees (the next Sphinx run is a clean build)."""
        for path in (tree, self.doctrees(tree)):
            _remove(path)
            path.mkdir(parents=True)

    def record(self, tree: Path, stamp: BuildStamp, known: Mapping[str, tuple[int, int, int, int, str]]) -> None:
        """Seal `stamp` and the doctrees of `tree` as they are now (the last step before `tree` is published).

        `known`: the doctrees' file index from before Sphinx ran (the files Sphinx left alone are not read)."""
        found = digest_files(self.doctrees(tree), known)
        if found is None:
            return  # Sphinx left something that is not a file: no stamp, the next build is a clean one
        doctrees, files = found
        sealed = _Sealed(stamp=stamp, doctrees=doctrees, files=files, mac=self._mac(tree, stamp, doctrees, files))
        path = self._folder(tree) / _STAMP_FILE
        temporary = path.with_name(f".{path.name}-{secrets.token_hex(4)}")
        temporary.write_text(sealed.model_dump_json(), encoding="utf-8")
        temporary.replace(path)

    def _folder(self, tree: Path) -> Path:
        return self.root / tree.name.lstrip(".")

    def _mac(self, tree: Path, stamp: BuildStamp, doctrees: str, files: FileIndex) -> str:
        parts = [tree.name.encode(), doctrees.encode(), stamp.model_dump_json().encode()]
        if files:  # (a stamp of an older reportgen has none: its seal still holds)
            parts.append(json.dumps(files, sort_keys=True, separators=(",", ":")).encode())
        return hmac.new(self.key, b"\0".join(parts), hashlib.sha256).hexdigest()


def open_state(html_dir: Path) -> SiteState:
    """The build state of the site at `html_dir`: its directory made (0700, a link or file there replaced) and
    its key read, or made when it is missing or not a 0600 regular file of this user's of `KEY_BYTES` bytes."""
    root = state_dir(html_dir)
    _make_private_dir(root)
    for tree in tree_dirs(html_dir):
        if tree.is_symlink() or (tree.exists() and not tree.is_dir()):
            tree.unlink()  # a tree is a directory of ours, never a way out
    return SiteState(html_dir=html_dir, key=_site_key(root / KEY_FILE))


def tree_digest(directory: Path) -> str | None:
    """SHA-256 over the relative path and bytes of every file under `directory`, walked without following
    links; None when `directory` is missing or not a directory, or holds anything but files and directories."""
    found = digest_files(directory, {})
    return None if found is None else found[0]


def digest_files(directory: Path, known: Mapping[str, tuple[int, int, int, int, str]]) -> tuple[str, FileIndex] | None:
    """`tree_digest(directory)` and the file index it was made from, reading only the files whose size,
    mtime, ctime or inode differ from their entry in `known` (`FileIndex`)."""
    digest = hashlib.sha256()
    files: FileIndex = {}
    try:
        if not stat.S_ISDIR(os.lstat(directory).st_mode):
            return None
        for relative, entry in _walk(directory, ""):
            if entry is None:
                digest.update(b"D\0" + os.fsencode(relative) + b"\0")
                continue
            status = entry.stat(follow_symlinks=False)
            fields = (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)
            cached = known.get(relative)
            if cached is not None and tuple(cached[:4]) == fields:
                file_digest = bytes.fromhex(cached[4])
            else:
                file_digest = _file_digest(Path(entry.path))
            files[relative] = (*fields, file_digest.hex())
            digest.update(b"F\0" + os.fsencode(relative) + b"\0" + file_digest + b"\0")
    except (OSError, ValueError, _NotAFileError):
        return None
    return digest.hexdigest(), files


class _NotAFileError(Exception):
    """A link, FIFO, socket or device where only files and directories belong."""


def _walk(directory: Path | str, prefix: str) -> Iterator[tuple[str, os.DirEntry[str] | None]]:
    """(relative path, the file's entry or None for a directory) of everything under `directory`, sorted."""
    with os.scandir(directory) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
    for entry in entries:
        relative = f"{prefix}{entry.name}"
        if entry.is_dir(follow_symlinks=False):
            yield relative, None
            yield from _walk(entry.path, f"{relative}/")
        elif entry.is_file(follow_symlinks=False):
            yield relative, entry
        else:
            raise _NotAFileError(entry.path)


def _file_digest(path: Path) -> bytes:
    handle = open_regular(path)
    if handle is None:
        raise _NotAFileError(str(path))
    digest = hashlib.sha256()
    with handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.digest()


def _site_key(path: Path) -> bytes:
    """The key at `path`, or a new one written there when that is not a private file of this user's."""
    try:
        handle = open_regular(path)
    except FileNotFoundError:
        return _new_key(path)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        return _new_key(path)  # a link
    if handle is None:
        return _new_key(path)
    with handle:
        status = os.fstat(handle.fileno())
        key = handle.read(KEY_BYTES + 1)
    private = status.st_uid == os.geteuid() and not status.st_mode & 0o077
    return key if private and len(key) == KEY_BYTES else _new_key(path)


def _new_key(path: Path) -> bytes:
    key = secrets.token_bytes(KEY_BYTES)
    temporary = path.with_name(f".{path.name}-{secrets.token_hex(4)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, _KEY_MODE)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(key)
    _remove(path)
    temporary.replace(path)
    return key


def _make_private_dir(path: Path) -> None:
    """Make `path` a directory only its owner can enter (anything else standing there is removed first)."""
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            path.unlink()
    path.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
    path.chmod(_DIR_MODE)


def _remove(path: Path) -> None:
    """Remove `path` whatever it is (a link is removed, never followed)."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path)
        else:
            path.unlink()
