"""Exclusive `flock` locks on files: the one mechanism behind "builds take turns" and "runs take turns".

The kernel drops a lock when its holder dies, so a killed process never leaves a stale lock; the
lock file itself may stay, harmlessly, and holds the pid of its last holder for messages. A process forked
while a lock is held (a render worker) does not keep it: its copy of the descriptor is pointed at /dev/null,
so the lock goes with the process that took it even if a worker outlives it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

__all__ = ["LockTimeoutError", "hold_lock"]

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


class LockTimeoutError(Exception):
    """The lock was still held by `holder` (``pid N`` or ``unknown process``) when the wait ended."""

    def __init__(self, holder: str) -> None:
        super().__init__(holder)
        self.holder = holder


@contextlib.contextmanager
def hold_lock(
    path: Path,
    *,
    timeout_s: float | None,
    poll_s: float = 0.2,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing) for the `with` block.

    :param timeout_s: how long to wait for another holder; None waits as long as it takes
    :param on_wait: called once, with the holder, when waiting starts
    :raises LockTimeoutError: when the lock is still held after `timeout_s`
    :raises OSError: when the lock file cannot be created or opened
    """
    with path.open("a+", encoding="utf-8") as handle:
        _acquire(handle, timeout_s, poll_s, on_wait)
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


def _acquire(handle: IO[str], timeout_s: float | None, poll_s: float, on_wait: Callable[[str], None] | None) -> None:
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    waiting = False
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        holder = _holder(handle)
        if deadline is not None and time.monotonic() >= deadline:
            raise LockTimeoutError(holder)
        if not waiting and on_wait is not None:
            on_wait(holder)
        waiting = True
        left = poll_s if deadline is None else max(deadline - time.monotonic(), 0.0)
        time.sleep(min(poll_s, left))


def _holder(handle: IO[str]) -> str:
    """`pid N` as the holder wrote it, or `unknown process`."""
    handle.seek(0)
    pid = handle.read().strip()
    return f"pid {pid}" if pid.isdigit() else "unknown process"
