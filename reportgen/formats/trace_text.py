"""The text of a chrome trace, read in pieces: `traceEvents` cut into lists of whole events (orjson), and
the top-level keys before and after it (`read_header`, `find_closing`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ijson
import orjson

from reportgen.errors import AnalysisError
from reportgen.formats.bounds import MAX_EVENT_BYTES, TraceTooLargeError

__all__ = ["BETWEEN_EVENTS", "EVENTS_START", "EventText", "NotChunkableError", "find_closing", "read_header"]

EVENTS_START = re.compile(rb'"traceEvents"\s*:\s*\[')
BETWEEN_EVENTS = re.compile(rb"\}\s*,\s*\{")
_CANDIDATE = re.compile(rb'\](?:\s*,\s*(?="))?\s*(?=["}])')
"""A `]` that may close `traceEvents`: followed by `}` or by `,` and a key; the match ends where the rest starts."""
_TRAILING_BYTES = 1 << 20
"""The keys after `traceEvents` are a few (`traceName`, `displayTimeUnit`, ...): a closing `]` lies in the last MiB."""
_CLOSING_BUDGET = 4 << 30
"""Bytes `find_closing` may parse in all (~0.5 s): each parse reads the whole remainder, and a crafted tail holds a
candidate every few bytes; the profiler's last MiB of events costs ~0.3 GB."""


class NotChunkableError(Exception):
    """The fast path cannot cut this text into whole events: the caller falls back to ijson."""


class EventText:
    """`traceEvents` as lists of events: the text is cut into pieces of about `piece` bytes at `}, {`
    and each piece is parsed with orjson as `[piece]`.

    A piece parses only if it holds whole events at the array's top level (balanced brackets), so a
    cut inside an event (a `}, {` in nested data) is caught, and the piece is carried into the next.
    `read` continues right after the array's `[`; with `closing`, the array's `]` and what follows
    (`trailing`) are found at the end, else the text ends with the last event.

    :raises TraceTooLargeError: more than `max_event` bytes hold no complete event (a huge event, or padding)
    """

    def __init__(
        self,
        read: Callable[[int], bytes],
        piece: int,
        closing: bool,
        initial: bytes = b"",
        max_event: int = MAX_EVENT_BYTES,
    ) -> None:
        self._read, self._piece, self._closing, self._buf = read, piece, closing, initial
        self._max_event = max_event
        self.trailing = b""

    def __iter__(self) -> Iterator[list[Any]]:
        buf, carry, eof, piece = self._buf, b"", False, self._piece
        while True:
            cut = BETWEEN_EVENTS.search(buf, piece // 2) if len(buf) > piece // 2 else None
            if cut is None and not eof:
                if len(carry) + len(buf) > piece + self._max_event:
                    raise TraceTooLargeError(f"{self._max_event:,} bytes of its text hold no complete event")
                block = self._read(piece)
                eof = not block
                buf += block
                continue
            if cut is None:  # the end: the last events, then `]` and the rest of the object
                found = find_closing(buf) if self._closing else (len(buf), {})
                if found is None:
                    raise NotChunkableError("no closing bracket")
                close = found[0]
                self.trailing = buf[close + 1 :] if self._closing else b""
                yield _loads(carry + buf[:close])
                return
            comma = buf.index(b",", cut.start())
            text, buf = carry + buf[:comma], buf[comma + 1 :]
            try:
                events: list[Any] = orjson.loads(b"[" + text + b"]")
            except orjson.JSONDecodeError:
                if len(text) > piece + self._max_event:
                    raise TraceTooLargeError(f"an event of its text passes {self._max_event:,} bytes") from None
                carry = text + b","
                continue
            carry = b""
            yield events


def _loads(text: bytes) -> list[Any]:
    try:
        events: list[Any] = orjson.loads(b"[" + text + b"]")
    except orjson.JSONDecodeError:
        raise NotChunkableError("the last piece is not whole events") from None
    return events


def read_header(head: bytes, tail: bytes, path: Path) -> dict[str, Any]:
    """Top-level keys other than `traceEvents`: those before it (from `head`) and after it (from `tail`)."""
    found: dict[str, Any] = {}
    events_kind = None
    try:
        parser = ijson.parse(head)
        _, first, _ = next(parser)
        if first != "start_map":
            raise AnalysisError(
                f"top level is a JSON {_KINDS.get(first, 'value')}, expected an object with `traceEvents`", path=path
            )
        for prefix, event, value in parser:
            if prefix == "" and event == "map_key" and value == "traceEvents":
                events_kind = next(parser)[1]
                break
    except (ijson.JSONError, StopIteration):
        pass
    try:
        for key, value in ijson.kvitems(head, "", use_float=True):
            if key == "traceEvents":
                break
            found[key] = value
    except ijson.JSONError:  # the head ends inside traceEvents (or the file is that short)
        pass
    if events_kind not in (None, "start_array"):
        raise AnalysisError(
            f"`traceEvents` is a JSON {_KINDS.get(events_kind, 'object')}, expected an array", path=path
        )
    if events_kind is None:
        raise AnalysisError(
            "no `traceEvents`: not a torch.profiler chrome trace",
            path=path,
            hint="export the trace with `prof.export_chrome_trace(path)`",
        )
    found.update(_trailing(tail))
    return found


_KINDS = {
    "start_map": "object",
    "start_array": "array",
    "string": "string",
    "number": "number",
    "boolean": "boolean",
    "null": "null",
}


def _trailing(tail: bytes) -> dict[str, Any]:
    """Keys after `traceEvents` (see `find_closing`); empty when none or not found."""
    found = find_closing(tail)
    return found[1] if found is not None else {}


def find_closing(tail: bytes) -> tuple[int, dict[str, Any]] | None:
    """(offset of the `]` that closes `traceEvents`, the keys after it): the first `]` of `tail` whose
    remainder reads as the rest of the top-level object.

    A candidate is a `]` followed by `}` or by `,` and a key, at most `_TRAILING_BYTES` from the end; each parse
    reads the whole remainder, so the search gives up after `_CLOSING_BUDGET` bytes parsed in all."""
    if not tail.rstrip().endswith(b"}"):
        return None
    text = bytearray(tail)
    view = memoryview(text)
    budget = _CLOSING_BUDGET
    try:
        for candidate in _CANDIDATE.finditer(tail, max(0, len(tail) - _TRAILING_BYTES)):
            if budget <= 0:
                return None
            close, brace = candidate.start(), candidate.end() - 1  # the byte before the rest becomes `{`
            budget -= len(text) - brace
            saved, text[brace] = text[brace], ord("{")
            try:
                value = orjson.loads(view[brace:])
            except orjson.JSONDecodeError:
                continue
            finally:
                text[brace] = saved
            if isinstance(value, dict):
                value.pop("traceEvents", None)
                return close, value
    finally:
        view.release()
    return None
