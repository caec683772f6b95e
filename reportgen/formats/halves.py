"""A large plain-JSON trace read as two halves of `traceEvents` in two processes (`read_halves`).

The worker process runs `_read_range`, so it stays a module-level function (picklable by name).
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Literal, NamedTuple

from reportgen.formats.bounds import TraceBounds, TraceTooLargeError
from reportgen.formats.event_filter import EventFilter
from reportgen.formats.inflate import EDGE_BYTES, GZIP_MAGIC
from reportgen.formats.trace import CollectiveArgs, Trace, TraceEvent, header_fields
from reportgen.formats.trace_text import (
    BETWEEN_EVENTS,
    EVENTS_START,
    EventText,
    NotChunkableError,
    find_closing,
    read_header,
)

__all__ = ["read_halves"]


class _Range:
    """`read(n)` over bytes [start, end) of a file."""

    def __init__(self, path: Path, start: int, end: int) -> None:
        self._file = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._file.seek(start)
        self._left = end - start

    def read(self, size: int) -> bytes:
        data = self._file.read(min(size, self._left)) if self._left > 0 else b""
        self._left -= len(data)
        return data

    def close(self) -> None:
        self._file.close()


_Half = tuple[
    list[tuple[Any, ...]], float, float, int, list[tuple[str, float]], dict[object, CollectiveArgs], dict[object, int]
]


def _read_range(
    path: Path, start: int, end: int, device: Literal["cuda", "cpu"], piece: int, bounds: TraceBounds
) -> _Half:
    chooser, source = EventFilter(device, bounds), _Range(path, start, end)
    try:
        for events in EventText(source.read, piece, False, max_event=bounds.event_bytes):
            chooser.keep(events)
    finally:
        source.close()
    events = [tuple(event) for event in chooser.events]
    return events, chooser.first_us, chooser.last_us, chooser.seen, chooser.ops, chooser.collectives, chooser.copy_bytes


class _Split(NamedTuple):
    """Where a plain-JSON trace's events start, split and end, and its header text around them."""

    start: int
    comma: int
    end: int
    head: bytes
    trailing: bytes


def _split_points(path: Path) -> _Split | None:
    """The first event's start, a comma between two events near the middle, the last event's end."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(EDGE_BYTES)
        if head.startswith(GZIP_MAGIC):
            return None
        fh.seek(max(size - EDGE_BYTES, 0))
        tail_at = fh.tell()
        tail = fh.read()
        opening = EVENTS_START.search(head)
        closing = find_closing(tail)
        if opening is None or closing is None:
            return None
        start, end = opening.end(), tail_at + closing[0]
        fh.seek((start + end) // 2)
        window = fh.read(EDGE_BYTES)
        between = BETWEEN_EVENTS.search(window)
        if between is None:
            return None
        comma = (start + end) // 2 + window.index(b",", between.start())
    trailing = tail[closing[0] + 1 :]
    return _Split(start, comma, end, head, trailing) if start < comma < end else None


def read_halves(path: Path, device: Literal["cuda", "cpu"], piece: int, bounds: TraceBounds) -> Trace | None:
    """Read both halves at once (this process and one worker), in pieces of about `piece` bytes (see
    `EventText`); None when the file does not split cleanly.

    A half parses as a JSON array only if its bytes hold whole events (balanced brackets), so a split
    inside an event cannot go unnoticed: it falls back to the single-process reader.

    :raises TraceTooLargeError: the file, or either half, passes one of `bounds`
    """
    bounds.check_inflated(path.stat().st_size, None)
    split = _split_points(path)
    if split is None:
        return None
    start, comma, end = split.start, split.comma, split.end
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            second = pool.submit(_read_range, path, comma + 1, end, device, piece, bounds)
            first_half = _read_range(path, start, comma, device, piece, bounds)
            second_half = second.result()
    except (NotChunkableError, OSError):
        return None
    if first_half[3] + second_half[3] > bounds.events:
        raise TraceTooLargeError(f"it holds over {bounds.events:,} events")
    make = TraceEvent._make
    events = [make(e) for e in first_half[0]] + [make(e) for e in second_half[0]]
    first_us, last_us = min(first_half[1], second_half[1]), max(first_half[2], second_half[2])
    header = read_header(split.head, b"]" + split.trailing, path)
    extent = (first_us, last_us) if first_us <= last_us else None
    ops = first_half[4] + second_half[4]
    calls, copies = {**first_half[5], **second_half[5]}, {**first_half[6], **second_half[6]}
    fields = header_fields(header)
    return Trace(
        path=path,
        events=events,
        cpu_extent_us=extent,
        compact=True,
        ops=ops,
        collectives=calls,
        copy_bytes=copies,
        **fields,
    )
