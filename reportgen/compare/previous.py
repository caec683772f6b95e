"""Each bundle's comparison with the run before it, kept in the bundle (`comparison.json`).

The run before is the newest earlier run of the same bundle name that is comparable (same recipe file and
device model), else the newest earlier run; each side's step times pool the runs of its identity
(`reportgen.compare.pool`), so a spread between earlier runs of the same code reads as noise, not a regression.
A kept comparison stays valid while that choice does not change; a history merged from another machine, or a
run removed, makes the next build compare again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from reportgen.bundle import Comparison, RunRecord, bundle_lock, read_comparison, write_comparison
from reportgen.compare.diff import compare_bundles
from reportgen.errors import ReportgenError

__all__ = ["previous_of", "refresh_comparison", "refresh_comparisons"]

logger = logging.getLogger(__name__)


def previous_of(runs: Sequence[RunRecord], latest: RunRecord) -> RunRecord | None:
    """The run `latest` is compared with, among `runs` (one bundle name's kept runs, oldest first)."""
    earlier = [r for r in runs if r.path != latest.path and (r.started_at, r.path) <= (latest.started_at, latest.path)]
    comparable = [r for r in earlier if (r.recipe_sha256, r.device_name) == (latest.recipe_sha256, latest.device_name)]
    candidates = comparable or earlier
    return candidates[-1] if candidates else None


def _current(bundle: Path, previous: RunRecord | None) -> bool:
    """Whether the bundle's kept comparison is with `previous` (no comparison and no previous run count too)."""
    try:
        kept = read_comparison(bundle)
    except ReportgenError:
        return False
    if previous is None:
        return kept is None
    return kept is not None and kept.before.run == previous.path


def refresh_comparison(results: Path, runs: Sequence[RunRecord]) -> Comparison | None:
    """Bring the latest bundle's comparison up to date; returns it (None: no earlier run, or it failed).

    :param runs: the kept runs of one bundle name, oldest first; the latest is the one at `<results>/<name>`
    """
    latest = next((r for r in runs if r.path == r.name), None)
    if latest is None:
        return None
    bundle, previous = results / latest.name, previous_of(runs, latest)
    if _current(bundle, previous):
        return None if previous is None else read_comparison(bundle)
    comparison = None
    if previous is not None:
        try:
            comparison = compare_bundles(results / previous.path, bundle, runs=(previous.path, latest.path), pool=True)
        except ReportgenError as exc:
            logger.warning("%s not compared with %s: %s", latest.name, previous.path, exc)
    try:
        write_comparison(bundle, comparison)
    except ReportgenError as exc:  # e.g. a read-only results directory: the page shows no comparison
        logger.warning("%s: comparison not kept: %s", latest.name, exc)
    return comparison


def refresh_comparisons(results: Path, history: Mapping[str, Sequence[RunRecord]]) -> int:
    """Refresh every latest bundle's comparison whose run before changed; returns how many were written.
    A bundle a run is rewriting is left to that run."""
    written = 0
    for name, runs in history.items():
        latest = next((r for r in runs if r.path == name), None)
        if latest is None or _current(results / name, previous_of(runs, latest)):
            continue
        try:
            with bundle_lock(results, name, timeout_s=0):
                refresh_comparison(results, runs)
        except ReportgenError as exc:
            logger.warning("%s not compared: %s", name, exc)
            continue
        written += 1
    return written
