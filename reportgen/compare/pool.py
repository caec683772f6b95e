"""Several runs on one side of a comparison: the variation between processes that one run's intervals miss.

A run's 95 % intervals cover the noise *within* its process. Two processes of the same code on the same GPU can
differ by more (an H100, torch 2.11, the transformer recipe twice: compiled 8.54 ms [8.42–8.76] then 9.33 ms
[9.01–9.73], device time per step −0.9 %). So each side of a comparison pools the runs of its identity kept
beside it (same bundle name, recipe file, device model, torch, triton and git commit; the newest `POOL_MAX`):
its median is the median of the runs' medians and its interval the envelope of their intervals, which covers
the spread between the runs. One run per side is judged as before, and the verdict says so.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from reportgen.bundle import MANIFEST_FILE, Interval, Manifest, RunRecord, RunStatus, TimingSummary, read_manifest
from reportgen.errors import ReportgenError
from reportgen.history import bundle_home, kept_runs_of

__all__ = ["POOL_MAX", "Headline", "Pooled", "headline", "pooled_runs", "pools"]

POOL_MAX = 5
"""Runs pooled on a side at most (the newest): the envelope of many runs' intervals only grows."""

Run = tuple[Path, Manifest]
"""A run and its manifest."""


def _side(anchor: Run, after_start: str | None) -> list[Run]:
    """The newest ok runs of `anchor`'s identity beside it (its latest run and kept runs) that started no later
    than it (and after `after_start`), `anchor` not included; at most `POOL_MAX - 1`. Manifests are read newest
    first until the pool is full."""
    path, manifest = anchor
    own = RunRecord.from_manifest(manifest, str(path))
    if manifest.status is not RunStatus.ok:
        return []
    results, name = bundle_home(path)
    latest = [results / name] if (results / name / MANIFEST_FILE).is_file() else []
    found: list[Run] = []
    for candidate in latest + kept_runs_of(path):
        if len(found) == POOL_MAX - 1:
            break
        if candidate.resolve() == path.resolve():
            continue
        try:
            other = read_manifest(candidate)
        except ReportgenError:  # an unreadable run is left out of the pool, never trusted
            continue
        began = other.started_at or ""
        if (
            other.status is RunStatus.ok
            and RunRecord.from_manifest(other, str(candidate)).identity == own.identity
            and began <= (own.started_at or "")
            and (after_start is None or began > after_start)
        ):
            found.append((candidate, other))
    return found


def pooled_runs(before: Run, after: Run) -> tuple[list[Run], list[Run]]:
    """The other runs pooled with each side's own run.

    When both are runs of one results directory, the `after` side takes only runs newer than `before`, so the
    two sides never share a run.
    """
    (dir_a, name_a), (dir_b, name_b) = bundle_home(before[0]), bundle_home(after[0])
    same_dir = name_a == name_b and dir_a.resolve() == dir_b.resolve()
    return _side(before, None), _side(after, (before[1].started_at or "") if same_dir else None)


def pools(before: Path, after: Path) -> tuple[list[Path], list[Path]]:
    """The runs pooled on each side, each side's own bundle first (one whose manifest cannot be read pools
    nothing)."""
    try:
        anchors = (before, read_manifest(before)), (after, read_manifest(after))
    except ReportgenError:
        return [before], [after]
    sides = pooled_runs(*anchors)
    return [before, *(p for p, _ in sides[0])], [after, *(p for p, _ in sides[1])]


@dataclass(frozen=True)
class Pooled:
    """One step-time figure of a side: the median over its runs and the interval that covers them."""

    value: float | None
    interval: tuple[float, float] | None


@dataclass(frozen=True)
class Headline:
    """A side's step-time figures, over the runs pooled on it."""

    eager: Pooled
    compiled: Pooled
    speedup: Pooled
    host_probe_ms: float | None


def _combine(figures: Sequence[tuple[float | None, Interval | None]]) -> Pooled:
    """Median of the runs' values; the envelope of their intervals (None unless every run has both)."""
    known = [value for value, _ in figures if value is not None]
    if not known:
        return Pooled(None, None)
    intervals = [interval for _, interval in figures if interval is not None]
    if len(known) != len(figures) or len(intervals) != len(figures):
        return Pooled(statistics.median(known), None)
    return Pooled(statistics.median(known), (min(i.low for i in intervals), max(i.high for i in intervals)))


def headline(runs: Sequence[tuple[RunRecord, TimingSummary]]) -> Headline:
    """A side's figures from its runs: each run's record (medians, speedup, host probe) and timing summary
    (their intervals)."""
    probes = [record.host_probe_ms for record, _ in runs if record.host_probe_ms is not None]
    return Headline(
        eager=_combine([(r.eager_ms, t.eager_median_ci_ms) for r, t in runs]),
        compiled=_combine([(r.compiled_ms, t.compiled_median_ci_ms) for r, t in runs]),
        speedup=_combine([(r.speedup, t.speedup_ci) for r, t in runs]),
        host_probe_ms=statistics.median(probes) if probes else None,
    )
