"""A distributed run's ranks: compute against communication on each rank's timeline, the collectives, the straggler.

Definitions (those of HTA's communication/computation overlap, so the two can be checked against each other):

- **communication** is the union of the collectives' intervals: NCCL kernels on a GPU (category `collective`),
  gloo's `gloo:<collective>` spans on its worker threads on the CPU;
- **compute** is the union of every other kernel's intervals on a GPU (copies and fills apart); on the CPU, of the ATen ops and Inductor
  kernels (every CPU op a category claims) on the threads that run no collective;
- **overlapped** is the length of their intersection; **exposed** communication = communication - overlapped;
  **overlap %** = overlapped / communication;
- each is summed over the profiled steps' windows (`StepAnalysis`, clipped to them) and divided by their number;
- on a GPU, only the kernels launched while the profiler recorded count: one launched before it started (the tail
  of an unprofiled step, e.g. an all-reduce waiting for a rank that is behind) belongs to no profiled step. HTA
  leaves those out too (`_filter_irrelevant_gpu_kernels`); on 2 x H200, rank 0 of resnet50 under DDP ran two such
  all-reduces (14.4 ms, waiting) inside its first step window: 18.44 % overlap with them, 20.11 % without.

The collectives across ranks (data, bus bandwidth, waiting) are `analyze.collectives`'.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

import numpy as np

from reportgen.analyze.categories import categorize
from reportgen.analyze.collectives import Call, call_bytes, collective_rows, paired, waiting_us
from reportgen.analyze.timeline import coarsen, merge_intervals
from reportgen.bundle import (
    OTHER,
    DistributedAnalysis,
    DistributedRun,
    RankOverlap,
    StepAnalysis,
    Straggler,
)
from reportgen.formats import KERNEL_CAT, LAUNCH_CATS, CollectiveArgs, Trace, TraceEvent

__all__ = ["COLLECTIVE", "collective_kind", "combine", "rank_overlap", "straggler"]

COLLECTIVE = "collective"
"""The category of communication kernels (`analyze.categories`)."""
GLOO_PREFIX = "gloo:"
"""gloo's span around a collective's work on its own thread: `gloo:all_reduce`."""
MAX_STRIP = 2000
"""Intervals kept per rank and side for the timeline strip (the shortest gaps are closed beyond it)."""
_KINDS = (
    ("all_reduce", r"all_?reduce"),
    ("all_gather", r"all_?gather"),
    ("reduce_scatter", r"reduce_?scatter"),
    ("all_to_all", r"all_?to_?all"),
    ("broadcast", r"broadcast|bcast"),
    ("send_recv", r"send_?recv|sendrecv|\bsend\b|\brecv\b"),
    ("barrier", r"barrier"),
    ("reduce", r"reduce"),
)
_KIND_RE = [(kind, re.compile(pattern, re.I)) for kind, pattern in _KINDS]


def collective_kind(name: str) -> str:
    """`all_reduce`, `all_gather`, ... from a kernel or span name (`ncclDevKernel_AllReduce_Sum_f32_RING_LL`,
    `gloo:all_reduce`); `other` when none matches."""
    return next((kind for kind, pattern in _KIND_RE if pattern.search(name)), OTHER)


_Comm = tuple[float, float, str, "CollectiveArgs | None", float, float]
"""(start, end, name, recorded args, launch order: the kernel's correlation id or a gloo span's start, duration)."""


def _split(trace: Trace, device: Literal["cuda", "cpu"]) -> tuple[list[_Comm], list[tuple[float, float]]]:
    """(collectives as (start, end, name, recorded args), compute intervals) of a rank's trace."""
    comms: list[_Comm] = []
    recorded = trace.collective_calls() if device == "cuda" else {}
    compute: list[tuple[float, float]] = []
    comm_threads: set[object] = set()
    candidates: list[tuple[float, float, object]] = []
    categories: dict[str, str] = {}
    records = trace.records()

    def category(name: str, cat: str) -> str:  # names repeat: each is categorised once
        found = categories.get(name)
        return found if found is not None else categories.setdefault(name, categorize(name, cat, device))

    launched = _launched(records) if device == "cuda" else None
    for e in records:
        if e.name is None or e.ts is None or e.dur is None or e.dur < 0:
            continue
        if device == "cuda":
            # Copies and fills are memory traffic, not compute (as HTA counts them).
            if e.cat != KERNEL_CAT or (launched is not None and e.correlation not in launched):
                continue
            if category(e.name, e.cat) == COLLECTIVE:
                order = float(e.correlation) if isinstance(e.correlation, int) else e.ts
                comms.append((e.ts, e.ts + e.dur, e.name, recorded.get(e.correlation), order, e.dur))
            else:
                compute.append((e.ts, e.ts + e.dur))
        elif e.cat == "user_annotation" and e.name.startswith(GLOO_PREFIX):
            comms.append((e.ts, e.ts + e.dur, e.name, None, e.ts, e.dur))
            comm_threads.add((e.pid, e.tid))
        elif e.cat == "cpu_op" and category(e.name, e.cat) != OTHER:
            candidates.append((e.ts, e.ts + e.dur, (e.pid, e.tid)))
    compute += [(start, end) for start, end, thread in candidates if thread not in comm_threads]
    return comms, compute


def _launched(records: Sequence[TraceEvent]) -> set[object] | None:
    """The correlations of the launches the trace recorded; None when it recorded none (then every kernel counts)."""
    found = {e.correlation for e in records if e.cat in LAUNCH_CATS and e.correlation is not None}
    return found or None


def _clipped(
    intervals: Sequence[tuple[float, float]], windows: Sequence[tuple[float, float]]
) -> tuple[np.ndarray, np.ndarray]:
    """The union of `intervals` clipped to the (disjoint) windows, as merged (starts, ends)."""
    starts: list[float] = []
    ends: list[float] = []
    for low, high in windows:
        for start, end in intervals:
            s, e = max(start, low), min(end, high)
            if e > s:
                starts.append(s)
                ends.append(e)
    return merge_intervals(starts, ends)


def _strip(merged: tuple[np.ndarray, np.ndarray], windows: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The merged intervals inside the first window, from its start, coarsened to at most `MAX_STRIP` (the chart's)."""
    if not windows:
        return []
    low, high = windows[0]
    inside = (merged[1] > low) & (merged[0] < high)
    starts, ends = coarsen(
        np.maximum(merged[0][inside], low) - low, np.minimum(merged[1][inside], high) - low, MAX_STRIP
    )
    return [(float(a), float(b)) for a, b in zip(starts, ends, strict=True)]


def _intersection_us(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
    """Length of the intersection of two merged interval sets (two-pointer sweep)."""
    (a_s, a_e), (b_s, b_e) = a, b
    i = j = 0
    total = 0.0
    while i < a_s.size and j < b_s.size:
        low, high = max(a_s[i], b_s[j]), min(a_e[i], b_e[j])
        if high > low:
            total += high - low
        if a_e[i] < b_e[j]:
            i += 1
        else:
            j += 1
    return float(total)


def rank_overlap(
    trace: Trace, device: Literal["cuda", "cpu"], steps: Sequence[StepAnalysis], rank: int
) -> tuple[RankOverlap, list[Call]]:
    """One rank's overlap per profiled step, and its collective calls in the profiled steps, in order."""
    windows = [(s.window_start_us, s.window_start_us + s.wall_us) for s in steps]
    comms, compute = _split(trace, device)
    if not windows:  # no step markers: the whole trace
        everything = [(c[0], c[1]) for c in comms] + compute
        windows = [(min(a for a, _ in everything), max(b for _, b in everything))] if everything else []
    count = max(len(windows), 1)
    comm = _clipped([(c[0], c[1]) for c in comms], windows)
    work = _clipped(compute, windows)
    overlap = RankOverlap(
        rank=rank,
        steps=len(windows),
        compute_us=float((work[1] - work[0]).sum()) / count,
        communication_us=float((comm[1] - comm[0]).sum()) / count,
        overlapped_us=_intersection_us(comm, work) / count,
        span_us=sum(high - low for low, high in windows) / count,
        compute_strip=_strip(work, windows),
        communication_strip=_strip(comm, windows),
    )
    calls = []
    for start, _, name, args, _, dur in sorted(comms, key=lambda c: c[4]):
        if any(low <= start < high for low, high in windows):
            kind = collective_kind(args.collective if args is not None else name)
            calls.append(Call(kind, start, dur, call_bytes(kind, args), args.group_size if args else None))
    return overlap, calls


def straggler(run: DistributedRun) -> Straggler | None:
    """The rank whose compiled step-time median is longest, against the fastest rank's; None with under two
    ranks timed."""
    timed = [r for r in run.ranks if r.compiled is not None and r.compiled.median_ms > 0]
    if len(timed) < 2:
        return None
    slow = max(timed, key=lambda r: (r.compiled.median_ms, -r.rank))  # type: ignore[union-attr]
    fast = min(timed, key=lambda r: (r.compiled.median_ms, r.rank))  # type: ignore[union-attr]
    assert slow.compiled is not None and fast.compiled is not None
    return Straggler(
        rank=slow.rank,
        fastest_rank=fast.rank,
        excess_percent=100.0 * (slow.compiled.median_ms / fast.compiled.median_ms - 1.0),
        separated=slow.compiled.q1_ms > fast.compiled.q3_ms,
    )


def combine(
    ranks: Sequence[tuple[RankOverlap, list[Call]]], run: DistributedRun, notes: Sequence[str] = ()
) -> DistributedAnalysis:
    """The run's analysis: each rank's overlap with its waiting (`analyze.collectives`), the collectives averaged
    over the ranks read, the straggler."""
    ordered = sorted(ranks, key=lambda found: found[0].rank)
    calls = [found[1] for found in ordered]
    steps = max((found[0].steps for found in ordered), default=1)
    pairs = paired(calls)
    waits = waiting_us(calls, pairs) if pairs is not None else None
    overlaps = [found[0] for found in ordered]
    if waits is not None:
        overlaps = [
            o.model_copy(update={"waiting_us": wait / max(o.steps, 1)}) for o, wait in zip(overlaps, waits, strict=True)
        ]
    return DistributedAnalysis(
        ranks=overlaps,
        collectives=collective_rows(calls, steps, pairs or []),
        straggler=straggler(run),
        notes=list(notes),
    )
