"""The runs of a matrix (recipe × variant), a shard of them, and the order they start in."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from reportgen.bundle import HISTORY_INDEX_FILE, RunStatus, iter_bundles, read_manifest
from reportgen.errors import ReportgenError, RunError
from reportgen.recipe import Recipe, Variant

__all__ = ["MatrixRun", "Shard", "expected_durations", "longest_first", "parse_shard", "shard_runs"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MatrixRun:
    """One run of a matrix: a recipe file and one of its variants (None: the recipe as written)."""

    recipe_path: Path
    recipe: Recipe
    variant: Variant | None

    @property
    def name(self) -> str:
        """The run's bundle name, `<recipe>` or `<recipe>--<variant>`: its identity in a matrix."""
        return self.recipe.bundle_name(self.variant)


@dataclass(frozen=True)
class Shard:
    """Part `index` (1-based) of `count` of a matrix."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """`i/N` → Shard(i, N).

    :raises RunError: unless 1 <= i <= N
    """
    index, _, count = text.partition("/")
    try:
        shard = Shard(int(index), int(count))
    except ValueError:
        shard = Shard(0, 0)
    if not 1 <= shard.index <= shard.count:
        raise RunError(f"--shard expects i/N with 1 <= i <= N (e.g. 1/2), got {text!r}")
    return shard


def shard_runs(runs: Sequence[MatrixRun], shard: Shard | None) -> list[MatrixRun]:
    """The runs of `shard`: every N-th run, counting from the i-th, of the runs sorted by bundle name.

    Sorting by name makes a shard depend only on the set of runs, not on the order the shell listed the
    recipe files in, nor on anything of the host (its history, its GPUs): every host given the same recipe
    list runs its own part, the parts are disjoint and together whole, and their sizes differ by at most one.
    """
    if shard is None:
        return list(runs)
    ordered = sorted(runs, key=lambda run: (run.name, str(run.recipe_path)))
    return [run for position, run in enumerate(ordered) if position % shard.count == shard.index - 1]


def expected_durations(results_dir: Path) -> dict[str, float]:
    """Each bundle name's latest successful wall time: from `results_dir`'s history index when it has one
    (`reportgen build` and `reportgen history` keep it), else from its latest bundles' manifests. Planning
    creates no file: a run into a fresh or full results directory writes only its bundles."""
    from reportgen.history import HistoryIndex

    durations: dict[str, float] = {}
    if (results_dir / HISTORY_INDEX_FILE).is_file():
        try:
            with HistoryIndex(results_dir) as index:
                index.update()
                records = index.runs()  # oldest first: the latest run wins
        except (sqlite3.Error, OSError, ReportgenError) as exc:
            logger.warning("history index not read, planning from the latest bundles: %s", exc)
        else:
            return {r.name: r.wall_time_s for r in records if r.status == "ok" and r.wall_time_s is not None}
    for bundle in iter_bundles(results_dir):
        try:
            manifest = read_manifest(bundle)
        except ReportgenError:
            continue
        if manifest.status is RunStatus.ok:
            durations[manifest.name] = manifest.wall_time_s
    return durations


def longest_first(runs: Sequence[MatrixRun], durations: Mapping[str, float]) -> list[MatrixRun]:
    """The runs in the order they should start: those never run before first (their length is unknown, and a
    long one started last would leave the other GPUs idle at the end), then the others by their last wall time,
    longest first."""
    unknown = [run for run in runs if run.name not in durations]
    known = sorted((run for run in runs if run.name in durations), key=lambda run: -durations[run.name])
    return unknown + known
