"""Counts per profiled step, and a side's `StepFigures`: what a run repeats exactly, whatever its host does.

One pass over the trace. A CPU-side event (a runtime or driver call, an ATen op, a graph's span) belongs to the
`ProfilerStep#N` span its start lies in, on any thread (the autograd engine's backward runs on its own thread
inside the step's time); GPU work belongs to the step of its launch (same `correlation`), as in the step
windows of `timeline.py`. Events outside every step span are not counted; a trace without step spans is one
step; calls inside reportgen's own `MEASUREMENT_SPAN` (the synchronisation ending its window) are not the
model's and are left out. Names (`cudaLaunchKernel`, `Memcpy HtoD (Pageable -> Device)`) are Kineto's, matched by the substrings
below; see `reportgen.bundle.figures.COUNTS` for what each count is.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Literal

from reportgen.bundle import COUNTS, GPU_COUNTS, CountName, StepAnalysis, StepFigures
from reportgen.formats import (
    ATEN_PREFIX,
    CALL_SPAN_PREFIX,
    CPU_CATS,
    CPU_SPAN_NAMES,
    KERNEL_CAT,
    LAUNCH_CATS,
    MEASUREMENT_SPAN,
    STEP_PREFIX,
    Trace,
    TraceEvent,
)

__all__ = ["LAUNCH_MARKERS", "step_counts", "step_figures"]

LAUNCH_MARKERS = ("LaunchKernel", "LaunchCooperativeKernel", "GraphLaunch")
"""Substrings of the runtime/driver calls that launch device work: `cudaLaunchKernel`, `cuLaunchKernelEx`,
`cudaLaunchCooperativeKernel`, `cudaGraphLaunch` (one launch for a whole replayed CUDA graph)."""
SYNC_MARKER = "Synchronize"
"""`cudaDeviceSynchronize`, `cudaStreamSynchronize`, `cudaEventSynchronize`, `cuCtxSynchronize`, ..."""
MEMCPY_MARKER = "Memcpy"
"""`cudaMemcpyAsync`, `cuMemcpyHtoDAsync`, ..."""
HOST_COPY_MARKERS = ("HtoD", "DtoH")
"""A GPU-side `gpu_memcpy` between host and device (`Memcpy HtoD (Pageable -> Device)`), not device to device."""

_Counts = dict[CountName, list[int]]


class _Steps:
    """The step spans, sorted: which step a CPU timestamp lies in."""

    def __init__(self, spans: Iterable[tuple[float, float]]) -> None:
        self.spans = sorted(spans)
        self.starts = [start for start, _ in self.spans]

    def __len__(self) -> int:
        return max(len(self.spans), 1)

    def at(self, ts: float) -> int:
        """Index of the step containing `ts`; 0 without step spans; -1 outside every span."""
        if not self.spans:
            return 0
        i = bisect_right(self.starts, ts) - 1
        return i if i >= 0 and ts < self.spans[i][1] else -1


def _spans(records: Sequence[TraceEvent]) -> tuple[_Steps, _Steps]:
    """One pass: the `ProfilerStep#N` spans, and reportgen's own `MEASUREMENT_SPAN`s."""
    found: tuple[list[tuple[float, float]], list[tuple[float, float]]] = ([], [])
    for e in records:
        if e.name is None or e.ts is None or e.dur is None or e.dur < 0:
            continue
        if e.cat in CPU_CATS and e.name.startswith(STEP_PREFIX):
            found[0].append((e.ts, e.ts + e.dur))
        elif e.name == MEASUREMENT_SPAN:
            found[1].append((e.ts, e.ts + e.dur))
    return _Steps(found[0]), _Steps(found[1])


def step_counts(trace: Trace, device: Literal["cuda", "cpu"]) -> tuple[_Counts, Counter[str], Counter[str], int]:
    """Each count per step, ATen ops and kernels by name (summed over the steps), and the number of steps."""
    records = trace.records()
    steps, own = _spans(records)
    names: list[CountName] = [n for n in COUNTS if device == "cuda" or n not in GPU_COUNTS]
    counts: _Counts = {name: [0] * len(steps) for name in names}
    ops: Counter[str] = Counter()
    kernels: Counter[str] = Counter()
    launched: dict[object, int] = {}
    calls = [0] * len(steps)
    aot = [0] * len(steps)
    gpu: list[tuple[str, str, object]] = []

    def aten(name: str, ts: float) -> None:
        if (step := steps.at(ts)) >= 0:
            counts["aten_ops"][step] += 1
            ops[name] += 1

    for e in records:
        name, cat, ts = e.name, e.cat, e.ts
        if name is None or ts is None:
            continue
        if cat in ("kernel", "gpu_memcpy"):
            gpu.append((name, cat, e.correlation))
        elif cat in LAUNCH_CATS and device == "cuda":
            if (step := steps.at(ts)) < 0 or (own.spans and own.at(ts) >= 0):
                continue
            launched[e.correlation] = step
            counts["runtime_calls"][step] += 1
            counts["launches"][step] += any(marker in name for marker in LAUNCH_MARKERS)
            counts["syncs"][step] += SYNC_MARKER in name
            counts["memcpy_calls"][step] += MEMCPY_MARKER in name
        elif cat == "cpu_op" and name.startswith(ATEN_PREFIX):
            aten(name, ts)
        elif cat in CPU_CATS and (step := steps.at(ts)) >= 0:
            calls[step] += name.startswith(CALL_SPAN_PREFIX) and name.endswith("##")
            aot[step] += name in CPU_SPAN_NAMES
    for name, ts in trace.ops:
        aten(name, ts)
    if device == "cuda":
        _count_gpu_work(gpu, launched, counts, kernels)
    counts["graphs"] = calls if any(calls) else aot
    return counts, ops, kernels, len(steps)


def _count_gpu_work(
    gpu: list[tuple[str, str, object]], launched: dict[object, int], counts: _Counts, kernels: Counter[str]
) -> None:
    """Kernels and host↔device copies, each in the step its launch lies in (none without a counted launch)."""
    for name, cat, correlation in gpu:
        step = launched.get(correlation, -1) if correlation is not None else -1
        if step < 0:
            continue
        if cat == KERNEL_CAT:
            counts["kernels"][step] += 1
            kernels[name] += 1
        elif any(marker in name for marker in HOST_COPY_MARKERS):
            counts["copies"][step] += 1


def step_figures(trace: Trace, device: Literal["cuda", "cpu"], steps: Sequence[StepAnalysis]) -> StepFigures:
    """One side's figures: device and GPU-active time of each step (`steps`, from `attribute_graphs` on the same
    trace) and its counts."""
    counts, ops, kernels, n = step_counts(trace, device)
    return StepFigures(
        profiled_steps=n,
        device_us=[step.kernel_time_us for step in steps],
        active_us=[step.busy_union_us for step in steps],
        counts=counts,
        aten_ops={name: count / n for name, count in sorted(ops.items())},
        kernels={name: count / n for name, count in sorted(kernels.items())},
    )
