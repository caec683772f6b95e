"""Streaming chrome-trace reader: what the analyses need from a trace of any size, in bounded memory.

`read_trace(path, device)` inflates gzip on a second thread, cuts the text of `traceEvents` into ~2 MB
pieces of whole events and parses each with orjson (`_EventText`); text that does not cut that way is
parsed one event at a time with ijson (yajl2 C backend). A plain-JSON trace over 64 MB is read as two
halves in two processes. Only the events an analysis reads are kept, as `TraceEvent`s holding the keys
it reads (`ph cat name pid tid ts dur args.correlation`), with interned names:

- GPU work (`kernel`, `gpu_memcpy`, `gpu_memset`) and launches (`cuda_runtime`, `cuda_driver`) that
  carry a `correlation`;
- CPU spans (steps, compiled regions, `CompiledFunction[Backward]`, `## ... ##`, user annotations); on a
  CPU run (`device="cpu"`) every `cpu_op` too, since the kernel table there is built from them;
- the extent of all CPU events (`Trace.cpu_extent_us`), which the whole-trace window needs.

Everything else (the bulk of a GPU trace: ATen ops, Python functions, flows) is counted and dropped, so
results equal those of `load_trace` (a test pins that) while memory follows what is kept, not the file.
Header keys (`deviceProperties`, `displayTimeUnit`, `baseTimeNanoseconds`, `distributedInfo`) are read
from the file's first and last megabyte, before or after `traceEvents`.
"""

from __future__ import annotations

import collections
import contextlib
import gc
import gzip
import io
import multiprocessing
import os
import queue
import re
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Literal, NamedTuple

import ijson
import orjson

from reportgen.errors import AnalysisError
from reportgen.formats.events import CPU_CATS, GPU_WORK_CATS, LAUNCH_CATS, is_cpu_span, is_graph_span
from reportgen.formats.trace import RERUN_HINT, Trace, TraceEvent, header_fields, load_trace

__all__ = ["paused_gc", "read_trace"]

_GPU, _LAUNCH, _CPU = 1, 2, 3
_KIND = {**dict.fromkeys(GPU_WORK_CATS, _GPU), **dict.fromkeys(LAUNCH_CATS, _LAUNCH), **dict.fromkeys(CPU_CATS, _CPU)}
_EDGE_BYTES = 1 << 20
_CHUNK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_PIECE = 2 << 20
_MAX_CARRY = 64 << 20
_PARALLEL_BYTES = 64 << 20
_EXACT_ERROR_BYTES = 256 << 20
_EVENTS_START = re.compile(rb'"traceEvents"\s*:\s*\[')
_BETWEEN_EVENTS = re.compile(rb"\}\s*,\s*\{")


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


class _Source(io.RawIOBase):
    """Decompressed bytes of the trace (gzip inflated on a producer thread), keeping its head and tail."""

    def __init__(self, path: Path) -> None:
        self.path, self.position, self.head = path, 0, bytearray()
        self._tail: collections.deque[bytes] = collections.deque()
        self._tail_size, self._pending, self._done, self._stop = 0, b"", False, False
        self._chunks: queue.Queue[bytes | BaseException | None] = queue.Queue(maxsize=8)
        self._thread = threading.Thread(target=self._produce, name="reportgen-inflate", daemon=True)
        self._thread.start()

    def _put(self, item: bytes | BaseException | None) -> None:
        while not self._stop:
            try:
                self._chunks.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def close(self) -> None:
        """Stop the producer (a reader that gave up leaves no thread behind)."""
        self._stop = True
        super().close()

    def _produce(self) -> None:
        try:
            with open(self.path, "rb") as raw:
                first = raw.read(_CHUNK)
                gz = self.path.suffix == ".gz" or first.startswith(_GZIP_MAGIC)
                inflate = zlib.decompressobj(wbits=31) if gz else None
                block = first
                while block and not self._stop:
                    if inflate is None:
                        self._put(block)
                    else:
                        inflate = self._inflate(inflate, block)
                    block = raw.read(_CHUNK)
                if inflate is not None and not inflate.eof:
                    raise EOFError("truncated gzip: the compressed stream ends before its end marker")
            self._put(None)
        except BaseException as exc:  # handed to the reading thread, raised there
            self._put(exc)

    def _inflate(self, inflate: Any, block: bytes) -> Any:
        """Inflate one block; returns the decompressor for the next (a new one after a member's end)."""
        while block and not self._stop:
            if inflate.eof:  # a second gzip member (concatenated files) starts here
                block, inflate = inflate.unused_data, zlib.decompressobj(wbits=31)
                continue
            self._put(inflate.decompress(block, _CHUNK * 8))
            block = inflate.unconsumed_tail
        return inflate

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._pending
        while not data:
            if self._done:
                return 0
            item = self._chunks.get()
            if item is None:
                self._done = True
                return 0
            if isinstance(item, BaseException):
                raise item
            data = item
        size = min(len(buffer), len(data))
        buffer[:size] = data[:size]
        self._pending = data[size:]
        self._keep(bytes(data[:size]))
        return size

    def _keep(self, data: bytes) -> None:
        self.position += len(data)
        if len(self.head) < _EDGE_BYTES:
            self.head += data[: _EDGE_BYTES - len(self.head)]
        self._tail.append(data)
        self._tail_size += len(data)
        while self._tail_size - len(self._tail[0]) >= _EDGE_BYTES:
            self._tail_size -= len(self._tail.popleft())

    @property
    def tail(self) -> bytes:
        return b"".join(self._tail)


class _NotChunkableError(Exception):
    """The fast path cannot cut this text into whole events: the caller falls back to ijson."""


class _EventText:
    """`traceEvents` as lists of events: the text is cut into ~2 MB pieces at `}, {` and each piece is
    parsed with orjson as `[piece]`.

    A piece parses only if it holds whole events at the array's top level (balanced brackets), so a
    cut inside an event (a `}, {` in nested data) is caught, and the piece is carried into the next.
    `read` continues right after the array's `[`; with `closing`, the array's `]` and what follows
    (`trailing`) are found at the end, else the text ends with the last event.
    """

    def __init__(self, read: Callable[[int], bytes], closing: bool, initial: bytes = b"") -> None:
        self._read, self._closing, self._buf = read, closing, initial
        self.trailing = b""

    def __iter__(self) -> Iterator[list[Any]]:
        buf, carry, eof = self._buf, b"", False
        while True:
            cut = _BETWEEN_EVENTS.search(buf, _PIECE // 2) if len(buf) > _PIECE // 2 else None
            if cut is None and not eof:
                block = self._read(_PIECE)
                eof = not block
                buf += block
                continue
            if cut is None:  # the end: the last events, then `]` and the rest of the object
                found = _closing(buf) if self._closing else (len(buf), {})
                if found is None:
                    raise _NotChunkableError("no closing bracket")
                close = found[0]
                self.trailing = buf[close + 1 :] if self._closing else b""
                yield _loads(carry + buf[:close])
                return
            comma = buf.index(b",", cut.start())
            text, buf = carry + buf[:comma], buf[comma + 1 :]
            try:
                events = orjson.loads(b"[" + text + b"]")
            except orjson.JSONDecodeError:
                if len(text) > _MAX_CARRY:
                    raise _NotChunkableError("no whole event in 64 MB") from None
                carry = text + b","
                continue
            carry = b""
            yield events


def _loads(text: bytes) -> list[Any]:
    try:
        events = orjson.loads(b"[" + text + b"]")
    except orjson.JSONDecodeError:
        raise _NotChunkableError("the last piece is not whole events") from None
    return events


class _Filter:
    """Which events to keep (as `TraceEvent` tuples), and the extent of all CPU events."""

    def __init__(self, device: Literal["cuda", "cpu"]) -> None:
        self.all_cpu_ops = device == "cpu"
        self.first_us, self.last_us = float("inf"), float("-inf")
        self.seen = 0
        self.events: list[TraceEvent] = []
        self._names: dict[str, str] = {}
        self._spans: dict[str, dict[str, bool]] = {}  # cat -> name -> kept: names repeat, decide once

    def keep(self, events: Iterable[Any]) -> list[TraceEvent]:
        """Add the events worth keeping to `self.events`; returns it. The hot loop of the reader:
        one dict lookup classifies an event, and kept ones become `TraceEvent`s in place."""
        kept = self.events
        add, names, all_cpu_ops = kept.append, self._names, self.all_cpu_ops
        decided: dict[str, dict[str, bool]] = {cat: self._spans.setdefault(cat, {}) for cat in CPU_CATS}
        first_us, last_us, seen = self.first_us, self.last_us, 0
        for raw in events:
            seen += 1
            if type(raw) is not dict:
                continue
            cat = raw.get("cat")
            kind = _KIND.get(cat) if type(cat) is str else None
            if kind is None:
                continue
            name = raw.get("name")
            ts, dur, args = raw.get("ts"), raw.get("dur"), raw.get("args")
            ts = float(ts) if type(ts) is float or type(ts) is int else None
            dur = float(dur) if type(dur) is float or type(dur) is int else None
            if kind == _LAUNCH:
                correlation = args.get("correlation") if type(args) is dict else None
                if correlation is None:
                    continue
            elif kind == _CPU:
                if type(name) is not str:
                    continue
                if ts is not None and dur is not None and dur >= 0:
                    if ts < first_us:
                        first_us = ts
                    if ts + dur > last_us:
                        last_us = ts + dur
                by_name = decided[cat]
                keep = by_name.get(name)
                if keep is None:
                    keep = by_name[name] = all_cpu_ops or is_cpu_span(name, cat) or is_graph_span(name)
                if not keep:
                    continue
                correlation = args.get("correlation") if type(args) is dict else None
            else:
                correlation = args.get("correlation") if type(args) is dict else None
            if type(name) is str:
                name = names.setdefault(name, name)
            elif name is not None:
                name = None
            add(TraceEvent(name, cat, raw.get("ph"), raw.get("pid"), raw.get("tid"), ts, dur, correlation))
        self.first_us, self.last_us, self.seen = first_us, last_us, self.seen + seen
        return kept


def read_trace(path: str | Path, device: Literal["cuda", "cpu"] = "cuda", parallel: bool | None = None) -> Trace:
    """Stream a `.json.gz` or `.json` chrome trace into a `Trace` holding only what the analyses read.

    A plain-JSON trace over 64 MB is read by two processes, each parsing half of `traceEvents` (see
    `_read_halves`); `parallel` forces that on or off.

    :raises AnalysisError: missing or unreadable file, truncated gzip, invalid JSON (with the byte offset
        in the decompressed text), or not a chrome trace
    """
    path = Path(path)
    if not path.exists():
        raise AnalysisError("trace file not found", path=path, hint="check the bundle's manifest.json `trace_file`")
    if parallel is None:
        parallel = (os.cpu_count() or 1) > 1 and path.is_file() and path.stat().st_size > _PARALLEL_BYTES
    with paused_gc():
        if parallel and (halves := _read_halves(path, device)) is not None:
            return halves
        return _read_stream(path, device)


def _read_stream(path: Path, device: Literal["cuda", "cpu"]) -> Trace:
    """One stream: orjson on pieces of the text (`_EventText`), or ijson when the text does not cut."""
    source = _Source(path)
    chooser = _Filter(device)
    try:
        try:
            reader = io.BufferedReader(source, _CHUNK)
            head = reader.read(_EDGE_BYTES)
            opening = _EVENTS_START.search(head)
            if opening is None:
                raise _NotChunkableError("no `traceEvents` in the first megabyte")
            text = _EventText(reader.read, closing=True, initial=head[opening.end() :])
            for events in text:
                chooser.keep(events)
            header = _header(head, b"]" + text.trailing, path)
        except _NotChunkableError:
            source.close()
            source, chooser = _Source(path), _Filter(device)
            chooser.keep(ijson.items(io.BufferedReader(source, _CHUNK), "traceEvents.item", use_float=True))
            header = _header(bytes(source.head), source.tail, path)
    except (EOFError, zlib.error, ijson.JSONError, OSError) as exc:
        raise _explain(path, exc, source.position) from None
    extent = (chooser.first_us, chooser.last_us) if chooser.first_us <= chooser.last_us else None
    return Trace(path=path, events=chooser.events, cpu_extent_us=extent, compact=True, **header_fields(header))


def _explain(path: Path, exc: BaseException, position: int) -> AnalysisError:
    """The error for a trace the stream could not read.

    Up to 256 MB, the full loader reads the file again for its exact message (the byte offset from
    orjson, gzip's own wording); beyond, the message gives the offset the stream had reached.
    """
    if path.is_file() and path.stat().st_size <= _EXACT_ERROR_BYTES:
        try:
            load_trace(path)
        except AnalysisError as exact:
            return exact
    if isinstance(exc, OSError) and not isinstance(exc, gzip.BadGzipFile):
        return AnalysisError(f"cannot read trace file: {exc.strerror or exc}", path=path)
    if isinstance(exc, ijson.JSONError):
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        message = f"invalid JSON near byte {position:,} of the decompressed text: {detail}"
    else:
        message = str(exc) if isinstance(exc, EOFError) else f"invalid gzip data: {exc}"
    return AnalysisError(message, path=path, hint=RERUN_HINT)


def _header(head: bytes, tail: bytes, path: Path) -> dict[str, Any]:
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
    """Keys after `traceEvents` (see `_closing`); empty when none or not found."""
    found = _closing(tail)
    return found[1] if found is not None else {}


def _closing(tail: bytes) -> tuple[int, dict[str, Any]] | None:
    """(offset of the `]` that closes `traceEvents`, the keys after it): the first `]` of `tail` whose
    remainder reads as the rest of the top-level object."""
    start = 0
    while (close := tail.find(b"]", start)) >= 0:
        start = close + 1
        rest = tail[start:].lstrip().removeprefix(b",").lstrip()
        if not rest.rstrip().endswith(b"}"):
            continue
        try:
            value = orjson.loads(b"{" + rest)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            value.pop("traceEvents", None)
            return close, value
    return None


# --- two halves in two processes -----------------------------------------------------------------------


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


_Half = tuple[list[tuple[Any, ...]], float, float, int]


def _read_range(path: Path, start: int, end: int, device: Literal["cuda", "cpu"]) -> _Half:
    chooser, source = _Filter(device), _Range(path, start, end)
    try:
        for events in _EventText(source.read, closing=False):
            chooser.keep(events)
    finally:
        source.close()
    return [tuple(event) for event in chooser.events], chooser.first_us, chooser.last_us, chooser.seen


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
        head = fh.read(_EDGE_BYTES)
        if head.startswith(_GZIP_MAGIC):
            return None
        fh.seek(max(size - _EDGE_BYTES, 0))
        tail_at = fh.tell()
        tail = fh.read()
        opening = _EVENTS_START.search(head)
        closing = _closing(tail)
        if opening is None or closing is None:
            return None
        start, end = opening.end(), tail_at + closing[0]
        fh.seek((start + end) // 2)
        window = fh.read(_EDGE_BYTES)
        between = _BETWEEN_EVENTS.search(window)
        if between is None:
            return None
        comma = (start + end) // 2 + window.index(b",", between.start())
    trailing = tail[closing[0] + 1 :]
    return _Split(start, comma, end, head, trailing) if start < comma < end else None


def _read_halves(path: Path, device: Literal["cuda", "cpu"]) -> Trace | None:
    """Read both halves at once (this process and one worker); None when the file does not split cleanly.

    A half parses as a JSON array only if its bytes hold whole events (balanced brackets), so a split
    inside an event cannot go unnoticed: it falls back to the single-process reader.
    """
    split = _split_points(path)
    if split is None:
        return None
    start, comma, end = split.start, split.comma, split.end
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            second = pool.submit(_read_range, path, comma + 1, end, device)
            first_half = _read_range(path, start, comma, device)
            second_half = second.result()
    except (_NotChunkableError, OSError):
        return None
    make = TraceEvent._make
    events = [make(e) for e in first_half[0]] + [make(e) for e in second_half[0]]
    first_us, last_us = min(first_half[1], second_half[1]), max(first_half[2], second_half[2])
    header = _header(split.head, b"]" + split.trailing, path)
    extent = (first_us, last_us) if first_us <= last_us else None
    return Trace(path=path, events=events, cpu_extent_us=extent, compact=True, **header_fields(header))
