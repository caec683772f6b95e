"""One build at a time per site: an exclusive `flock` on `<source dir>/.reportgen.lock`.

A second build into the same source directory waits until the first one ends (its pages and HTML
are then the second build's starting point), for at most `timeout_s`; after that it stops with a
SiteError naming the lock and the process holding it. The kernel drops the lock when its holder
dies, so a killed build never leaves a stale lock behind: the file itself may stay, harmlessly. A process
forked while the lock is held (a render worker) does not keep it: its copy of the descriptor is replaced by
/dev/null, so the lock goes with the build that took it even if a worker outlives it.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from reportgen.errors import SiteError

__all__ = ["DEFAULT_LOCK_TIMEOUT_S", "LOCK_FILE", "build_lock"]

LOCK_FILE = ".reportgen.lock"
DEFAULT_LOCK_TIMEOUT_S = 3600.0
"""How long a build waits for another build of the same site (builds of large sites take minutes)."""

logger = logging.getLogger(__name__)
_HELD: set[int] = set()
"""Descriptors of the locks this process holds."""


def _release_in_child() -> None:
    """In a forked child: point the held locks' descriptors at /dev/null (their numbers stay valid)."""
    if not _HELD:
        return
    null = os.open(os.devnull, os.O_RDONLY)
    for fd in _HELD:
        os.dup2(null, fd)
    os.close(null)
    _HELD.clear()


os.register_at_fork(after_in_child=_release_in_child)


@contextlib.contextmanager
def build_lock(source_dir: Path, timeout_s: float = DEFAULT_LOCK_TIMEOUT_S, poll_s: float = 0.2) -> Iterator[None]:
    """Hold the site's build lock for the duration of the `with` block.

    :param source_dir: the Sphinx source directory (created if missing)
    :param timeout_s: how long to wait for another build to finish
    :param poll_s: how often to retry while waiting
    :raises SiteError: when another build still holds the lock after `timeout_s`
    """
    source_dir.mkdir(parents=True, exist_ok=True)
    path = source_dir / LOCK_FILE
    with path.open("a+", encoding="utf-8") as handle:
        _acquire(handle, path, timeout_s, poll_s)
        _HELD.add(handle.fileno())
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"{os.getpid()}\n")
            handle.flush()
            yield
        finally:
            _HELD.discard(handle.fileno())
            fcntl.flock(handle, fcntl.LOCK_UN)


def _acquire(handle: IO[str], path: Path, timeout_s: float, poll_s: float) -> None:
    """Take the lock, waiting up to `timeout_s` for its holder; one warning when waiting starts."""
    deadline = time.monotonic() + timeout_s
    warned = False
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        holder = _holder(handle)
        if time.monotonic() >= deadline:
            raise SiteError(
                f"another build ({holder}) still holds {LOCK_FILE} after {timeout_s:g} s",
                path=path,
                hint="wait for it to finish, or build into another --out directory",
            )
        if not warned:
            logger.warning("waiting for another build (%s) of %s to finish", holder, path.parent)
            warned = True
        time.sleep(min(poll_s, max(deadline - time.monotonic(), 0.0)))


def _holder(handle: IO[str]) -> str:
    """`pid N` as the holder wrote it, or `unknown process`."""
    handle.seek(0)
    pid = handle.read().strip()
    return f"pid {pid}" if pid.isdigit() else "unknown process"
