"""A chrome trace's text edited as a stream (credentials redacted before it is kept or published), within the
bounds of any trace read (`bounds.TraceBounds`).

The text is cut after a `"`: what is edited (a token, a password in a URL, a secret's value) lies inside one JSON
string and holds no quote, so no edit spans two pieces. Bytes are kept as they are (`surrogateescape`).
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Callable, Iterator
from pathlib import Path

from reportgen.formats.bounds import DEFAULT_BOUNDS, TraceBounds, TraceTooLargeError
from reportgen.formats.inflate import CHUNK, InflatedSource

__all__ = ["rewrite_trace", "trace_pieces"]

_STEP = 8 << 20
"""Text read at a time before it is cut after its last quote."""


def trace_pieces(path: Path, bounds: TraceBounds = DEFAULT_BOUNDS) -> Iterator[str]:
    """The trace's text (gzip inflated) in pieces that each end after a `"` (the last one: at the end).

    :raises TraceTooLargeError: past a bound of `bounds`, or more than `bounds.event_bytes` without a quote
    :raises EOFError, zlib.error, OSError: a truncated, damaged or unreadable file
    """
    source = InflatedSource(path, bounds)
    try:
        reader, carry = io.BufferedReader(source, CHUNK), b""
        while block := reader.read(_STEP):
            text = carry + block
            cut = text.rfind(b'"') + 1
            carry = text[cut:]
            if len(carry) > bounds.event_bytes:
                raise TraceTooLargeError(f"{bounds.event_bytes:,} bytes of its text hold no string")
            if cut:
                yield text[:cut].decode("utf-8", errors="surrogateescape")
        if carry:
            yield carry.decode("utf-8", errors="surrogateescape")
    finally:
        source.close()


def rewrite_trace(
    path: Path,
    edit: Callable[[str], str],
    needs: Callable[[str], bool],
    bounds: TraceBounds = DEFAULT_BOUNDS,
) -> bytes | None:
    """The trace with `edit` applied to its text, gzipped (reproducibly: no name, no time); None when `needs`
    finds nothing to edit in any piece (the file is then left as it is, and `edit` never runs).

    :raises TraceTooLargeError, EOFError, zlib.error, OSError: as `trace_pieces`
    """
    if not any(needs(piece) for piece in trace_pieces(path, bounds)):
        return None
    raw = io.BytesIO()
    with gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz:
        for piece in trace_pieces(path, bounds):
            gz.write(edit(piece).encode("utf-8", errors="surrogateescape"))
    return raw.getvalue()
