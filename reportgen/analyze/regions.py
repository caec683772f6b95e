"""Compiled-graph spans: which graph call a CPU moment (a kernel launch, a CPU op) belongs to.

Spans indexed, per (pid, tid): `## Call CompiledFxGraph <key> ##` (torch 2.11+), `CompiledFunction`,
`CompiledFunctionBackward`, `Torch-Compiled Region: <frame>/<compile>`, sorted by start, with their
nesting from a stack sweep; a lookup is a bisect plus a walk up the (shallow) nesting.

- **Call spans**: in a trace with `## Call CompiledFxGraph ##` spans, those; otherwise every
  `CompiledFunction[Backward]` span and every `Torch-Compiled Region` that encloses none.
- **Identity** of a call: its key, else (enclosing region name, span name), so fallback graphs are told
  apart by region. **Kind**: walking outwards from the call span, `CompiledFunctionBackward` -> backward,
  `CompiledFunction` -> forward, a `Torch-Compiled Region` -> inference, none -> unknown.
- A moment inside a call span belongs to the innermost one. A moment in another graph span (a *wrapper*:
  runtime-wrapper prologue/epilogue, eager code between graph breaks) belongs to the call spans inside that
  wrapper when they are all of one graph; to no graph when they are of several (eager code at a graph
  break); and, when there are none, to the wrapper itself as a fallback call (`primary=False`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from typing import NamedTuple

from reportgen.bundle import GraphKind
from reportgen.formats import BACKWARD_SPAN, CALL_SPAN_PREFIX, CPU_SPAN_NAMES, FORWARD_SPAN, REGION_PREFIX

__all__ = ["GraphCall", "Identity", "RegionIndex", "Span", "Thread"]

Thread = tuple[object, object]
"""(pid, tid) of a CPU event."""

Identity = tuple[str, str]
"""A graph's identity: ("key", key) or (region name, span name)."""


class Span(NamedTuple):
    """A CPU-side span: a graph span, or a `ProfilerStep#N`."""

    name: str
    start: float
    end: float
    thread: Thread


class GraphCall(NamedTuple):
    """One call of a graph: its span, identity and kind; `primary` = a call span, not a fallback."""

    identity: Identity
    key: str | None
    kind: GraphKind
    start: float
    end: float
    primary: bool
    region: str | None = None
    """The innermost `Torch-Compiled Region` around it (the compiled version it ran in); None on the autograd
    thread (backward)."""


class RegionIndex:
    """Graph spans per thread, sorted by start, each resolved to the call its work belongs to (or -1)."""

    def __init__(self, spans: Iterable[Span]) -> None:
        self.calls: list[GraphCall] = []
        by_thread: dict[Thread, list[Span]] = {}
        for span in spans:
            by_thread.setdefault(span.thread, []).append(span)
        keyed = any(span.name.startswith(CALL_SPAN_PREFIX) for group in by_thread.values() for span in group)
        self._threads = {thread: self._index(group, keyed) for thread, group in by_thread.items()}

    def call_at(self, thread: Thread | None, ts: float) -> int | None:
        """Index in `calls` of the call the work anchored at `ts` on `thread` belongs to, or None."""
        entry = self._threads.get(thread) if thread is not None else None
        if entry is None:
            return None
        starts, ends, parents, calls = entry
        i = bisect_right(starts, ts) - 1
        while i >= 0 and ts >= ends[i]:
            i = parents[i]
        return calls[i] if i >= 0 and calls[i] >= 0 else None

    def _index(self, group: list[Span], keyed: bool) -> tuple[list[float], list[float], list[int], list[int]]:
        group.sort(key=lambda span: (span.start, -span.end))
        parents = [-1] * len(group)
        stack: list[int] = []
        for i, span in enumerate(group):
            while stack and span.start >= group[stack[-1]].end:
                stack.pop()
            parents[i] = stack[-1] if stack else -1
            stack.append(i)
        chains = [_chain(parents, i) for i in range(len(group))]
        is_call = _call_spans(group, chains, keyed)
        below: dict[int, list[int]] = {}
        registered: dict[int, int] = {}
        for j in (j for j in range(len(group)) if is_call[j]):
            for ancestor in chains[j][1:]:
                below.setdefault(ancestor, []).append(j)
            registered[j] = self._register(group, chains[j], primary=True)
        calls = [self._resolve(group, chains, is_call, below, registered, i) for i in range(len(group))]
        return [span.start for span in group], [span.end for span in group], parents, calls

    def _resolve(
        self,
        group: list[Span],
        chains: list[list[int]],
        is_call: list[bool],
        below: dict[int, list[int]],
        registered: dict[int, int],
        i: int,
    ) -> int:
        """The call of work directly inside span `i`: see the module docstring."""
        enclosing = next((j for j in chains[i] if is_call[j]), None)
        if enclosing is not None:
            return registered[enclosing]
        inner = below.get(i, [])
        if len({self.calls[registered[j]].identity for j in inner}) > 1:
            return -1
        if inner:
            return registered[inner[0]]
        if i not in registered:
            registered[i] = self._register(group, chains[i], primary=False)
        return registered[i]

    def _register(self, group: list[Span], chain: list[int], primary: bool) -> int:
        """Add the call of span `chain[0]` (enclosing spans follow in `chain`); return its index."""
        span = group[chain[0]]
        names = [group[j].name for j in chain]
        region = next((name for name in names if name.startswith(REGION_PREFIX)), None)
        if span.name.startswith(CALL_SPAN_PREFIX):
            key: str | None = span.name[len(CALL_SPAN_PREFIX) :].rstrip("#").strip()
            identity = ("key", key or "")
        else:
            key, identity = region, (region or "", span.name)
        self.calls.append(GraphCall(identity, key, _kind(names), span.start, span.end, primary, region))
        return len(self.calls) - 1


def _call_spans(group: list[Span], chains: list[list[int]], keyed: bool) -> list[bool]:
    """Which spans stand for one graph call: Call spans in a keyed trace; else CompiledFunction[Backward]
    spans and Torch-Compiled Regions that enclose none."""
    if keyed:
        return [span.name.startswith(CALL_SPAN_PREFIX) for span in group]
    functions = [i for i, span in enumerate(group) if span.name in CPU_SPAN_NAMES]
    wrapping = {ancestor for i in functions for ancestor in chains[i][1:]}
    return [
        span.name in CPU_SPAN_NAMES or (span.name.startswith(REGION_PREFIX) and i not in wrapping)
        for i, span in enumerate(group)
    ]


def _chain(parents: list[int], i: int) -> list[int]:
    """`i` and its enclosing spans, innermost first."""
    chain = [i]
    while parents[chain[-1]] >= 0:
        chain.append(parents[chain[-1]])
    return chain


def _kind(names: Iterable[str]) -> GraphKind:
    """The kind of a call from its span name and its enclosing spans' names, innermost first."""
    for name in names:
        if name == BACKWARD_SPAN:
            return "backward"
        if name == FORWARD_SPAN:
            return "forward"
        if name.startswith(REGION_PREFIX):
            return "inference"
    return "unknown"
