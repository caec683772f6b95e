"""Exclusive `flock` locks on files: the one mechanism behind "builds take turns" and "runs take turns".

The kernel drops a lock when its holder dies, so a killed process never leaves a stale lock; the
lock file itself may stay, harmlessly, and holds the pid of its last holder for messages.
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
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"{os.getpid()}\n")
            handle.flush()
            yield
        finally:
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
