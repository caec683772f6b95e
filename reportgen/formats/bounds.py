"""What reading one chrome trace may cost: every bound declared once, and the error that says which was passed.

A trace may come from a bundle made elsewhere. Reading it (to analyse it, to redact it for publishing) streams
its text through these bounds, so a hostile trace (a gzip bomb, gigabytes of whitespace, one huge string,
millions of empty events) costs bounded memory and time and ends in one located error for that trace.
"""

from __future__ import annotations

import gzip
import io
from dataclasses import dataclass
from typing import Final

__all__ = [
    "BOUND_HINT",
    "DEFAULT_BOUNDS",
    "MAX_EVENT_BYTES",
    "MAX_INFLATED_BYTES",
    "MAX_INFLATE_RATIO",
    "MAX_NAMES_CHARS",
    "MAX_NAME_CHARS",
    "MAX_TRACE_EVENTS",
    "RATIO_FLOOR_BYTES",
    "TraceBounds",
    "TraceTooLargeError",
    "inflate_bytes",
]

MAX_INFLATED_BYTES: Final = 4 << 30
"""The trace's text (gzip inflated): 4 GiB, four times the 1 GB benchmark trace (4 M events, 12 s, 0.9 GB RSS)."""
MAX_INFLATE_RATIO: Final = 100
"""Inflated bytes per compressed byte: the profiler's traces inflate 13.5-13.9x (tests/data); a bomb ~1000x."""
RATIO_FLOOR_BYTES: Final = 64 << 20
"""The ratio is judged from this much inflated text on: a small trace costs nothing, whatever its ratio."""
MAX_TRACE_EVENTS: Final = 16_000_000
"""Entries of `traceEvents`: a 4 GiB trace at the benchmark's 4 M events per GB."""
MAX_EVENT_BYTES: Final = 16 << 20
"""Text holding no complete event (one event, or what lies between two): the profiler's are under 10 KB."""
MAX_NAME_CHARS: Final = 8192
"""A kept event's name is cut beyond this: C++ template kernel names run to 2-3 thousand characters."""
MAX_NAMES_CHARS: Final = 64 << 20
"""Characters of the distinct event names one read holds: a mixnet_l trace holds ~0.2 M."""
_INFLATE_STEP = 8 << 20


BOUND_HINT: Final = "a trace the profiler wrote stays far inside these bounds; this one is left out of the report"


class TraceTooLargeError(Exception):
    """The trace passed one of its bounds; the message says which (picklable: the two-process reader raises it)."""


@dataclass(frozen=True)
class TraceBounds:
    """The bounds one read of a trace applies (tests pass smaller ones)."""

    inflated_bytes: int = MAX_INFLATED_BYTES
    inflate_ratio: int = MAX_INFLATE_RATIO
    ratio_floor_bytes: int = RATIO_FLOOR_BYTES
    events: int = MAX_TRACE_EVENTS
    event_bytes: int = MAX_EVENT_BYTES
    name_chars: int = MAX_NAME_CHARS
    names_chars: int = MAX_NAMES_CHARS

    def check_inflated(self, inflated: int, compressed: int | None) -> None:
        """Raise when `inflated` bytes of text (from `compressed` bytes of gzip, None: a plain file) pass a bound."""
        if inflated > self.inflated_bytes:
            raise TraceTooLargeError(f"its text passes {self.inflated_bytes:,} bytes (the bound on a trace's text)")
        if compressed is not None and inflated > self.ratio_floor_bytes and inflated > self.inflate_ratio * compressed:
            raise TraceTooLargeError(
                f"{compressed:,} bytes of gzip inflate to over {inflated:,} "
                f"(more than {self.inflate_ratio}x: a decompression bomb)"
            )


DEFAULT_BOUNDS: Final = TraceBounds()


def inflate_bytes(raw: bytes, bounds: TraceBounds = DEFAULT_BOUNDS) -> bytes:
    """`raw` gzip (one member or several) inflated within `bounds`, a step at a time.

    :raises TraceTooLargeError: past the size or ratio bound
    :raises EOFError: the stream ends before its end marker
    :raises gzip.BadGzipFile, zlib.error: not gzip data, or damaged
    """
    out, inflated, source = [], 0, io.BytesIO(raw)
    with gzip.GzipFile(fileobj=source, mode="rb") as stream:
        while piece := stream.read(_INFLATE_STEP):
            inflated += len(piece)
            bounds.check_inflated(inflated, source.tell())  # the ratio so far: compressed bytes consumed
            out.append(piece)
    return b"".join(out)
