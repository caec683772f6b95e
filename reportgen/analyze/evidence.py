"""Compiled-region evidence straight from the profiled trace: how many regions, how nested, how split.

Dynamo wraps every call of a compiled frame in a CPU-side `Torch-Compiled Region: <frame>/<compile>` event.
A graph break ends the frame's graph; the code after it runs as a new, resumed frame that Dynamo compiles
too, called from inside the frame that broke. So N breaks in one frame show up as N + 1 distinct region
names, N of them starting inside another region event on the same thread, and (in training) as N + 1
`CompiledFunction` blocks per step instead of one.

Only CPU-side complete events (`ph` "X", cat `cpu_op` or `user_annotation`) count; GPU-side copies of
annotations are ignored. One pass collects the region spans per (pid, tid), the `CompiledFunction` starts
and the `ProfilerStep#N` spans; nesting is a stack sweep per thread, steps a bisect.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from reportgen.bundle import RegionEvidence
from reportgen.formats import CPU_CATS, FORWARD_SPAN, REGION_PREFIX, STEP_PREFIX, Trace, TraceEvent

__all__ = ["region_evidence"]

_REGION = f"{REGION_PREFIX}:"


class _Span(NamedTuple):
    name: str
    start: float
    end: float
    thread: tuple[object, object]


def region_evidence(trace: Trace) -> RegionEvidence:
    """Count compiled regions, nested region events and `CompiledFunction` blocks per profiled step.

    :param trace: the bundle's profiled trace
    """
    regions: dict[tuple[object, object], list[_Span]] = {}
    forward_starts: list[float] = []
    steps: list[_Span] = []
    for span in _iter_cpu_spans(trace.records()):
        if span.name.startswith(_REGION):
            regions.setdefault(span.thread, []).append(span)
        elif span.name == FORWARD_SPAN:
            forward_starts.append(span.start)
        elif span.name.startswith(STEP_PREFIX):
            steps.append(span)
    return RegionEvidence(
        compiled_regions=len({span.name for spans in regions.values() for span in spans}),
        nested_regions=sum(_nested_count(spans) for spans in regions.values()),
        compiled_function_blocks_per_step=_per_step(forward_starts, steps),
    )


def _iter_cpu_spans(events: Sequence[TraceEvent]) -> Iterator[_Span]:
    """The CPU-side complete events with a name, start and non-negative duration."""
    for event in events:
        if event.ph != "X" or event.cat not in CPU_CATS:
            continue
        name, ts, dur = event.name, event.ts, event.dur
        if name is not None and ts is not None and dur is not None and dur >= 0:
            yield _Span(name, ts, ts + dur, (event.pid, event.tid))


def _nested_count(spans: list[_Span]) -> int:
    """How many of one thread's region spans start inside another one (stack sweep in start order)."""
    spans.sort(key=lambda span: (span.start, -span.end))
    open_ends: list[float] = []
    nested = 0
    for span in spans:
        while open_ends and span.start >= open_ends[-1]:
            open_ends.pop()
        nested += bool(open_ends)
        open_ends.append(span.end)
    return nested


def _per_step(forward_starts: Sequence[float], steps: list[_Span]) -> float | None:
    """`CompiledFunction` events starting inside a `ProfilerStep#N` span, per step; None without steps."""
    if not steps:
        return None
    steps.sort(key=lambda span: span.start)
    starts = [span.start for span in steps]
    inside = 0
    for ts in forward_starts:
        i = bisect_right(starts, ts) - 1
        inside += i >= 0 and ts < steps[i].end
    return inside / len(steps)
