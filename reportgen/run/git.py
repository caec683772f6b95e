"""The git commit of the code a recipe runs (the repository holding the recipe file), for the run's identity."""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["recipe_commit"]

_TIMEOUT_S = 10


def _git(directory: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-C", str(directory), *args],
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def recipe_commit(directory: Path) -> str | None:
    """`HEAD`'s commit of the repository holding `directory`, with `+dirty` when tracked files changed; None
    outside a repository (or without git)."""
    head = _git(directory, "rev-parse", "--verify", "HEAD")
    if not head:
        return None
    changed = _git(directory, "status", "--porcelain", "--untracked-files=no")
    return f"{head}+dirty" if changed else head
