"""Busy-time arithmetic: interval union, idle gaps, gap histogram, per-step busy time, timeline strip.

Pure functions over numpy arrays (or sequences) of microsecond timestamps; intervals are [start, end).
Intervals that overlap or touch merge, so concurrent streams are never counted twice.

Definitions used by the analysis (see `step_windows` and `step_analyses`):

- a kernel belongs to the step whose `ProfilerStep#N` CPU span its launch lies in (its **kernel time**);
- step k's **window** runs from the end of window k-1 (the first: its span start, or its first kernel's
  start if earlier) to max(step k's span end, the end of the last kernel launched in step k), never
  before its own start. A step whose span starts after window k-1 ends starts at its span, so the time
  between two spans apart lies in no window. Windows never overlap: when the GPU lags the CPU (steps
  launched back to back without synchronising) window k ends at its last kernel's end and window k+1
  starts there, and `prof.step()`'s back-to-back spans make the windows tile the steps' time;
- without step markers the **whole trace** is one window (step -1), from the first CPU event or kernel to
  the last end; its CPU-only time (compilation, warm-up) counts as idle;
- **busy** = the union of all device work inside the window, clipped to it, whichever step launched it:
  the GPU still running step k-1's kernels keeps step k busy;
- **idle** = window length - busy = the sum of the window's **gaps** (maximal uncovered stretches, the
  leading one before the first kernel and the trailing one after the last kernel included); the
  histogram takes gaps over adjoining windows together, so a gap across a step boundary counts once;
- a window is **doubtful** (a `note`) when its kernels span under `DOUBTFUL_COVERAGE` of it (mostly
  CPU-only time, ~100 % idle), when it is empty, or, for the whole trace, when the CPU-only time before
  the first kernel or after the last is longer than the kernels' span;
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
    "DOUBTFUL_COVERAGE",
    "IDLE_EDGES_US",
    "MAX_TIMELINE_INTERVALS",
    "OPEN_END_US",
    "StepWindow",
    "clip_intervals",
    "coarsen",
    "gaps_us",
    "idle_histogram",
    "merge_intervals",
    "step_analyses",
    "step_windows",
    "union_us",
    "whole_trace_window",
    "window_note",
]

FloatArray = npt.NDArray[np.float64]
ArrayLike = FloatArray | Sequence[float]

OPEN_END_US = 1e12
"""The histogram's last edge: stands for +inf (JSON has no infinity)."""

IDLE_EDGES_US: tuple[float, ...] = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, OPEN_END_US)
"""Log-spaced gap-length bin edges, in us."""

MAX_TIMELINE_INTERVALS = 5000
"""Cap on the timeline strip's intervals."""

DOUBTFUL_COVERAGE = 0.10
"""A window whose kernels span less than this fraction of it is doubtful (mostly CPU-only time)."""


@dataclass(frozen=True)
class StepWindow:
    """One step's window and the intervals of the kernels launched in it.

    :param step: N of `ProfilerStep#N`, -1 for a whole trace without step markers
    :param start_us: window start
    :param end_us: window end (already extended to the last kernel's end)
    :param starts_us: starts of the kernels launched in the step
    :param ends_us: their ends
    :param kernel_time_us: sum of the kernels' durations (or self times on CPU)
    :param whole_trace: the window is the whole trace (no step markers)
    """

    step: int
    start_us: float
    end_us: float
    starts_us: FloatArray
    ends_us: FloatArray
    kernel_time_us: float
    whole_trace: bool = False


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
    """Group kernels by the step that launched them into windows that never overlap (module docstring).

    :param steps: (N, start, end) of each step span, in order of start
    :param starts: kernel starts
    :param ends: kernel ends
    :param times: kernel durations (or self times)
    :param step_ids: each kernel's position in `steps` (kernels with another value are left out)
    """
    order = np.argsort(step_ids, kind="stable")
    bounds = np.searchsorted(step_ids[order], np.arange(len(steps) + 1))
    windows: list[StepWindow] = []
    previous_end = -math.inf
    for k, (number, span_start, span_end) in enumerate(steps):
        members = order[bounds[k] : bounds[k + 1]]
        first = min(span_start, float(starts[members].min())) if members.size else span_start
        last = max(span_end, float(ends[members].max())) if members.size else span_end
        start = max(previous_end, first)
        end = max(last, start)
        windows.append(StepWindow(number, start, end, starts[members], ends[members], float(times[members].sum())))
        previous_end = end
    return windows


def whole_trace_window(
    first_us: float, last_us: float, starts: FloatArray, ends: FloatArray, times: FloatArray
) -> StepWindow:
    """The whole trace as one step (-1): from min(first_us, first kernel start) to max(last_us, last end)."""
    first = min(first_us, float(starts.min()) if starts.size else math.inf)
    last = max(last_us, float(ends.max()) if ends.size else -math.inf)
    if first > last:
        first = last = 0.0
    return StepWindow(-1, first, last, starts, ends, float(times.sum()), whole_trace=True)


def step_analyses(
    windows: Sequence[StepWindow], starts: ArrayLike | None = None, ends: ArrayLike | None = None
) -> tuple[list[StepAnalysis], IdleHistogram | None, list[tuple[float, float]]]:
    """Per-step busy and idle time, the histogram of all steps' gaps, and the timeline strip.

    :param windows: the steps, in order; they must not overlap
    :param starts: starts of all device work, whichever step launched it (default: the windows' kernels)
    :param ends: its ends
    :returns: one `StepAnalysis` per window, the idle histogram (None without windows), and the
        representative step's merged busy intervals relative to its window start
    """
    if starts is None or ends is None:
        starts = np.concatenate([np.empty(0), *(w.starts_us for w in windows)])
        ends = np.concatenate([np.empty(0), *(w.ends_us for w in windows)])
    all_starts, all_ends = merge_intervals(starts, ends)
    steps: list[StepAnalysis] = []
    clipped: list[tuple[FloatArray, FloatArray]] = []
    for window in windows:
        busy = clip_intervals(all_starts, all_ends, window.start_us, window.end_us)
        steps.append(_step_analysis(window, *busy))
        clipped.append(busy)
    if not windows:
        return steps, None, []
    histogram = idle_histogram(_run_gaps(windows, all_starts, all_ends))
    representative = _median_index([step.wall_us for step in steps])
    origin = windows[representative].start_us
    timeline = [(float(s - origin), float(e - origin)) for s, e in zip(*coarsen(*clipped[representative]), strict=True)]
    return steps, histogram, timeline


def clip_intervals(
    merged_starts: FloatArray, merged_ends: FloatArray, start: float, end: float
) -> tuple[FloatArray, FloatArray]:
    """The merged intervals that overlap [start, end], clipped to it (still sorted and disjoint)."""
    lo = int(np.searchsorted(merged_ends, start, side="right"))
    hi = int(np.searchsorted(merged_starts, end, side="left"))
    s = np.clip(merged_starts[lo:hi], start, end)
    e = np.clip(merged_ends[lo:hi], start, end)
    keep = e > s
    return s[keep], e[keep]


def _step_analysis(window: StepWindow, starts: FloatArray, ends: FloatArray) -> StepAnalysis:
    """One window's numbers from its busy intervals (merged and clipped to it)."""
    gaps = gaps_us(starts, ends, window.start_us, window.end_us)
    wall_us = window.end_us - window.start_us
    busy_us = float((ends - starts).sum())
    return StepAnalysis(
        step=window.step,
        window="whole trace" if window.whole_trace else "step",
        window_start_us=window.start_us,
        wall_us=wall_us,
        kernel_time_us=window.kernel_time_us,
        busy_union_us=busy_us,
        busy_percent=100.0 * busy_us / wall_us if wall_us > 0 else 0.0,
        idle_us=float(gaps.sum()),
        gap_count=int(gaps.size),
        note=window_note(window, starts, ends),
    )


def window_note(window: StepWindow, starts: FloatArray, ends: FloatArray) -> str | None:
    """Why a window's busy % is doubtful (plain text), or None; `starts`/`ends`: its clipped busy intervals."""
    wall_us = window.end_us - window.start_us
    subject = "The whole-trace window (no ProfilerStep#N markers)" if window.whole_trace else "The window"
    if wall_us <= 0:
        if window.whole_trace:
            return "The trace holds no CPU events or kernels: there is no window to measure busy time in."
        return "The window is empty: the kernels of earlier steps ran past this step's whole span."
    if starts.size == 0:
        return f"{subject} lasts {_ms(wall_us)} but holds no kernel: it is all idle, CPU-only time."
    span_us = float(ends[-1] - starts[0])
    lead_us, tail_us = float(starts[0]) - window.start_us, window.end_us - float(ends[-1])
    coverage = span_us / wall_us
    if coverage < DOUBTFUL_COVERAGE:
        return (
            f"{subject} lasts {_ms(wall_us)} but its kernels span only {_ms(span_us)} ({100 * coverage:.1f} %): "
            f"its idle time is mostly CPU-only time ({_ms(lead_us)} before the first kernel, {_ms(tail_us)} "
            "after the last)."
        )
    if window.whole_trace and max(lead_us, tail_us) > span_us:
        return (
            f"{subject} lasts {_ms(wall_us)}, with more CPU-only time before the first kernel ({_ms(lead_us)}) "
            f"or after the last ({_ms(tail_us)}) than the kernels span ({_ms(span_us)}): that time counts as idle."
        )
    return None


def _ms(us: float) -> str:
    return f"{us / 1000:.3f} ms"


def _run_gaps(windows: Sequence[StepWindow], merged_starts: FloatArray, merged_ends: FloatArray) -> FloatArray:
    """The gaps of runs of adjoining windows (each starting where the previous ends), taken run by run."""
    runs: list[list[float]] = []
    for window in windows:
        if runs and window.start_us == runs[-1][1]:
            runs[-1][1] = window.end_us
        else:
            runs.append([window.start_us, window.end_us])
    gaps = [gaps_us(*clip_intervals(merged_starts, merged_ends, start, end), start, end) for start, end in runs]
    return np.concatenate(gaps)


def _median_index(values: Sequence[float]) -> int:
    """Index of the (lower) median value."""
    order = sorted(range(len(values)), key=lambda index: (values[index], index))
    return order[(len(order) - 1) // 2]
