"""One build at a time per site: an exclusive `flock` on `<source dir>/.reportgen.lock`.

A second build into the same source directory waits until the first one ends (its pages and HTML
are then the second build's starting point), for at most `timeout_s`; after that it stops with a
SiteError naming the lock and the process holding it. The kernel drops the lock when its holder
dies, so a killed build never leaves a stale lock behind: the file itself may stay, harmlessly. A process
forked while the lock is held (a render worker) does not keep it (`reportgen.locks`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

from reportgen.errors import SiteError
from reportgen.locks import LockTimeoutError, hold_lock

__all__ = ["DEFAULT_LOCK_TIMEOUT_S", "LOCK_FILE", "build_lock"]

LOCK_FILE = ".reportgen.lock"
DEFAULT_LOCK_TIMEOUT_S = 3600.0
"""How long a build waits for another build of the same site (builds of large sites take minutes)."""

logger = logging.getLogger(__name__)


@contextlib.contextmanager
def build_lock(source_dir: Path, timeout_s: float = DEFAULT_LOCK_TIMEOUT_S, poll_s: float = 0.2) -> Iterator[None]:
    """Hold the site's build lock for the duration of the `with` block.

    :param source_dir: the Sphinx source directory (created if missing)
    :param timeout_s: how long to wait for another build to finish
    :param poll_s: how often to retry while waiting
    :raises SiteError: when another build still holds the lock after `timeout_s`, or the lock cannot be made
    """
    path = source_dir / LOCK_FILE
    with contextlib.ExitStack() as stack:
        try:
            source_dir.mkdir(parents=True, exist_ok=True)
            stack.enter_context(
                hold_lock(path, timeout_s=timeout_s, poll_s=poll_s, on_wait=lambda holder: _waiting(holder, path))
            )
        except LockTimeoutError as exc:
            raise SiteError(
                f"another build ({exc.holder}) still holds {LOCK_FILE} after {timeout_s:g} s",
                path=path,
                hint="wait for it to finish, or build into another --out directory",
            ) from None
        except OSError as exc:
            raise SiteError(
                f"cannot take the build lock: {exc.strerror or exc}",
                path=exc.filename or path,
                hint="check that the --out directory is writable",
            ) from None
        yield


def _waiting(holder: str, path: Path) -> None:
    logger.warning("waiting for another build (%s) of %s to finish", holder, path.parent)
