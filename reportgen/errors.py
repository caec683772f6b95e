"""Every error reportgen raises on purpose; the CLI catches ReportgenError once and prints one line."""

from __future__ import annotations

import errno
from pathlib import Path

__all__ = [
    "AnalysisError",
    "BundleError",
    "RecipeError",
    "ReportgenError",
    "RunError",
    "SiteError",
    "os_failure",
]

_OS_HINTS = {
    errno.ENOSPC: "free space on that disk, or write somewhere else",
    errno.EDQUOT: "free space within your quota, or write somewhere else",
    errno.EACCES: "check its permissions, or write somewhere else",
    errno.EPERM: "check its permissions, or write somewhere else",
    errno.EROFS: "that file system is read-only; write somewhere else",
    errno.ENOENT: "create the missing directory, or check the path",
    errno.ENOTDIR: "a part of that path is a file, not a directory; check the path",
    errno.EISDIR: "that path is a directory; check the path",
    errno.EEXIST: "a file stands where a directory should be; check the path",
    errno.ENAMETOOLONG: "use a shorter path",
}
"""What to do about the OS errors a run or build meets on the way to disk."""


class ReportgenError(Exception):
    """Base class: a message for the user, optionally located in a file.

    :param message: what went wrong and what was expected
    :param path: the file at fault
    :param line: 1-based line
    :param column: 1-based column
    :param hint: what to do next
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.column = column
        self.hint = hint

    @property
    def location(self) -> str:
        """`file:line:col`, as much of it as is known."""
        parts = [self.path] if self.path else []
        if self.path and self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}" if self.location else self.message
        return f"{text} ({self.hint})" if self.hint else text


class RecipeError(ReportgenError):
    """A recipe file is unreadable or invalid."""


class RunError(ReportgenError):
    """A run could not be started (a failing workload is data, not this error)."""


class BundleError(ReportgenError):
    """A bundle on disk is missing, corrupt or of an unknown schema."""


class AnalysisError(ReportgenError):
    """A trace or compiled module could not be analysed."""


class SiteError(ReportgenError):
    """The site could not be rendered or built."""


def os_failure(exc: OSError, kind: type[ReportgenError], doing: str, path: str | Path | None = None) -> ReportgenError:
    """One located error for an OS-level failure: `<file>: cannot <doing>: <reason> (<what to do>)`.

    :param exc: the failure; its file name, when it has one, locates the error
    :param kind: the error class to raise (the stage at fault)
    :param doing: what was being done, e.g. ``write bundle 'x'``
    :param path: where to locate the error when `exc` names no file
    """
    where = exc.filename if isinstance(exc.filename, (str, Path)) else path
    reason = exc.strerror or str(exc)
    hint = _OS_HINTS.get(exc.errno or 0, "check the path and try again")
    return kind(f"cannot {doing}: {reason}", path=where, hint=hint)
