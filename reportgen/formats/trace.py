"""Read a torch.profiler (Kineto) chrome trace into a `Trace`.

The whole file is loaded at once (orjson, gzip inflated within `bounds.TraceBounds`). Consumers see only `Trace`, so a streaming reader can
replace the internals later. Raw events are passed through untouched: consumers skip events that lack
what they need (`ts`, `dur`, `name`) instead of failing.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from reportgen.errors import AnalysisError
from reportgen.formats.bounds import BOUND_HINT, DEFAULT_BOUNDS, TraceBounds, TraceTooLargeError, inflate_bytes
from reportgen.formats.events import GPU_WORK_CATS, KERNEL_CAT
from reportgen.formats.inflate import GZIP_MAGIC

__all__ = [
    "RERUN_HINT",
    "CollectiveArgs",
    "DeviceProperties",
    "Event",
    "Trace",
    "TraceEvent",
    "collective_args",
    "compact_event",
    "copy_bytes",
    "device_time_by_name",
    "header_fields",
    "load_trace",
    "number",
]

Event = Mapping[str, Any]
"""One raw chrome-trace event (`ph`, `cat`, `name`, `pid`, `tid`, `ts` and `dur` in us, `args`)."""


class TraceEvent(NamedTuple):
    """One event reduced to what the analyses read, types checked once (`compact_event`).

    `name`, `ts`, `dur` are None when missing or of the wrong type; `cat` is "" then.
    """

    name: str | None
    cat: str
    ph: object
    pid: object
    tid: object
    ts: float | None
    dur: float | None
    correlation: object


def number(value: object) -> float | None:
    """A JSON number as float; None for anything else (booleans included)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def compact_event(raw: object) -> TraceEvent | None:
    """The `TraceEvent` of a raw event; None when it is not a JSON object."""
    if not isinstance(raw, dict):
        return None
    name, cat, args = raw.get("name"), raw.get("cat"), raw.get("args")
    return TraceEvent(
        name if isinstance(name, str) else None,
        cat if isinstance(cat, str) else "",
        raw.get("ph"),
        raw.get("pid"),
        raw.get("tid"),
        number(raw.get("ts")),
        number(raw.get("dur")),
        args.get("correlation") if isinstance(args, dict) else None,
    )


class CollectiveArgs(NamedTuple):
    """What the profiler records on a communication kernel (`args` of an NCCL kernel event, torch >= 2.1):
    the collective, its element counts, the ranks in its group and the element type."""

    collective: str
    in_nelems: int | None
    out_nelems: int | None
    group_size: int | None
    dtype: str | None


_ARG_CHARS = 64


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def copy_bytes(args: object) -> int | None:
    """A copy's or fill's recorded `bytes` (a whole number, at least 0); None otherwise."""
    moved = args.get("bytes") if type(args) is dict else None
    return moved if type(moved) is int and moved >= 0 else None


def collective_args(args: object) -> CollectiveArgs | None:
    """The `CollectiveArgs` of an event's `args`; None when it names no collective. Strings are cut to 64 characters
    and malformed counts become None (a trace is untrusted input)."""
    if type(args) is not dict:
        return None
    name = args.get("Collective name")
    if not isinstance(name, str) or not name:
        return None
    dtype = args.get("dtype")
    group = _count(args.get("Group size"))
    return CollectiveArgs(
        name[:_ARG_CHARS],
        _count(args.get("In msg nelems")),
        _count(args.get("Out msg nelems")),
        group if group else None,
        dtype[:_ARG_CHARS] if isinstance(dtype, str) else None,
    )


RERUN_HINT = "the run may have been killed while writing the trace; run the recipe again"


@dataclass(frozen=True)
class DeviceProperties:
    """One GPU from the trace header's `deviceProperties`."""

    index: int
    name: str
    total_memory_bytes: int | None = None
    multiprocessor_count: int | None = None
    capability: str | None = None


@dataclass(frozen=True)
class Trace:
    """A loaded chrome trace: header metadata and the raw events.

    :param path: the file it was read from
    :param events: `traceEvents`, in file order (`ts`/`dur` are microseconds whatever the display unit)
    :param device_properties: the GPUs the profiler saw (empty for CPU-only traces)
    :param display_time_unit: `displayTimeUnit` ("ms" or "ns"); affects viewers only
    :param base_time_ns: `baseTimeNanoseconds`, the epoch offset of `ts`
    :param distributed_info: `distributedInfo` (rank, world size, backend) for distributed runs
    :param cpu_extent_us: (first start, last end) of all CPU events, when `events` is a subset
        (`reportgen.formats.stream`); None when `events` holds them all
    :param compact: `events` are `TraceEvent`s already (streamed), not raw events
    :param ops: (name, ts) of the ATen ops a streamed GPU trace left out of `events` (it keeps only spans there)
    :param collectives: a streamed trace's communication kernels' `CollectiveArgs` by their `correlation`
    :param copy_bytes: a streamed trace's copies' and fills' recorded bytes by their `correlation`
    """

    path: Path
    events: Sequence[Event] | Sequence[TraceEvent] = field(repr=False)
    device_properties: tuple[DeviceProperties, ...] = ()
    display_time_unit: str | None = None
    base_time_ns: int | None = None
    distributed_info: Mapping[str, Any] | None = None
    cpu_extent_us: tuple[float, float] | None = None
    compact: bool = False
    ops: Sequence[tuple[str, float]] = field(default=(), repr=False)
    collectives: Mapping[object, CollectiveArgs] = field(default_factory=dict, repr=False)
    copy_bytes: Mapping[object, int] = field(default_factory=dict, repr=False)

    def copies(self) -> Mapping[object, int]:
        """Bytes each copy or fill (`gpu_memcpy`, `gpu_memset`) moved, as the profiler recorded them, by correlation."""
        if self.compact:
            return self.copy_bytes
        found: dict[object, int] = {}
        for raw in self.events:
            if isinstance(raw, dict) and raw.get("cat") in GPU_WORK_CATS and raw.get("cat") != KERNEL_CAT:
                args = raw.get("args")
                moved = copy_bytes(args)
                if moved is not None and isinstance(args, dict) and "correlation" in args:
                    found[args["correlation"]] = moved
        return found

    def collective_calls(self) -> Mapping[object, CollectiveArgs]:
        """Communication kernels' `CollectiveArgs` by their `correlation` (empty when the trace records none)."""
        if self.compact:
            return self.collectives
        found: dict[object, CollectiveArgs] = {}
        for raw in self.events:
            if isinstance(raw, dict) and raw.get("cat") in GPU_WORK_CATS:
                args = raw.get("args")
                call = collective_args(args)
                if call is not None and isinstance(args, dict) and args.get("correlation") is not None:
                    found[args["correlation"]] = call
        return found

    def records(self) -> Sequence[TraceEvent]:
        """The events as `TraceEvent`s, which is what the analyses read."""
        if self.compact:
            return self.events  # type: ignore[return-value]
        return [e for e in map(compact_event, self.events) if e is not None]


def device_time_by_name(trace: Trace) -> list[tuple[str, float]]:
    """Device time (us) of the trace's GPU work summed by name, longest first, then by name."""
    time_us: dict[str, float] = {}
    for e in trace.records():
        if e.cat in GPU_WORK_CATS and e.name is not None and e.ts is not None and e.dur is not None and e.dur >= 0:
            time_us[e.name] = time_us.get(e.name, 0.0) + e.dur
    return sorted(time_us.items(), key=lambda item: (-item[1], item[0]))


def load_trace(path: str | Path, bounds: TraceBounds = DEFAULT_BOUNDS) -> Trace:
    """Load a `.json.gz` or `.json` chrome trace.

    :param path: the trace file (gzip is detected by suffix or magic bytes)
    :param bounds: its text's size and inflate ratio (the other bounds are the streaming reader's)
    :raises AnalysisError: the file is missing, unreadable, not gzip/JSON, not a chrome trace, or past `bounds`
    """
    path = Path(path)
    data = _parse_json(_decompress(_read_bytes(path, bounds), path, bounds), path)
    return Trace(path=path, events=data["traceEvents"], **header_fields(data))


def header_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """`Trace` fields from a trace's top-level keys (malformed values become None or empty)."""
    unit = data.get("displayTimeUnit")
    base = data.get("baseTimeNanoseconds")
    dist = data.get("distributedInfo")
    return {
        "device_properties": _device_properties(data.get("deviceProperties")),
        "display_time_unit": unit if isinstance(unit, str) else None,
        "base_time_ns": base if isinstance(base, int) and not isinstance(base, bool) else None,
        "distributed_info": dist if isinstance(dist, dict) else None,
    }


def _read_bytes(path: Path, bounds: TraceBounds) -> bytes:
    try:
        if path.stat().st_size > bounds.inflated_bytes:
            message = (
                f"trace not read: {path.stat().st_size:,} bytes, past {bounds.inflated_bytes:,} (its text's bound)"
            )
            raise AnalysisError(message, path=path, hint=BOUND_HINT)
        return path.read_bytes()
    except FileNotFoundError:
        raise AnalysisError(
            "trace file not found", path=path, hint="check the bundle's manifest.json `trace_file`"
        ) from None
    except OSError as exc:
        raise AnalysisError(f"cannot read trace file: {exc.strerror or exc}", path=path) from None


def _decompress(raw: bytes, path: Path, bounds: TraceBounds) -> bytes:
    if not (path.suffix == ".gz" or raw.startswith(GZIP_MAGIC)):
        return raw
    try:
        return inflate_bytes(raw, bounds)
    except TraceTooLargeError as exc:
        raise AnalysisError(f"trace not read: {exc}", path=path, hint=BOUND_HINT) from None
    except EOFError:
        message = "truncated gzip: the compressed stream ends before its end marker"
    except (gzip.BadGzipFile, zlib.error) as exc:
        message = f"invalid gzip data: {str(exc).split(' 0x')[0]}"  # the CRCs themselves say nothing more
    raise AnalysisError(message, path=path, hint=RERUN_HINT)


def _parse_json(text: bytes, path: Path) -> dict[str, Any]:
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise AnalysisError(f"invalid JSON at byte {exc.pos}: {exc.msg}", path=path, hint=RERUN_HINT) from None
    if not isinstance(data, dict):
        raise AnalysisError(f"top level is a JSON {_json_kind(data)}, expected an object with `traceEvents`", path=path)
    if "traceEvents" not in data:
        raise AnalysisError(
            "no `traceEvents`: not a torch.profiler chrome trace",
            path=path,
            hint="export the trace with `prof.export_chrome_trace(path)`",
        )
    if not isinstance(data["traceEvents"], list):
        raise AnalysisError(f"`traceEvents` is a JSON {_json_kind(data['traceEvents'])}, expected an array", path=path)
    return data


def _json_kind(value: object) -> str:
    kinds: tuple[tuple[type | tuple[type, ...], str], ...] = (
        (dict, "object"),
        (list, "array"),
        (str, "string"),
        (bool, "boolean"),
        ((int, float), "number"),
    )
    return next((kind for types, kind in kinds if isinstance(value, types)), "null")


def _device_properties(raw: object) -> tuple[DeviceProperties, ...]:
    """Typed GPUs from `deviceProperties`; malformed entries are skipped."""
    if not isinstance(raw, list):
        return ()
    out: list[DeviceProperties] = []
    for position, entry in enumerate(raw):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        index = entry.get("id")
        major, minor = entry.get("computeMajor"), entry.get("computeMinor")
        out.append(
            DeviceProperties(
                index=index if isinstance(index, int) else position,
                name=entry["name"],
                total_memory_bytes=_int_or_none(entry.get("totalGlobalMem")),
                multiprocessor_count=_int_or_none(entry.get("numSms")),
                capability=f"{major}.{minor}" if isinstance(major, int) and isinstance(minor, int) else None,
            )
        )
    return tuple(out)


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
