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

from reportgen.bundle import (
    HISTORY_DIR,
    MANIFEST_FILE,
    Interval,
    Manifest,
    RunStatus,
    TimingSummary,
    read_manifest,
)
from reportgen.errors import ReportgenError

__all__ = ["POOL_MAX", "Headline", "Pooled", "headline", "pools"]

POOL_MAX = 5
"""Runs pooled on a side at most (the newest): the envelope of many runs' intervals only grows."""


def _identity(m: Manifest) -> tuple[object, ...]:
    """What two runs must share to be pooled: the same code, recipe, software and device model."""
    env = m.environment
    versions = env.versions if env else None
    return (
        m.name,
        m.recipe_sha256,
        env.device_name if env else None,
        versions.torch if versions else None,
        versions.triton if versions else None,
        m.git_commit,
    )


def _home(bundle: Path) -> tuple[Path, str]:
    """(results directory, bundle name) of a latest run `<results>/<name>` or a kept one
    `<results>/.history/<name>/<run id>`."""
    if bundle.parent.parent.name == HISTORY_DIR:
        return bundle.parent.parent.parent, bundle.parent.name
    return bundle.parent, bundle.name


def _kept_beside(bundle: Path) -> list[Path]:
    """Every run of `bundle`'s name in its results directory, newest first: `<name>/`, then `.history/<name>/*/`
    by run id (which starts with the run's start time), `bundle` itself included."""
    results, name = _home(bundle)
    runs = [results / name] if (results / name / MANIFEST_FILE).is_file() else []
    kept = sorted((p.parent for p in (results / HISTORY_DIR / name).glob(f"*/{MANIFEST_FILE}")), reverse=True)
    return runs + kept


def _pool(anchor: Path, after_start: str | None) -> list[Path]:
    """`anchor`, then the newest ok runs of its identity beside it that started no later than it (and after
    `after_start`); at most `POOL_MAX` in all. Manifests are read newest first until the pool is full."""
    try:
        own = read_manifest(anchor)
    except ReportgenError:
        return [anchor]
    if own.status is not RunStatus.ok:
        return [anchor]
    key, start, found = _identity(own), own.started_at or "", [anchor]
    for path in _kept_beside(anchor):
        if len(found) == POOL_MAX:
            break
        if path.resolve() == anchor.resolve():
            continue
        try:
            m = read_manifest(path)
        except ReportgenError:  # an unreadable run is left out of the pool, never trusted
            continue
        began = m.started_at or ""
        if (
            m.status is RunStatus.ok
            and _identity(m) == key
            and began <= start
            and (after_start is None or began > after_start)
        ):
            found.append(path)
    return found


def pools(before: Path, after: Path) -> tuple[list[Path], list[Path]]:
    """The runs pooled on each side (each side's own bundle first).

    When both bundles are runs of one results directory, the `after` side takes only runs newer than `before`,
    so the two sides never share a run.
    """
    (dir_a, name_a), (dir_b, name_b) = _home(before), _home(after)
    same_dir = name_a == name_b and dir_a.resolve() == dir_b.resolve()
    start = None
    if same_dir:
        try:
            start = read_manifest(before).started_at or ""
        except ReportgenError:
            start = None
    return _pool(before, None), _pool(after, start)


@dataclass(frozen=True)
class Pooled:
    """One step-time figure of a side: the median over its runs and the interval that covers them."""

    value: float | None
    interval: tuple[float, float] | None


@dataclass(frozen=True)
class Headline:
    """A side's step-time figures, over the runs pooled on it."""

    runs: int
    eager: Pooled
    compiled: Pooled
    speedup: Pooled
    host_probe_ms: float | None


def _ci(interval: Interval | None) -> tuple[float, float] | None:
    return (interval.low, interval.high) if interval is not None else None


def _combine(values: Sequence[float | None], intervals: Sequence[tuple[float, float] | None]) -> Pooled:
    """Median of the runs' values; the envelope of their intervals (None unless every run has one)."""
    known = [v for v in values if v is not None]
    if not known:
        return Pooled(None, None)
    value = known[0] if len(known) == 1 else statistics.median(known)
    if len(known) != len(values) or any(i is None for i in intervals):
        return Pooled(value, None)
    lows, highs = [i[0] for i in intervals if i], [i[1] for i in intervals if i]
    return Pooled(value, (min(lows), max(highs)))


def headline(runs: Sequence[tuple[Manifest, TimingSummary]]) -> Headline:
    """A side's figures from its runs, each a manifest and its timing summary (intervals)."""
    rows = []
    for manifest, timing in runs:
        m = manifest.metrics
        rows.append(
            (
                (m.eager.median_ms if m.eager else None, _ci(timing.eager_median_ci_ms)),
                (m.compiled.median_ms if m.compiled else None, _ci(timing.compiled_median_ci_ms)),
                (m.speedup, _ci(timing.speedup_ci)),
                statistics.median(m.host_probe_ms) if m.host_probe_ms else None,
            )
        )
    probes = [r[3] for r in rows if r[3] is not None]
    return Headline(
        runs=len(rows),
        eager=_combine([r[0][0] for r in rows], [r[0][1] for r in rows]),
        compiled=_combine([r[1][0] for r in rows], [r[1][1] for r in rows]),
        speedup=_combine([r[2][0] for r in rows], [r[2][1] for r in rows]),
        host_probe_ms=statistics.median(probes) if probes else None,
    )
