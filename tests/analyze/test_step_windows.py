"""Step windows that partition the timeline (reportgen.analyze.timeline via attribute_graphs), and their notes.

The traces are built with integer microsecond timestamps, so a 1 us grid measures the GPU's busy time over a
window exactly and independently of the interval arithmetic under test.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from reportgen.analyze.graphs import attribute_graphs
from reportgen.bundle import StepAnalysis
from reportgen.formats.trace import Trace, load_trace
from tests.data import H100_FIXTURE, H200_MIXNET_TRACE

__all__: list[str] = []

PID = 100


class _Trace:
    """Chrome-trace events: CPU spans, and kernels with their launches (shared correlation)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.kernels: list[tuple[int, int]] = []

    def span(self, name: str, ts: int, dur: int, cat: str = "cpu_op") -> None:
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": PID, "tid": 1, "ts": ts, "dur": dur})

    def step(self, n: int, ts: int, dur: int) -> None:
        self.span(f"ProfilerStep#{n}", ts, dur, cat="user_annotation")

    def kernel(self, launch: int, start: int, dur: int, stream: int = 7) -> None:
        args = {"correlation": len(self.kernels) + 1}
        self.events.append(
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": PID, "tid": 1, "ts": launch}
            | {"dur": 2, "args": args}
        )
        self.events.append(
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": stream, "ts": start, "dur": dur, "args": args}
        )
        self.kernels.append((start, start + dur))

    def trace(self) -> Trace:
        return Trace(path=Path("synthetic.json"), events=self.events)

    def busy_over(self, start: float, end: float) -> float:
        """The GPU's busy % over [start, end) on a 1 us grid: every kernel, whichever step launched it."""
        grid = np.zeros(int(max(e for _, e in self.kernels)) + 1, dtype=bool)
        for s, e in self.kernels:
            grid[s:e] = True
        return 100.0 * float(grid[int(start) : int(end)].sum()) / (end - start)


def _lagging() -> _Trace:
    """4 back-to-back steps of 100 us of CPU, each launching 10 kernels of 24 us (and one of 10 us on a second
    stream, inside another): the GPU runs them one after the other with 1 us between, ever later than the CPU.
    """
    b = _Trace()
    gpu_free = 0
    for k in range(4):
        t0 = 100 * k
        b.step(k + 1, t0, 100)
        for i in range(10):
            launch = t0 + 5 + 9 * i
            start = max(launch + 3, gpu_free + 1)
            b.kernel(launch, start, 24)
            if i == 5:
                b.kernel(launch + 1, start + 4, 10, stream=8)  # concurrent: counts once in busy
            gpu_free = start + 24
    return b


def _windows(steps: list[StepAnalysis]) -> list[tuple[float, float]]:
    return [(s.window_start_us, s.window_start_us + s.wall_us) for s in steps]


def _assert_partition(steps: list[StepAnalysis]) -> None:
    """Consecutive windows, none overlapping, their lengths summing to the span they cover."""
    windows = _windows(steps)
    assert all(end >= start for start, end in windows)
    assert all(next_start == end for (_, end), (next_start, _) in itertools.pairwise(windows))
    assert sum(s.wall_us for s in steps) == pytest.approx(windows[-1][1] - windows[0][0])


def test_lagging_gpu_windows_partition_the_timeline() -> None:
    b = _lagging()
    steps = attribute_graphs(b.trace(), "cuda").steps
    _assert_partition(steps)
    # step 1 from its span start; then each window ends at its last kernel's end, the next starts there.
    # The old windows ran from each span start: (0, 257), (100, 507), (200, 757), (300, 1007), 1928 us in all
    # for 1007 us of steps.
    assert _windows(steps) == [(0, 257), (257, 507), (507, 757), (757, 1007)]
    assert [s.kernel_time_us for s in steps] == [250.0] * 4  # by launch: 10 x 24 + 10
    assert [s.note for s in steps] == [None] * 4


def test_lagging_gpu_busy_is_all_work_in_the_window() -> None:
    b = _lagging()
    steps = attribute_graphs(b.trace(), "cuda").steps
    for step, (start, end) in zip(steps, _windows(steps), strict=True):
        assert step.busy_percent == pytest.approx(b.busy_over(start, end), abs=0.5)
    # 240 us of kernels per step (the second stream's overlaps), 1 us gaps between them; step 1 also waits
    # 8 us for its first kernel. The old windows (span start to last kernel end) overlapped, and steps 2-4
    # counted the GPU's work on the previous step's kernels as idle: 240 / 407, 240 / 557, 240 / 707 busy
    # (59.0, 43.1, 33.9 %) where the GPU was 96 % busy over the same windows.
    assert [round(s.busy_percent, 2) for s in steps] == [93.39, 96.0, 96.0, 96.0]
    assert [round(b.busy_over(start, end), 2) for start, end in _windows(steps)] == [93.39, 96.0, 96.0, 96.0]
    assert [(s.busy_union_us, s.idle_us, s.gap_count) for s in steps] == [
        (240.0, 17.0, 10),
        (240.0, 10.0, 10),
        (240.0, 10.0, 10),
        (240.0, 10.0, 10),
    ]
    assert sum(s.busy_union_us for s in steps) / sum(s.wall_us for s in steps) == pytest.approx(
        b.busy_over(0, 1007) / 100
    )


def test_lagging_gpu_idle_histogram_and_timeline() -> None:
    b = _lagging()
    result = attribute_graphs(b.trace(), "cuda")
    assert result.idle is not None
    assert result.idle.total_idle_us == sum(s.idle_us for s in result.steps) == 47.0
    # windows end at a kernel's end, so no gap crosses a boundary: one 8 us gap and 39 of 1 us
    assert sum(result.idle.counts) == sum(s.gap_count for s in result.steps) == 40
    assert result.timeline[0] == (1.0, 25.0)  # step 2 (the lower median wall), from its window start


def test_spans_apart_leave_the_time_between_in_no_window() -> None:
    b = _Trace()
    b.step(1, 0, 100)
    b.kernel(10, 20, 150)  # runs past step 1's span
    b.step(2, 300, 100)  # starts after step 1's window ends (170)
    b.kernel(310, 320, 50)
    steps = attribute_graphs(b.trace(), "cuda").steps
    assert _windows(steps) == [(0, 170), (300, 400)]
    assert [s.busy_union_us for s in steps] == [150.0, 50.0]


def test_window_swallowed_by_earlier_kernels_is_empty_and_noted() -> None:
    b = _Trace()
    b.step(1, 0, 10)
    b.kernel(2, 5, 100)
    b.step(2, 10, 10)  # launches nothing; step 1's kernel runs past its whole span
    b.step(3, 20, 100)
    b.kernel(25, 110, 5)
    steps = attribute_graphs(b.trace(), "cuda").steps
    _assert_partition(steps)
    assert _windows(steps) == [(0, 105), (105, 105), (105, 120)]
    assert (steps[1].wall_us, steps[1].busy_percent) == (0.0, 0.0)
    assert steps[1].note is not None and "empty" in steps[1].note
    assert steps[0].note is None and steps[2].note is None


def test_step_far_longer_than_its_kernels_is_noted() -> None:
    b = _Trace()
    b.step(1, 0, 100)
    b.kernel(5, 10, 80)
    b.step(2, 100, 10_000)  # a stall: 100 us of kernels in a 10 ms step
    b.kernel(9_000, 9_010, 100)
    steps = attribute_graphs(b.trace(), "cuda").steps
    assert steps[0].note is None
    assert steps[1].busy_percent == pytest.approx(1.0)
    assert steps[1].note == (
        "The window lasts 10.000 ms but its kernels span only 0.100 ms (1.0 %): its idle time is mostly "
        "CPU-only time (8.910 ms before the first kernel, 0.990 ms after the last)."
    )


def test_whole_trace_window_is_recorded_and_noted_when_mostly_cpu() -> None:
    b = _Trace()
    b.span("compile", 0, 30_000)  # 30 ms of CPU-only time before any kernel
    b.kernel(30_000, 30_010, 990)
    (step,) = attribute_graphs(b.trace(), "cuda").steps
    assert (step.step, step.window, step.window_start_us, step.wall_us) == (-1, "whole trace", 0.0, 31_000.0)
    assert step.note is not None
    assert step.note == (
        "The whole-trace window (no ProfilerStep#N markers) lasts 31.000 ms but its kernels span only 0.990 ms "
        "(3.2 %): its idle time is mostly CPU-only time (30.010 ms before the first kernel, 0.000 ms after the last)."
    )


def test_whole_trace_note_when_cpu_time_before_the_kernels_outlasts_them() -> None:
    b = _Trace()
    b.span("compile", 0, 2_000)
    b.kernel(2_000, 2_000, 1_500)  # 37.5 % of the window: not "far longer", but 2 ms lead > 1.5 ms span
    b.span("aten::empty", 3_600, 400)
    (step,) = attribute_graphs(b.trace(), "cuda").steps
    assert step.note == (
        "The whole-trace window (no ProfilerStep#N markers) lasts 4.000 ms, with more CPU-only time before the "
        "first kernel (2.000 ms) or after the last (0.500 ms) than the kernels span (1.500 ms): that time counts "
        "as idle."
    )


def test_whole_trace_without_kernels_is_noted_and_busy_kernels_are_not() -> None:
    b = _Trace()
    b.span("aten::add", 0, 100)
    (step,) = attribute_graphs(b.trace(), "cuda").steps
    assert step.note is not None and "holds no kernel" in step.note
    b.kernel(10, 10, 80)
    (step,) = attribute_graphs(b.trace(), "cuda").steps
    assert (step.window, step.busy_percent, step.note) == ("whole trace", 80.0, None)


# --- real traces ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [H100_FIXTURE / "trace.json.gz", H200_MIXNET_TRACE], ids=["h100", "h200"])
def test_real_traces_analyse_as_one_whole_trace_window(path: Path) -> None:
    """Neither trace has step markers: one window, recorded as the whole trace; kernels cover enough of it."""
    result = attribute_graphs(load_trace(path), "cuda")
    (step,) = result.steps
    assert (step.step, step.window, step.note) == (-1, "whole trace", None)
    assert result.idle is not None
    assert sum(result.idle.counts) == step.gap_count
    assert result.idle.total_idle_us == pytest.approx(step.idle_us)


def test_gpu_trace_of_back_to_back_steps() -> None:
    """A real H100 trace, steps launched back to back: windows tile the steps, busy = union of all device work."""
    import numpy as np

    from reportgen.analyze import attribute_graphs
    from reportgen.formats import GPU_WORK_CATS, read_trace
    from tests.data import H100_BACK_TO_BACK_TRACE

    trace = read_trace(H100_BACK_TO_BACK_TRACE, "cuda")
    steps = attribute_graphs(trace, "cuda").steps
    assert [s.step for s in steps] == [1, 2, 3]
    work = sorted(
        (e.ts, e.ts + e.dur)
        for e in trace.records()
        if e.cat in GPU_WORK_CATS and e.ts is not None and e.dur is not None
    )
    starts, ends = np.array([w[0] for w in work]), np.array([w[1] for w in work])
    previous_end = -np.inf
    for step in steps:
        start, end = step.window_start_us, step.window_start_us + step.wall_us
        assert start >= previous_end - 1e-6  # never overlapping
        previous_end = end
        clipped = sorted(zip(np.clip(starts, start, end), np.clip(ends, start, end), strict=True))
        union, reach = 0.0, start
        for s, e in clipped:
            if e > reach:
                union += e - max(s, reach)
                reach = e
        assert abs(step.busy_percent - 100 * union / step.wall_us) <= 0.5
        assert step.note is None
