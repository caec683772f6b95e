"""Runs take turns: one writer at a time per bundle identity, an `flock` in the results directory.

The lock is named after the bundle (`<results>/.locks/<bundle name>.lock`), not after the directory a
run writes into, so it stays the identity's lock when runs are kept in directories of their own. It
covers everything a run of that recipe and variant touches: its bundle (temporaries, swap, analysis)
and its kept Inductor cache. A second run waits for the first and then replaces its bundle.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

from reportgen.bundle.layout import LOCKS_DIR
from reportgen.errors import BundleError, os_failure
from reportgen.locks import LockTimeoutError, hold_lock

__all__ = ["bundle_lock", "bundle_lock_path"]

logger = logging.getLogger(__name__)


def bundle_lock_path(results_dir: Path, name: str) -> Path:
    """The lock file of bundle `name` in `results_dir`."""
    return results_dir / LOCKS_DIR / f"{name}.lock"


@contextlib.contextmanager
def bundle_lock(results_dir: Path, name: str, timeout_s: float | None = None) -> Iterator[None]:
    """Hold the lock of bundle `name` for the `with` block, waiting for another run of it first.

    :param timeout_s: how long to wait; None waits until the other run ends (it has a timeout of its own)
    :raises BundleError: when the lock cannot be made, or is still held after `timeout_s`
    """
    path = bundle_lock_path(results_dir, name)
    with contextlib.ExitStack() as stack:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            stack.enter_context(hold_lock(path, timeout_s=timeout_s, on_wait=lambda holder: _waiting(holder, name)))
        except LockTimeoutError as exc:
            raise BundleError(
                f"another run of {name} ({exc.holder}) is still writing it",
                path=path,
                hint="wait for it to finish, or write into another results directory",
            ) from None
        except OSError as exc:
            raise os_failure(exc, BundleError, f"lock bundle {name!r}", path) from exc
        yield


def _waiting(holder: str, name: str) -> None:
    logger.warning("waiting for another run of %s (%s) to finish", name, holder)
