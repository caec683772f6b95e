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
from reportgen.formats.trace import Trace, TraceEvent, header_fields
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


class _Half(NamedTuple):
    """What one process read of its half: the kept events as plain tuples (picklable), the CPU extent, the events
    seen, and the side tables (`EventFilter.side_tables`)."""

    events: list[tuple[Any, ...]]
    first_us: float
    last_us: float
    seen: int
    tables: dict[str, Any]


def _joined(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """The two halves' side tables as one: lists in file order, mappings merged."""
    return {
        key: value + second[key] if isinstance(value, list) else {**value, **second[key]}
        for key, value in first.items()
    }


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
    return _Half(events, chooser.first_us, chooser.last_us, chooser.seen, chooser.side_tables())


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
    if first_half.seen + second_half.seen > bounds.events:
        raise TraceTooLargeError(f"it holds over {bounds.events:,} events")
    make = TraceEvent._make
    events = [make(e) for e in first_half.events] + [make(e) for e in second_half.events]
    first_us, last_us = min(first_half.first_us, second_half.first_us), max(first_half.last_us, second_half.last_us)
    header = read_header(split.head, b"]" + split.trailing, path)
    extent = (first_us, last_us) if first_us <= last_us else None
    tables = _joined(first_half.tables, second_half.tables)
    return Trace(path=path, events=events, cpu_extent_us=extent, compact=True, **tables, **header_fields(header))
