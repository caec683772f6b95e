"""Every error reportgen raises on purpose; the CLI catches ReportgenError once and prints one line."""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "AnalysisError",
    "BundleError",
    "RecipeError",
    "ReportgenError",
    "RunError",
    "SiteError",
]


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
