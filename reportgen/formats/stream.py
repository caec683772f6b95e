"""Streaming chrome-trace reader: what the analyses need from a trace of any size, in bounded memory.

`read_trace(path, device)` inflates gzip on a second thread (`inflate`), cuts the text of `traceEvents`
into ~2 MB pieces of whole events and parses each with orjson (`trace_text`); text that does not cut that
way is parsed one event at a time with ijson (yajl2 C backend). A plain-JSON trace over 64 MB is read as
two halves in two processes (`halves`). Only the events an analysis reads are kept (`event_filter`), as
`TraceEvent`s holding the keys it reads (`ph cat name pid tid ts dur args.correlation`), with interned
names:

- GPU work (`kernel`, `gpu_memcpy`, `gpu_memset`) and launches (`cuda_runtime`, `cuda_driver`) that
  carry a `correlation`;
- CPU spans (steps, compiled regions, `CompiledFunction[Backward]`, `## ... ##`, user annotations); on a
  CPU run (`device="cpu"`) every `cpu_op` too, since the kernel table there is built from them;
- the extent of all CPU events (`Trace.cpu_extent_us`), which the whole-trace window needs.

Everything else (the bulk of a GPU trace: ATen ops, Python functions, flows) is counted and dropped, so
results equal those of `load_trace` (a test pins that) while memory follows what is kept, not the file.
Header keys (`deviceProperties`, `displayTimeUnit`, `baseTimeNanoseconds`, `distributedInfo`) are read
from the file's first and last megabyte, before or after `traceEvents`.

Every read is bounded (`bounds.TraceBounds`: the text's size and inflate ratio, the events, the text without a
complete event, the names kept); a trace past one is one `AnalysisError` saying which, never more work.
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import io
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

import ijson

from reportgen.errors import AnalysisError
from reportgen.formats.bounds import BOUND_HINT, DEFAULT_BOUNDS, TraceBounds, TraceTooLargeError
from reportgen.formats.event_filter import EventFilter
from reportgen.formats.halves import read_halves
from reportgen.formats.inflate import CHUNK, EDGE_BYTES, InflatedSource
from reportgen.formats.trace import RERUN_HINT, Trace, header_fields, load_trace
from reportgen.formats.trace_text import EVENTS_START as _EVENTS_START
from reportgen.formats.trace_text import EventText, NotChunkableError, read_header

__all__ = ["paused_gc", "read_trace"]

_PIECE = 2 << 20  # bytes of `traceEvents` text parsed at a time (see `EventText`)
_PARALLEL_BYTES = 64 << 20
_EXACT_ERROR_BYTES = 256 << 20


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic-GC passes for the duration: reading creates millions of acyclic objects, and each
    pass would walk all of them (~30 % of the analysis time on a 100 MB trace)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def read_trace(
    path: str | Path,
    device: Literal["cuda", "cpu"] = "cuda",
    parallel: bool | None = None,
    bounds: TraceBounds = DEFAULT_BOUNDS,
) -> Trace:
    """Stream a `.json.gz` or `.json` chrome trace into a `Trace` holding only what the analyses read.

    A plain-JSON trace over 64 MB is read by two processes, each parsing half of `traceEvents` (see
    `halves.read_halves`); `parallel` forces that on or off.

    :raises AnalysisError: missing or unreadable file, truncated gzip, invalid JSON (with the byte offset
        in the decompressed text), not a chrome trace, or past one of `bounds`
    """
    path = Path(path)
    if not path.exists():
        raise AnalysisError("trace file not found", path=path, hint="check the bundle's manifest.json `trace_file`")
    if parallel is None:
        parallel = (os.cpu_count() or 1) > 1 and path.is_file() and path.stat().st_size > _PARALLEL_BYTES
    try:
        with paused_gc():
            if parallel and (halves := read_halves(path, device, _PIECE, bounds)) is not None:
                return halves
            return _read_stream(path, device, bounds)
    except TraceTooLargeError as exc:
        raise AnalysisError(f"trace not read: {exc}", path=path, hint=BOUND_HINT) from None


def _marked(items: Iterable[Any], source: InflatedSource) -> Iterator[Any]:
    """`items`, noting in `source` where each ended (it refuses text that holds no complete event)."""
    source.mark = source.position
    for item in items:
        source.mark = source.position
        yield item


def _read_stream(path: Path, device: Literal["cuda", "cpu"], bounds: TraceBounds) -> Trace:
    """One stream: orjson on pieces of the text (`EventText`), or ijson when the text does not cut."""
    source = InflatedSource(path, bounds)
    chooser = EventFilter(device, bounds)
    try:
        try:
            reader = io.BufferedReader(source, CHUNK)
            head = reader.read(EDGE_BYTES)
            opening = _EVENTS_START.search(head)
            if opening is None:
                raise NotChunkableError("no `traceEvents` in the first megabyte")
            text = EventText(reader.read, _PIECE, True, head[opening.end() :], bounds.event_bytes)
            for events in text:
                chooser.keep(events)
            header = read_header(head, b"]" + text.trailing, path)
        except NotChunkableError:
            source.close()
            source, chooser = InflatedSource(path, bounds), EventFilter(device, bounds)
            items = ijson.items(io.BufferedReader(source, CHUNK), "traceEvents.item", use_float=True)
            chooser.keep(_marked(items, source))
            header = read_header(bytes(source.head), source.tail, path)
    except (EOFError, zlib.error, ijson.JSONError, OSError) as exc:
        raise _explain(path, exc, source.position) from None
    finally:
        source.close()
    extent = (chooser.first_us, chooser.last_us) if chooser.first_us <= chooser.last_us else None
    return Trace(
        path=path,
        events=chooser.events,
        cpu_extent_us=extent,
        compact=True,
        **chooser.side_tables(),
        **header_fields(header),
    )


def _explain(path: Path, exc: BaseException, position: int) -> AnalysisError:
    """The error for a trace the stream could not read.

    Up to 256 MB, the full loader reads the file again for its exact message (the byte offset from
    orjson, gzip's own wording); beyond, the message gives the offset the stream had reached.
    """
    if path.is_file() and path.stat().st_size <= _EXACT_ERROR_BYTES:
        try:
            load_trace(path, TraceBounds(inflated_bytes=_EXACT_ERROR_BYTES))
        except AnalysisError as exact:
            if exact.hint != BOUND_HINT:  # past the bound of this second look: the stream's message
                return exact
    if isinstance(exc, OSError) and not isinstance(exc, gzip.BadGzipFile):
        return AnalysisError(f"cannot read trace file: {exc.strerror or exc}", path=path)
    if isinstance(exc, ijson.JSONError):
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        message = f"invalid JSON near byte {position:,} of the decompressed text: {detail}"
    else:
        message = str(exc) if isinstance(exc, EOFError) else f"invalid gzip data: {exc}"
    return AnalysisError(message, path=path, hint=RERUN_HINT)
