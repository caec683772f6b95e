"""The kernel table: where device time (GPU runs) or CPU time (CPU runs) goes, by kernel or op name.

Definitions:

- **GPU** (`cuda`): every complete event with Kineto `cat` in {kernel, gpu_memcpy, gpu_memset}, aggregated
  by name: total duration (us) and count. GPU-side spans (`gpu_user_annotation`, e.g.
  `## Call CompiledFxGraph <key> ##`) are not work and are never counted. Durations are summed without
  overlap correction (concurrent streams add up), like PyTorch's own `wrapper.py -p`.
- **CPU** (`cpu`): *self* time of `cpu_op` events, i.e. duration minus the durations of direct children,
  found per (pid, tid) with a stack sweep over `cpu_op` and `user_annotation` events sorted by start (the
  same definition as the profiler's "Self CPU"). Spans that are not work (`ProfilerStep#N`,
  `Torch-Compiled Region: ...`, `CompiledFunction[Backward]`, `## ... ##`, anything of cat
  `user_annotation`) take part in the sweep as parents, so they are subtracted from an enclosing op's time,
  but get no row: their own time (Dynamo guards, Python wrapper code) is left out of the table.
  When the trace has `ProfilerStep#N` spans, only ops starting inside one are counted. Ops with zero self
  time are dropped.
- Inductor C++ kernels keep their profiled name `graph_<n>_cpp_fused_...`: the `graph_<n>_` prefix is
  what tells apart same-named kernels of different compiled graphs (kernel numbering restarts per graph).

Events without a numeric `ts`/`dur` or a string `name` are skipped. `share` is each row's fraction of
the table's total; rows are sorted by time, descending (then by name).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from reportgen.analyze.categories import categorize
from reportgen.bundle import Kernel, KernelTable
from reportgen.formats import CPU_CATS, GPU_WORK_CATS, KERNEL_CAT, STEP_PREFIX, Trace, TraceEvent, is_cpu_span

__all__ = [
    "TimedOp",
    "aggregate_by_name",
    "kernel_table",
    "self_times",
]

"""Kineto categories of GPU work."""


@dataclass(frozen=True)
class TimedOp:
    """A complete event with valid timing."""

    name: str
    cat: str
    ts: float
    dur: float
    thread: tuple[object, object]

    @property
    def end(self) -> float:
        return self.ts + self.dur


@dataclass(frozen=True)
class NamedTotal:
    """Work of one name: total time, launches, share of the total."""

    name: str
    category: str
    time_us: float
    count: int
    share: float


def aggregate_by_name(samples: Iterable[tuple[str, str, float]], device: Literal["cuda", "cpu"]) -> list[NamedTotal]:
    """(name, cat, duration µs) samples summed by name, sorted by time descending, then by name."""
    time_us: dict[str, float] = {}
    counts: dict[str, int] = {}
    categories: dict[str, str] = {}
    for name, cat, duration_us in samples:
        if name not in categories:
            categories[name] = categorize(name, cat, device)
        time_us[name] = time_us.get(name, 0.0) + duration_us
        counts[name] = counts.get(name, 0) + 1
    total_us = sum(time_us.values())
    return [
        NamedTotal(
            name, categories[name], time_us[name], counts[name], time_us[name] / total_us if total_us > 0 else 0.0
        )
        for name in sorted(time_us, key=lambda name: (-time_us[name], name))
    ]


def kernel_table(trace: Trace, device: Literal["cuda", "cpu"], profiled_steps: int) -> KernelTable:
    """Aggregate the trace's kernels (GPU) or CPU ops (CPU) by name; see the module docstring.

    :param trace: the loaded trace
    :param device: `cuda` for device activity, `cpu` for CPU-op self time
    :param profiled_steps: how many steps the trace covers (recorded in the table, not used to divide)
    """
    samples: Iterable[tuple[str, str, float]]
    if device == "cuda":
        samples = (
            (e.name, e.cat, e.dur)
            for e in trace.records()
            if e.cat in GPU_WORK_CATS and e.name is not None and e.ts is not None and e.dur is not None and e.dur >= 0
        )
    else:
        samples = _iter_cpu_self_times(trace.records())
    rows = aggregate_by_name(samples, device)
    total_us = sum(row.time_us for row in rows)
    moved = _copied_bytes(trace) if device == "cuda" else {}
    kernels = [
        Kernel(
            name=r.name,
            category=r.category,
            device_time_us=r.time_us,
            count=r.count,
            share=r.share,
            recorded_bytes=moved.get(r.name),
        )
        for r in rows
    ]
    return KernelTable(device=device, profiled_steps=profiled_steps, total_us=total_us, kernels=kernels)


def _copied_bytes(trace: Trace) -> dict[str, float]:
    """Bytes the copies and fills moved, summed by name (each event's recorded `bytes`); a name with any event
    that recorded none has none."""
    recorded = trace.copies()
    if not recorded:
        return {}
    total: dict[str, float] = {}
    missing: set[str] = set()
    for e in trace.records():
        if e.cat in GPU_WORK_CATS and e.cat != KERNEL_CAT and e.name is not None and e.dur is not None and e.dur >= 0:
            got = recorded.get(e.correlation)
            if got is None:
                missing.add(e.name)
            else:
                total[e.name] = total.get(e.name, 0.0) + got
    return {name: moved for name, moved in total.items() if name not in missing}


def _iter_ops(events: Iterable[TraceEvent]) -> Iterator[TimedOp]:
    """Events with a string name and numeric, non-negative `ts` and `dur`."""
    for event in events:
        name, ts, dur = event.name, event.ts, event.dur
        if name is None or ts is None or dur is None or dur < 0:
            continue
        yield TimedOp(name, event.cat, ts, dur, (event.pid, event.tid))


def _iter_cpu_self_times(events: Sequence[TraceEvent]) -> Iterator[tuple[str, str, float]]:
    """(name, cat, self time in us) of every CPU op with self time > 0, within profiler steps if any."""
    ops = list(_iter_ops(events))
    steps = _step_windows(ops)
    threads: dict[tuple[object, object], list[TimedOp]] = {}
    for op in ops:
        if op.cat in CPU_CATS:
            threads.setdefault(op.thread, []).append(op)
    for thread_ops in threads.values():
        for op, self_us in self_times(thread_ops):
            if self_us <= 0 or op.cat != "cpu_op" or is_cpu_span(op.name, op.cat):
                continue
            if not steps or _in_steps(op.ts, steps):
                yield op.name, op.cat, self_us


def self_times(ops: list[TimedOp]) -> list[tuple[TimedOp, float]]:
    """Stack sweep over one thread's ops: each op's duration minus its direct children's."""
    ops = sorted(ops, key=lambda op: (op.ts, -op.dur))
    children_us = [0.0] * len(ops)
    stack: list[int] = []
    for index, op in enumerate(ops):
        while stack and op.ts >= ops[stack[-1]].end:
            stack.pop()
        if stack:
            children_us[stack[-1]] += op.dur
        stack.append(index)
    return [(op, max(op.dur - child_us, 0.0)) for op, child_us in zip(ops, children_us, strict=True)]


def _step_windows(ops: list[TimedOp]) -> list[tuple[float, float]]:
    """Sorted (start, end) of the CPU-side `ProfilerStep#N` spans."""
    return sorted((op.ts, op.end) for op in ops if op.name.startswith(STEP_PREFIX) and not op.cat.startswith("gpu_"))


def _in_steps(ts: float, steps: list[tuple[float, float]]) -> bool:
    """Whether `ts` falls in one of the (sorted, non-overlapping) step windows."""
    index = bisect_right(steps, (ts, math.inf)) - 1
    return index >= 0 and ts < steps[index][1]
