"""Graph attribution: which compiled graph launched each kernel, and how busy graphs and steps keep the device.

One pass over the events collects:

- **graph spans** (`regions.py`: which call a moment belongs to) and **steps** (`ProfilerStep#N`): CPU-side
  events, cat `cpu_op` or `user_annotation`; the GPU-side copies (cat `gpu_user_annotation`, e.g.
  `## Call CompiledFxGraph <key> ##` in torch 2.11) are spans, never work, and are ignored;
- **launches** (cat `cuda_runtime` / `cuda_driver`) by `args.correlation`;
- **work**: GPU activity (cat kernel, gpu_memcpy, gpu_memset) on GPU traces; CPU ops with self time > 0
  (the kernel table's definition) on CPU traces.

A GPU activity's *anchor* is its launch (same correlation); a CPU op is its own anchor. The work belongs to
the graph call `RegionIndex.call_at(anchor thread, anchor ts)` finds; work anchored outside every graph
(and GPU activity without a launch) goes to the pseudo-graph None, "outside compiled regions".

A graph is an identity with at least one call span or with work. Graphs are numbered in order of their
first call; a graph called in several contexts takes the first kind of backward, forward, inference,
unknown found among its calls. With `ProfilerStep#N` spans only work anchored, and calls starting, inside a
step count toward graphs and kernel time; without them the whole trace is one step (-1), from the first CPU
event or kernel to the last end. Steps' windows never overlap and their busy time is all work inside them,
whichever step launched it (`timeline.py` defines both). A graph's `busy_union_percent` sums, over its calls,
the union of the call's kernel intervals and the call's window [min(call start, first kernel start),
max(call end, last kernel end)] (kernels start after their launch, so the window starts at the call span
except for CPU-side wrapper work before it). On CPU traces a kernel's time is the op's self time, and busy
intervals are the counted ops' full [start, end).
"""

from __future__ import annotations

import dataclasses
import math
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from reportgen.analyze.kernels import TimedOp, aggregate_by_name, self_times
from reportgen.analyze.regions import GraphCall, Identity, RegionIndex, Span, Thread
from reportgen.analyze.timeline import StepWindow, step_analyses, step_windows, union_us, whole_trace_window
from reportgen.bundle import GraphAnalysis, GraphKernel, GraphKind, GraphRegion, IdleHistogram, StepAnalysis
from reportgen.formats import (
    CPU_CATS,
    GPU_WORK_CATS,
    LAUNCH_CATS,
    STEP_PREFIX,
    Trace,
    TraceEvent,
    is_cpu_span,
    is_graph_span,
)

__all__ = ["OUTSIDE_LABEL", "GraphAttribution", "attribute_graphs"]

Device = Literal["cuda", "cpu"]

OUTSIDE_LABEL = "outside compiled regions"
"""Label of the pseudo-graph of work launched outside every compiled graph."""

_KIND_PRIORITY: tuple[GraphKind, ...] = ("backward", "forward", "inference", "unknown")


@dataclass(frozen=True)
class GraphAttribution:
    """What `attribute_graphs` finds: per-graph and per-step busy time, idle gaps, a timeline strip."""

    graphs: list[GraphAnalysis]
    steps: list[StepAnalysis]
    idle: IdleHistogram | None
    timeline: list[tuple[float, float]]


class _Work(NamedTuple):
    """One kernel launch (GPU) or CPU op (CPU): its interval, time, and anchor (launch or own start)."""

    name: str
    cat: str
    start: float
    end: float
    time_us: float
    anchor: float
    thread: Thread | None


@dataclass
class _Scan:
    spans: list[Span]
    steps: list[Span]
    work: list[_Work]
    first_us: float
    last_us: float


def attribute_graphs(trace: Trace, device: Device) -> GraphAttribution:
    """Attribute the trace's work to compiled graphs and steps (see the module docstring).

    :param trace: the loaded trace
    :param device: `cuda`: GPU activity is the work; `cpu`: CPU ops (self time) are
    """
    scan = _scan(trace.records(), device)
    if trace.cpu_extent_us is not None:  # a streamed trace: the extent of the CPU events it dropped
        first, last = trace.cpu_extent_us
        scan = dataclasses.replace(scan, first_us=min(scan.first_us, first), last_us=max(scan.last_us, last))
    index = RegionIndex(scan.spans)
    steps = sorted(scan.steps, key=lambda span: span.start)
    step_starts = [span.start for span in steps]
    work_steps = [_step_at(steps, step_starts, work.anchor) for work in scan.work]
    kept = [i for i, step in enumerate(work_steps) if step >= 0 or not steps]
    work = [scan.work[i] for i in kept]
    call_of = [index.call_at(item.thread, item.anchor) for item in work]
    counted = [i for i, call in enumerate(index.calls) if not steps or _step_at(steps, step_starts, call.start) >= 0]
    graphs = _graph_analyses(index.calls, counted, work, call_of, device)
    windows = _windows(scan, steps, work, [work_steps[i] for i in kept])
    all_starts = np.array([item.start for item in scan.work], dtype=np.float64)
    all_ends = np.array([item.end for item in scan.work], dtype=np.float64)
    step_list, idle, timeline = step_analyses(windows, all_starts, all_ends)
    return GraphAttribution(graphs=graphs, steps=step_list, idle=idle, timeline=timeline)


# --- index ---------------------------------------------------------------------------------------------


def _scan(events: Sequence[TraceEvent], device: Device) -> _Scan:
    """One pass: graph spans, step spans, launches, GPU activity (or CPU ops per thread)."""
    spans: list[Span] = []
    steps: list[Span] = []
    gpu: list[tuple[str, str, float, float, object]] = []
    launches: dict[object, tuple[float, Thread]] = {}
    cpu_ops: dict[Thread, list[TimedOp]] = {}
    first_us, last_us = math.inf, -math.inf
    for event in events:
        name, cat, ts, dur = event.name, event.cat, event.ts, event.dur
        if name is None or not cat or ts is None or dur is None or dur < 0:
            continue
        if cat in GPU_WORK_CATS:
            gpu.append((name, cat, ts, dur, event.correlation))
            continue
        thread = (event.pid, event.tid)
        if cat in LAUNCH_CATS:
            if event.correlation is not None:
                launches[event.correlation] = (ts, thread)
        elif cat in CPU_CATS:
            first_us, last_us = min(first_us, ts), max(last_us, ts + dur)
            if name.startswith(STEP_PREFIX):
                steps.append(Span(name, ts, ts + dur, thread))
            elif is_graph_span(name):
                spans.append(Span(name, ts, ts + dur, thread))
            if device == "cpu":
                cpu_ops.setdefault(thread, []).append(TimedOp(name, cat, ts, dur, thread))
    work = _gpu_work(gpu, launches) if device == "cuda" else _cpu_work(cpu_ops)
    return _Scan(spans, steps, work, first_us, last_us)


def _gpu_work(
    gpu: Iterable[tuple[str, str, float, float, object]], launches: dict[object, tuple[float, Thread]]
) -> list[_Work]:
    """GPU activity anchored at its launch; without one, at its own start on no thread."""
    work: list[_Work] = []
    for name, cat, ts, dur, correlation in gpu:
        anchor, thread = launches.get(correlation, (ts, None)) if correlation is not None else (ts, None)
        work.append(_Work(name, cat, ts, ts + dur, dur, anchor, thread))
    return work


def _cpu_work(cpu_ops: dict[Thread, list[TimedOp]]) -> list[_Work]:
    """CPU ops with self time > 0 (the kernel table's definition), anchored at their start."""
    return [
        _Work(op.name, op.cat, op.ts, op.end, self_us, op.ts, op.thread)
        for ops in cpu_ops.values()
        for op, self_us in self_times(ops)
        if self_us > 0 and op.cat == "cpu_op" and not is_cpu_span(op.name, op.cat)
    ]


def _step_at(steps: Sequence[Span], starts: Sequence[float], ts: float) -> int:
    """Index of the step span containing `ts`, -1 if none."""
    i = bisect_right(starts, ts) - 1
    return i if i >= 0 and ts < steps[i].end else -1


# --- graphs --------------------------------------------------------------------------------------------


def _graph_analyses(
    calls: Sequence[GraphCall],
    counted: Sequence[int],
    work: Sequence[_Work],
    call_of: Sequence[int | None],
    device: Device,
) -> list[GraphAnalysis]:
    """One `GraphAnalysis` per graph in order of first call, then the outside pseudo-graph (if any work).

    A graph's calls are its counted calls (in steps) and those that launched counted work.
    """
    work_by_call: dict[int | None, list[_Work]] = {}
    for item, c in zip(work, call_of, strict=True):
        work_by_call.setdefault(c, []).append(item)
    by_identity: dict[Identity, list[int]] = {}
    for c in sorted(set(counted).union(c for c in work_by_call if c is not None)):
        by_identity.setdefault(calls[c].identity, []).append(c)
    groups = [ids for ids in by_identity.values() if any(calls[c].primary or c in work_by_call for c in ids)]
    groups.sort(key=lambda ids: min(calls[c].start for c in ids))
    out = [
        _graph(number, [calls[c] for c in ids], [work_by_call.get(c, []) for c in ids], device)
        for number, ids in enumerate(groups)
    ]
    if None in work_by_call:
        out.append(_graph(None, [], [work_by_call[None]], device))
    return out


def _graph(
    number: int | None, members: Sequence[GraphCall], work_by_call: Sequence[list[_Work]], device: Device
) -> GraphAnalysis:
    """One graph from its calls and the work each launched (`members` empty: the outside pseudo-graph)."""
    kernels = _graph_kernels(number, [item for items in work_by_call for item in items], device)
    kind = next(k for k in _KIND_PRIORITY if k == "unknown" or any(member.kind == k for member in members))
    categories: dict[str, float] = {}
    for kernel in kernels:
        categories[kernel.category] = categories.get(kernel.category, 0.0) + kernel.device_time_us
    wall_us = sum(map(_window_us, members, work_by_call)) if members else 0.0
    busy_us = sum(union_us([item.start for item in items], [item.end for item in items]) for items in work_by_call)
    return GraphAnalysis(
        graph=number,
        label=_label(number, kind),
        key=members[0].key if members else None,
        kind=kind,
        calls=len(members),
        wall_us=wall_us,
        kernel_time_us=sum(kernel.device_time_us for kernel in kernels),
        busy_union_percent=100.0 * busy_us / wall_us if members and kernels and wall_us > 0 else None,
        categories_us=dict(sorted(categories.items(), key=lambda item: (-item[1], item[0]))),
        kernels=kernels,
        regions=_regions(members, work_by_call),
    )


def _regions(members: Sequence[GraphCall], work_by_call: Sequence[list[_Work]]) -> list[GraphRegion]:
    """Calls and kernel time of a graph per compiled version (`Torch-Compiled Region`) its calls ran in."""
    if not members:  # the outside pseudo-graph
        return []
    calls: dict[str, int] = {}
    time_us: dict[str, float] = {}
    for member, items in zip(members, work_by_call, strict=True):
        if member.region is not None:
            calls[member.region] = calls.get(member.region, 0) + 1
            time_us[member.region] = time_us.get(member.region, 0.0) + sum(item.time_us for item in items)
    return [GraphRegion(region=region, calls=n, kernel_time_us=time_us[region]) for region, n in calls.items()]


def _label(number: int | None, kind: GraphKind) -> str:
    if number is None:
        return OUTSIDE_LABEL
    return f"{kind} (graph {number})" if kind != "unknown" else f"graph {number}"


def _graph_kernels(number: int | None, work: Sequence[_Work], device: Device) -> list[GraphKernel]:
    """The graph's work aggregated by name, sorted by time, descending (then by name)."""
    rows = aggregate_by_name(((item.name, item.cat, item.time_us) for item in work), device)
    return [
        GraphKernel(
            graph=number, name=r.name, category=r.category, device_time_us=r.time_us, count=r.count, share=r.share
        )
        for r in rows
    ]


def _window_us(call: GraphCall, items: Sequence[_Work]) -> float:
    """A call's window: from its start (or its first kernel's) to its end (or its last kernel's end).
    Summed over a graph's calls it is `wall_us`, the denominator of `busy_union_percent`.

    Under CUDA graphs the CPU span is only the replay's launch, far shorter than the kernels it runs.
    """
    start = min((item.start for item in items), default=call.start)
    end = max((item.end for item in items), default=call.end)
    return max(call.end, end) - min(call.start, start)


# --- steps ---------------------------------------------------------------------------------------------


def _windows(scan: _Scan, steps: Sequence[Span], work: Sequence[_Work], work_steps: Sequence[int]) -> list[StepWindow]:
    """One window per `ProfilerStep#N` span (never overlapping), or the whole trace as step -1 without any."""
    starts = np.array([item.start for item in work], dtype=np.float64)
    ends = np.array([item.end for item in work], dtype=np.float64)
    times = np.array([item.time_us for item in work], dtype=np.float64)
    if not steps:
        return [whole_trace_window(scan.first_us, scan.last_us, starts, ends, times)]
    numbered = [(_step_number(span.name, k), span.start, span.end) for k, span in enumerate(steps)]
    return step_windows(numbered, starts, ends, times, np.array(work_steps, dtype=np.int64))


def _step_number(name: str, position: int) -> int:
    suffix = name[len(STEP_PREFIX) :]
    return int(suffix) if suffix.isdigit() else position
