"""Finding the bundles of a results directory: by walking its directories, never by a path read from a file.

A results directory may come from elsewhere (a CI shard, another host, another person), whole, with its
`.history/` and its history index. A directory is a bundle when it is a directory itself (a symbolic link may
lead anywhere: skipped with one warning), its name is a bundle name or a run id (`names`: skipped with one
warning otherwise) and its manifest.json is a regular file. Every stage that lists bundles or kept runs (the
site, the merge, the history index, `compare`) lists them here.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from reportgen.bundle.layout import HISTORY_DIR, MANIFEST_FILE
from reportgen.bundle.names import is_run_id, name_problem

__all__ = ["history_runs", "holds_manifest", "iter_bundles", "iter_kept_runs", "real_dir"]

logger = logging.getLogger(__name__)


def real_dir(path: Path) -> bool:
    """Whether `path` is a directory itself, not a symbolic link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def holds_manifest(path: Path) -> bool:
    """Whether directory `path` holds a manifest.json that is a regular file (not a link, not a FIFO)."""
    try:
        return stat.S_ISREG(os.lstat(path / MANIFEST_FILE).st_mode)
    except OSError:
        return False


def iter_bundles(results_dir: Path) -> Iterator[Path]:
    """Bundle directories under `results_dir` (those holding a manifest.json), sorted by name.

    Dot names (`.history`, temporaries) are not bundles. A directory that is a symbolic link (it may lead
    anywhere), or whose name is not a bundle name (`names.SAFE_NAME`, not a page of the site), is skipped with
    one warning.
    """
    if not results_dir.is_dir():
        return
    for path in sorted(results_dir.iterdir()):
        if path.name.startswith("."):
            continue
        if path.is_symlink():
            if path.is_dir():
                logger.warning("%s: skipped %r: a symbolic link to a directory, not followed", results_dir, path.name)
            continue
        if not real_dir(path) or not holds_manifest(path):
            continue
        if (problem := name_problem(path.name)) is not None:
            logger.warning("%s: skipped a directory: %s", results_dir, problem)
            continue
        yield path


def iter_kept_runs(results: Path) -> Iterator[tuple[str, Path]]:
    """(bundle name, bundle) of every run a results directory keeps: `<name>/` (the latest run) and
    `.history/<name>/<run id>/`.

    Each path is derived from the directories walked, never read from a file: a directory that is a symbolic
    link, or whose name is not a bundle name or a run id (`names`), is skipped with one warning.
    """
    for bundle in iter_bundles(results):
        yield bundle.name, bundle
    history = results / HISTORY_DIR
    if not real_dir(history):
        if history.is_symlink():
            logger.warning("%s: skipped: a symbolic link, not followed", history)
        return
    for home in sorted(history.iterdir()):
        if _walkable(home, name_problem(home.name)):
            for run in history_runs(results, home.name):
                yield home.name, run


def history_runs(results: Path, name: str) -> list[Path]:
    """The kept runs of bundle `name` in `results/.history/<name>/`, oldest first (a run id starts with its
    start time); links and directories whose name is not a run id are skipped with one warning each."""
    home = results / HISTORY_DIR / name
    if not real_dir(results / HISTORY_DIR) or not real_dir(home) or name_problem(name) is not None:
        return []
    return [
        run
        for run in sorted(home.iterdir())
        if _walkable(run, None if is_run_id(run.name) else f"{run.name!r} is not a run id") and holds_manifest(run)
    ]


def _walkable(path: Path, problem: str | None) -> bool:
    """Whether a kept-runs directory may be entered: a directory, not a link, with a safe name (warns if not)."""
    if path.is_symlink():
        logger.warning("%s: skipped %r: a symbolic link, not followed", path.parent, path.name)
        return False
    if not real_dir(path):
        return False
    if problem is not None:
        logger.warning("%s: skipped a directory: %s", path.parent, problem)
        return False
    return True
