"""Tests of reportgen.analyze.timeline: interval union, gaps, histogram, steps, timeline strip."""

from __future__ import annotations

import numpy as np
import pytest

from reportgen.analyze.timeline import (
    IDLE_EDGES_US,
    OPEN_END_US,
    StepWindow,
    clip_intervals,
    coarsen,
    gaps_us,
    idle_histogram,
    merge_intervals,
    step_analyses,
    step_windows,
    union_us,
    whole_trace_window,
    window_note,
)

__all__: list[str] = []


def _pairs(starts: np.ndarray, ends: np.ndarray) -> list[tuple[float, float]]:
    return [(float(s), float(e)) for s, e in zip(starts, ends, strict=True)]


def _window(step: int, start: float, end: float, intervals: list[tuple[float, float]]) -> StepWindow:
    starts = np.array([s for s, _ in intervals], dtype=np.float64)
    ends = np.array([e for _, e in intervals], dtype=np.float64)
    return StepWindow(step, start, end, starts, ends, float((ends - starts).sum()))


def test_merge_overlapping_streams_not_double_counted() -> None:
    # stream 7: [0, 10), [20, 30); stream 8 overlaps both: [5, 25); unsorted input
    starts, ends = merge_intervals([20, 5, 0, 40], [30, 25, 10, 41])
    assert _pairs(starts, ends) == [(0, 30), (40, 41)]
    assert union_us([20, 5, 0, 40], [30, 25, 10, 41]) == 31


def test_merge_touching_and_contained() -> None:
    assert _pairs(*merge_intervals([0, 10, 2], [10, 12, 3])) == [(0, 12)]
    assert _pairs(*merge_intervals([0, 1, 5], [100, 2, 6])) == [(0, 100)]


def test_merge_empty() -> None:
    starts, ends = merge_intervals([], [])
    assert starts.size == ends.size == 0
    assert union_us([], []) == 0.0


def test_gaps_include_leading_and_trailing() -> None:
    starts, ends = merge_intervals([10, 40], [20, 50])
    assert gaps_us(starts, ends, 0, 60).tolist() == [10, 20, 10]
    assert gaps_us(starts, ends, 10, 50).tolist() == [20]


def test_gaps_clip_to_window() -> None:
    starts, ends = merge_intervals([-5, 40, 70], [20, 50, 90])
    assert gaps_us(starts, ends, 0, 60).tolist() == [20, 10]
    assert gaps_us(np.empty(0), np.empty(0), 3, 8).tolist() == [5]


def test_idle_histogram_bins() -> None:
    histogram = idle_histogram([0.5, 1, 1.5, 3, 999, 1000, 20_000])
    assert histogram.edges_us == list(IDLE_EDGES_US)
    assert histogram.edges_us[-1] == OPEN_END_US
    assert len(histogram.counts) == len(IDLE_EDGES_US) - 1
    expected = [1, 2, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1]
    assert histogram.counts == expected
    assert histogram.total_idle_us == pytest.approx(22_005.0)


def test_coarsen_closes_shortest_gaps() -> None:
    starts = np.array([0.0, 10, 13, 30, 31, 60])
    ends = np.array([5.0, 12, 20, 30.5, 40, 70])
    # gaps: 5, 1, 10, 0.5, 20 -> keep the 2 longest (10, 20) for 3 intervals
    assert _pairs(*coarsen(starts, ends, 3)) == [(0, 20), (30, 40), (60, 70)]
    assert _pairs(*coarsen(starts, ends, 10)) == _pairs(starts, ends)


def test_step_analyses_busy_idle_and_timeline() -> None:
    windows = [
        _window(1, 0, 100, [(10, 30), (20, 40), (60, 70)]),  # busy 40, gaps 10, 20, 30
        _window(2, 100, 180, [(100, 150), (170, 180)]),  # busy 60, gap 20
        _window(3, 200, 400, [(210, 220)]),  # busy 10, gaps 10, 180
    ]
    steps, histogram, timeline = step_analyses(windows)
    assert [(s.step, s.wall_us, s.busy_union_us, s.idle_us, s.gap_count) for s in steps] == [
        (1, 100, 40, 60, 3),
        (2, 80, 60, 20, 1),
        (3, 200, 10, 190, 2),
    ]
    assert steps[0].kernel_time_us == 50  # overlapping intervals add up in kernel time only
    assert steps[0].busy_percent == pytest.approx(40.0)
    assert histogram is not None
    assert histogram.total_idle_us == 270
    assert sum(histogram.counts) == 6
    # median wall: step 1 (100 us), relative to its start
    assert timeline == [(10, 40), (60, 70)]


def test_step_analyses_count_all_work_in_the_window_whichever_step_launched_it() -> None:
    # step 1 launched (0, 150), which runs into step 2's window; step 2 launched (160, 190)
    windows = [_window(1, 0, 100, [(0, 150)]), _window(2, 100, 200, [(160, 190)])]
    steps, histogram, _ = step_analyses(windows)
    assert [(s.window_start_us, s.wall_us, s.kernel_time_us, s.busy_union_us, s.gap_count) for s in steps] == [
        (0, 100, 150, 100, 0),
        (100, 100, 30, 80, 2),
    ]
    assert histogram is not None and histogram.total_idle_us == 20
    # explicit work: a kernel launched outside every step keeps step 1 busy too
    steps, _, _ = step_analyses(windows, [0, 160, 40], [150, 190, 60])
    assert [s.busy_union_us for s in steps] == [100, 80]


def test_idle_histogram_joins_a_gap_across_adjoining_windows() -> None:
    # a gap [80, 130) across the boundary at 100: two gaps in the steps, one of 50 us in the histogram
    windows = [_window(1, 0, 100, [(0, 80)]), _window(2, 100, 200, [(130, 200)]), _window(3, 300, 400, [])]
    steps, histogram, _ = step_analyses(windows)
    assert [(s.idle_us, s.gap_count) for s in steps] == [(20, 1), (30, 1), (100, 1)]
    assert histogram is not None
    assert sum(histogram.counts) == 2
    assert histogram.counts[IDLE_EDGES_US.index(50)] == 1  # 50 us, not 20 + 30
    assert histogram.total_idle_us == 150


def test_clip_intervals() -> None:
    starts, ends = np.array([0.0, 20, 40, 60]), np.array([10.0, 30, 50, 70])
    assert _pairs(*clip_intervals(starts, ends, 25, 45)) == [(25, 30), (40, 45)]
    assert _pairs(*clip_intervals(starts, ends, 10, 20)) == []
    assert _pairs(*clip_intervals(starts, ends, -5, 100)) == _pairs(starts, ends)


def test_window_note() -> None:
    busy = np.array([10.0]), np.array([15.0])
    assert window_note(_window(1, 0, 20, []), *busy) is None
    assert "its kernels span only 0.005 ms (5.0 %)" in (window_note(_window(1, 0, 100, []), *busy) or "")
    assert "empty" in (window_note(_window(1, 5, 5, []), np.empty(0), np.empty(0)) or "")
    whole = whole_trace_window(0, 40, *busy, busy[1] - busy[0])
    assert "more CPU-only time before the first kernel" in (window_note(whole, *busy) or "")  # 10 us > 5 us span


def test_step_analyses_without_windows() -> None:
    assert step_analyses([]) == ([], None, [])


def test_step_windows_group_and_extend() -> None:
    starts = np.array([5.0, 50, 95, 130])
    ends = np.array([10.0, 60, 120, 140])
    ids = np.array([0, 0, 0, 1])
    windows = step_windows([(1, 0, 100), (2, 100, 200)], starts, ends, ends - starts, ids)
    # step 2 starts where step 1's window ends (120), no longer at its span start (100): the old windows
    # overlapped over [100, 120) and counted it twice
    assert [(w.step, w.start_us, w.end_us, w.kernel_time_us) for w in windows] == [(1, 0, 120, 40), (2, 120, 200, 10)]
    assert windows[0].starts_us.tolist() == [5, 50, 95]


def test_whole_trace_window() -> None:
    starts, ends = np.array([5.0, 50]), np.array([10.0, 160])
    window = whole_trace_window(0, 100, starts, ends, ends - starts)
    assert (window.step, window.start_us, window.end_us, window.kernel_time_us) == (-1, 0, 160, 115)
    assert window.whole_trace
    empty = whole_trace_window(float("inf"), float("-inf"), np.empty(0), np.empty(0), np.empty(0))
    assert (empty.start_us, empty.end_us) == (0, 0)
