"""Busy-time arithmetic: interval union, idle gaps, gap histogram, per-step busy time, timeline strip.

Pure functions over numpy arrays (or sequences) of microsecond timestamps; intervals are [start, end).
Intervals that overlap or touch merge, so concurrent streams are never counted twice.

Definitions used by the analysis (see `step_analyses`):

- a step's **window** is `[start, end]`, where end is already extended to its last kernel's end;
- **busy** = the union of the step's kernel intervals, clipped to the window;
- **idle** = window length - busy = the sum of the window's **gaps** (maximal uncovered stretches, the
  leading one before the first kernel and the trailing one after the last kernel included);
- the **timeline** strip is one representative step's merged busy intervals (the step of median wall
  time), relative to its window start, coarsened to at most `MAX_TIMELINE_INTERVALS` by closing the
  shortest gaps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from reportgen.bundle import IdleHistogram, StepAnalysis

__all__ = [
    "IDLE_EDGES_US",
    "MAX_TIMELINE_INTERVALS",
    "OPEN_END_US",
    "StepWindow",
    "coarsen",
    "gaps_us",
    "idle_histogram",
    "merge_intervals",
    "step_analyses",
    "step_windows",
    "union_us",
    "whole_trace_window",
]

FloatArray = npt.NDArray[np.float64]
ArrayLike = FloatArray | Sequence[float]

OPEN_END_US = 1e12
"""The histogram's last edge: stands for +inf (JSON has no infinity)."""

IDLE_EDGES_US: tuple[float, ...] = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, OPEN_END_US)
"""Log-spaced gap-length bin edges, in us."""

MAX_TIMELINE_INTERVALS = 5000
"""Cap on the timeline strip's intervals."""


@dataclass(frozen=True)
class StepWindow:
    """One step's window and the intervals of the kernels that belong to it.

    :param step: N of `ProfilerStep#N`, -1 for a whole trace without step markers
    :param start_us: window start
    :param end_us: window end (already extended to the last kernel's end)
    :param starts_us: kernel starts
    :param ends_us: kernel ends
    :param kernel_time_us: sum of the kernels' durations (or self times on CPU)
    """

    step: int
    start_us: float
    end_us: float
    starts_us: FloatArray
    ends_us: FloatArray
    kernel_time_us: float


def merge_intervals(starts: ArrayLike, ends: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """The union of intervals as sorted, disjoint (start, end) arrays; overlapping or touching ones merge."""
    s = np.asarray(starts, dtype=np.float64)
    e = np.asarray(ends, dtype=np.float64)
    if s.size == 0:
        return np.empty(0), np.empty(0)
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    first = np.flatnonzero(np.concatenate(([True], s[1:] > reach[:-1])))
    last = np.concatenate((first[1:] - 1, [s.size - 1]))
    return s[first], reach[last]


def union_us(starts: ArrayLike, ends: ArrayLike) -> float:
    """Total length covered by at least one interval."""
    merged_starts, merged_ends = merge_intervals(starts, ends)
    return float((merged_ends - merged_starts).sum())


def gaps_us(merged_starts: FloatArray, merged_ends: FloatArray, start: float, end: float) -> FloatArray:
    """Lengths of the uncovered stretches of the window [start, end], given merged intervals.

    Leading and trailing stretches count; intervals are clipped to the window.
    """
    s = np.clip(merged_starts, start, end)
    e = np.clip(merged_ends, start, end)
    keep = e > s
    s, e = s[keep], e[keep]
    gaps = np.concatenate((s, [end])) - np.concatenate(([start], e))
    return gaps[gaps > 0]


def idle_histogram(gaps: ArrayLike, edges_us: Sequence[float] = IDLE_EDGES_US) -> IdleHistogram:
    """Gap lengths binned by `edges_us` (lower edge inclusive)."""
    values = np.asarray(gaps, dtype=np.float64)
    counts, _ = np.histogram(values, bins=np.asarray(edges_us, dtype=np.float64))
    return IdleHistogram(
        edges_us=[float(edge) for edge in edges_us],
        counts=[int(count) for count in counts],
        total_idle_us=float(values.sum()),
    )


def coarsen(
    merged_starts: FloatArray, merged_ends: FloatArray, max_intervals: int = MAX_TIMELINE_INTERVALS
) -> tuple[FloatArray, FloatArray]:
    """Close the shortest gaps between merged intervals until at most `max_intervals` remain."""
    excess = merged_starts.size - max_intervals
    if excess <= 0:
        return merged_starts, merged_ends
    gaps = merged_starts[1:] - merged_ends[:-1]
    threshold = np.partition(gaps, excess - 1)[excess - 1]
    open_gap = gaps > threshold
    return (
        merged_starts[np.concatenate(([True], open_gap))],
        merged_ends[np.concatenate((open_gap, [True]))],
    )


def step_windows(
    steps: Sequence[tuple[int, float, float]],
    starts: FloatArray,
    ends: FloatArray,
    times: FloatArray,
    step_ids: npt.NDArray[np.int64],
) -> list[StepWindow]:
    """Group kernels into step windows; each window ends at max(step end, its last kernel's end).

    :param steps: (N, start, end) of each step span, in order
    :param starts: kernel starts
    :param ends: kernel ends
    :param times: kernel durations (or self times)
    :param step_ids: each kernel's position in `steps` (kernels with another value are left out)
    """
    order = np.argsort(step_ids, kind="stable")
    bounds = np.searchsorted(step_ids[order], np.arange(len(steps) + 1))
    windows: list[StepWindow] = []
    for k, (number, start, end) in enumerate(steps):
        members = order[bounds[k] : bounds[k + 1]]
        last = max(end, float(ends[members].max())) if members.size else end
        windows.append(StepWindow(number, start, last, starts[members], ends[members], float(times[members].sum())))
    return windows


def whole_trace_window(
    first_us: float, last_us: float, starts: FloatArray, ends: FloatArray, times: FloatArray
) -> StepWindow:
    """The whole trace as one step (-1): from min(first_us, first kernel start) to max(last_us, last end)."""
    first = min(first_us, float(starts.min()) if starts.size else math.inf)
    last = max(last_us, float(ends.max()) if ends.size else -math.inf)
    if first > last:
        first = last = 0.0
    return StepWindow(-1, first, last, starts, ends, float(times.sum()))


def step_analyses(
    windows: Sequence[StepWindow],
) -> tuple[list[StepAnalysis], IdleHistogram | None, list[tuple[float, float]]]:
    """Per-step busy and idle time, the histogram of all steps' gaps, and the timeline strip.

    :param windows: the steps, in order
    :returns: one `StepAnalysis` per window, the idle histogram (None without windows), and the
        representative step's merged busy intervals relative to its window start
    """
    steps: list[StepAnalysis] = []
    all_gaps: list[FloatArray] = []
    merged: list[tuple[FloatArray, FloatArray]] = []
    for window in windows:
        starts, ends = merge_intervals(
            np.clip(window.starts_us, window.start_us, window.end_us),
            np.clip(window.ends_us, window.start_us, window.end_us),
        )
        gaps = gaps_us(starts, ends, window.start_us, window.end_us)
        wall_us = window.end_us - window.start_us
        busy_us = float((ends - starts).sum())
        steps.append(
            StepAnalysis(
                step=window.step,
                wall_us=wall_us,
                kernel_time_us=window.kernel_time_us,
                busy_union_us=busy_us,
                busy_percent=100.0 * busy_us / wall_us if wall_us > 0 else 0.0,
                idle_us=float(gaps.sum()),
                gap_count=int(gaps.size),
            )
        )
        all_gaps.append(gaps)
        merged.append((starts, ends))
    if not windows:
        return steps, None, []
    histogram = idle_histogram(np.concatenate(all_gaps))
    representative = _median_index([step.wall_us for step in steps])
    starts, ends = coarsen(*merged[representative])
    origin = windows[representative].start_us
    timeline = [(float(s - origin), float(e - origin)) for s, e in zip(starts, ends, strict=True)]
    return steps, histogram, timeline


def _median_index(values: Sequence[float]) -> int:
    """Index of the (lower) median value."""
    order = sorted(range(len(values)), key=lambda index: (values[index], index))
    return order[(len(order) - 1) // 2]
