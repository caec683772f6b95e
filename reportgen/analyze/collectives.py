"""A distributed run's collectives across its ranks: data moved, bus bandwidth, and the time each rank's collectives
spent waiting for the others.

Sizes and bus bandwidth follow nccl-tests' conventions (its PERFORMANCE.md): a call moves S bytes (all-reduce,
broadcast, reduce: the buffer; all-gather: the gathered output; reduce-scatter: the whole input; all-to-all: the
input); algorithm bandwidth is S / t and bus bandwidth is that times 2(n-1)/n for all-reduce, (n-1)/n for
all-gather, reduce-scatter and all-to-all, 1 for the others, with n ranks in the group.

A collective kernel runs from the moment its rank reaches the call until every rank has, and then moves the data.
The same call on every rank (the k-th collective of each: NCCL keeps one order per group) takes the shortest time on
the rank that arrived last: that time is the transfer, and bus bandwidth is computed from it. What each rank's
kernel took beyond it is **waiting** for the others: communication time that moved no data.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import NamedTuple

from reportgen.bundle import CollectiveRow
from reportgen.formats import CollectiveArgs

__all__ = ["ELEMENT_BYTES", "MIN_PAIRED", "Call", "bus_factor", "call_bytes", "collective_rows", "paired", "waiting_us"]

ELEMENT_BYTES = {
    "Double": 8,
    "Long": 8,
    "ComplexFloat": 8,
    "Float": 4,
    "Int": 4,
    "Half": 2,
    "BFloat16": 2,
    "Short": 2,
    "Char": 1,
    "Byte": 1,
    "Bool": 1,
    "Float8_e4m3fn": 1,
    "Float8_e5m2": 1,
    "Float8_e4m3fnuz": 1,
    "Float8_e5m2fnuz": 1,
}
"""Bytes per element of the profiler's `dtype` names (c10's ScalarType names)."""
MIN_PAIRED = 0.9
"""Share of each rank's calls that must pair up with the others' for waiting and bus bandwidth to be given."""


class Call(NamedTuple):
    """One collective kernel (or gloo span) of a rank in its profiled steps; a rank's calls are in launch order."""

    kind: str
    start_us: float
    dur_us: float
    size_bytes: float | None
    """nccl-tests' S: None when the trace records no sizes (gloo, torch < 2.1) or an unknown element type."""
    group_size: int | None


def bus_factor(kind: str, ranks: int) -> float | None:
    """Bus bandwidth / algorithm bandwidth for a collective over `ranks` ranks (None for a barrier or one unknown)."""
    if ranks < 1:
        return None
    if kind == "all_reduce":
        return 2.0 * (ranks - 1) / ranks
    if kind in ("all_gather", "reduce_scatter", "all_to_all"):
        return (ranks - 1) / ranks
    if kind in ("broadcast", "reduce", "send_recv"):
        return 1.0
    return None


def call_bytes(kind: str, args: CollectiveArgs | None) -> float | None:
    """nccl-tests' S of one call from its recorded element counts and type."""
    if args is None or args.dtype not in ELEMENT_BYTES:
        return None
    counts = [c for c in (args.in_nelems, args.out_nelems) if c is not None]
    if not counts:
        return None
    if kind in ("all_gather", "reduce_scatter"):
        elements = max(counts)  # the whole gathered output, the whole scattered input
    else:
        elements = args.in_nelems if args.in_nelems is not None else counts[0]
    return float(elements * ELEMENT_BYTES[args.dtype])


def paired(ranks: Sequence[Sequence[Call]]) -> list[tuple[int, ...]] | None:
    """The calls that are the same call on every rank, as one index per rank (rank order as given); None when fewer
    than `MIN_PAIRED` of any rank's calls pair up, or with under two ranks.

    NCCL runs a group's collectives in the order each rank launched them, so the ranks' launch-ordered calls line up;
    a call cut off at the profile's edge on one rank (launched before profiling began) is left out by aligning the
    ranks' (kind, size) sequences with rank 0's."""
    if len(ranks) < 2 or not all(ranks):
        return None
    first = [(c.kind, c.size_bytes) for c in ranks[0]]
    maps: list[dict[int, int]] = []
    for calls in ranks[1:]:
        blocks = SequenceMatcher(None, first, [(c.kind, c.size_bytes) for c in calls], autojunk=False)
        maps.append({a + k: b + k for a, b, size in blocks.get_matching_blocks() for k in range(size)})
    pairs = [(i, *(m[i] for m in maps)) for i in range(len(first)) if all(i in m for m in maps)]
    if any(len(pairs) < MIN_PAIRED * len(calls) for calls in ranks):
        return None
    return pairs


def _shortest(ranks: Sequence[Sequence[Call]], pairs: list[tuple[int, ...]]) -> list[float]:
    return [min(ranks[r][i].dur_us for r, i in enumerate(pair)) for pair in pairs]


def waiting_us(ranks: Sequence[Sequence[Call]], pairs: list[tuple[int, ...]] | None = None) -> list[float] | None:
    """Per rank, in the order given: the time its paired calls took beyond the same call's shortest copy on any rank,
    summed; None when the ranks' calls do not pair up (`paired`, computed here unless given)."""
    pairs = paired(ranks) if pairs is None else pairs
    if pairs is None:
        return None
    shortest = _shortest(ranks, pairs)
    return [
        sum(ranks[r][pair[r]].dur_us - low for pair, low in zip(pairs, shortest, strict=True))
        for r in range(len(ranks))
    ]


def collective_rows(
    ranks: Sequence[Sequence[Call]], steps: int, pairs: list[tuple[int, ...]] | None = None
) -> list[CollectiveRow]:
    """One row per kind of collective, averaged over the ranks and per step: calls, time, data (the paired calls',
    else every rank's calls of known size, averaged), and bus bandwidth over the paired calls' shortest copies (None
    when they do not pair up or carry no sizes)."""
    read, steps = max(len(ranks), 1), max(steps, 1)
    pairs = (paired(ranks) if pairs is None else pairs) or []
    shortest = _shortest(ranks, pairs)
    rows: list[CollectiveRow] = []
    for kind in sorted({c.kind for calls in ranks for c in calls}):
        mine = [[c for c in calls if c.kind == kind] for calls in ranks]
        same = [(ranks[0][pair[0]], low) for pair, low in zip(pairs, shortest, strict=True)]
        same = [(c, low) for c, low in same if c.kind == kind]
        sizes = [c.size_bytes for c, _ in same] if same else [c.size_bytes for calls in mine for c in calls]
        known = [size for size in sizes if size is not None]
        data = sum(known) / (1 if same else read) / steps if known else None
        bus = None
        if same and data is not None:
            moved = sum((c.size_bytes or 0.0) * (bus_factor(kind, c.group_size or len(ranks)) or 0.0) for c, _ in same)
            took = sum(low for c, low in same if c.size_bytes is not None)
            bus = moved / took / 1e3 if took > 0 and moved > 0 else None  # bytes per us / 1e3 = GB/s
        rows.append(
            CollectiveRow(
                kind=kind,
                calls=round(sum(len(calls) for calls in mine) / read / steps),
                time_us=sum(c.dur_us for calls in mine for c in calls) / read / steps,
                bytes=data,
                bus_gbps=bus,
            )
        )
    return sorted(rows, key=lambda row: -row.time_us)
