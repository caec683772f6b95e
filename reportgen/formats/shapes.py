"""A trace recorded with `record_shapes=True`, read for what the FLOP counts need: the ops with their arguments,
and each unit of work (a GPU kernel, or on a CPU trace an op's self time) with the op it ran under.

- `shaped_ops`: the `cpu_op` events named in `names`, with `Input Dims`, `Input type`, `Concrete Inputs` and
  `Input Strides`.
- `work_items`: every kernel, memcpy and memset of a GPU trace, anchored at the CPU op whose `External id` it
  carries (the innermost ATen op that launched it): (thread, start) of that op.
- `cpu_ops`: every `cpu_op` of a CPU trace, whose self times are the work there.

Untrusted input: values of the wrong type are skipped (an op without dims, a dim that is not a whole number),
and a dims list is bounded in rank and count.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from reportgen.formats.events import GPU_WORK_CATS
from reportgen.formats.trace import Trace, number

__all__ = ["Anchor", "ShapedOp", "WorkItem", "cpu_ops", "shaped_ops", "work_items"]

_MAX_TENSORS = 64
_MAX_RANK = 16

Anchor = tuple[str, float]
"""(thread, start µs) of a CPU op: `pid/tid` and `ts`."""


@dataclass(frozen=True)
class ShapedOp:
    """One call of an op with its recorded arguments."""

    name: str
    thread: str
    ts: float
    dur: float
    dims: tuple[tuple[int, ...], ...]
    types: tuple[str, ...]
    concrete: tuple[str, ...]
    strides: tuple[tuple[int, ...], ...] = ()
    """`Input Strides` where the trace has them (torch ≥ 2.1), else empty."""

    def contains(self, anchor: Anchor) -> bool:
        return anchor[0] == self.thread and self.ts <= anchor[1] <= self.ts + self.dur


@dataclass(frozen=True)
class WorkItem:
    """A kernel (or a CPU op's self time): its name, its time (µs), the op it ran under (None: unknown) and its
    event category (`kernel`, `gpu_memcpy`, `gpu_memset`, `cpu_op`)."""

    name: str
    dur: float
    anchor: Anchor | None
    cat: str = "kernel"


def _thread(event: dict[str, Any]) -> str:
    return f"{event.get('pid')}/{event.get('tid')}"


def _dims(value: object) -> tuple[tuple[int, ...], ...] | None:
    if not isinstance(value, list) or len(value) > _MAX_TENSORS:
        return None
    out = []
    for dims in value:
        if not isinstance(dims, list) or len(dims) > _MAX_RANK:
            return None
        if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims):
            return None
        out.append(tuple(dims))
    return tuple(out)


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > _MAX_TENSORS:
        return ()
    return tuple(v if isinstance(v, str) else "" for v in value)


def _raw(trace: Trace) -> Iterable[dict[str, Any]]:
    return (e for e in trace.events if isinstance(e, dict))


def shaped_ops(trace: Trace, names: frozenset[str]) -> list[ShapedOp]:
    """The calls of the ops in `names` with their recorded arguments, in trace order."""
    found = []
    for event in _raw(trace):
        if event.get("cat") != "cpu_op" or event.get("name") not in names:
            continue
        args = event.get("args")
        ts, dur = number(event.get("ts")), number(event.get("dur"))
        if not isinstance(args, dict) or ts is None or dur is None or dur < 0:
            continue
        dims = _dims(args.get("Input Dims"))
        if dims is None:
            continue
        types, concrete = _strings(args.get("Input type")), _strings(args.get("Concrete Inputs"))
        strides = _dims(args.get("Input Strides")) or ()
        found.append(ShapedOp(str(event["name"]), _thread(event), ts, dur, dims, types, concrete, strides))
    return found


def work_items(trace: Trace) -> list[WorkItem]:
    """Every kernel, memcpy and memset of a GPU trace, anchored at the CPU op whose `External id` it carries."""
    events = list(_raw(trace))
    ops: dict[object, Anchor] = {}
    for event in events:
        args = event.get("args")
        ts = number(event.get("ts"))
        if event.get("cat") == "cpu_op" and isinstance(args, dict) and ts is not None:
            ops.setdefault(args.get("External id"), (_thread(event), ts))
    work = []
    for event in events:
        name, dur, args, cat = event.get("name"), number(event.get("dur")), event.get("args"), event.get("cat")
        if cat not in GPU_WORK_CATS or not isinstance(name, str) or dur is None or dur < 0:
            continue
        external = args.get("External id") if isinstance(args, dict) else None
        work.append(WorkItem(name, dur, ops.get(external) if external is not None else None, str(cat)))
    return work


def cpu_ops(trace: Trace) -> list[tuple[str, str, float, float]]:
    """(name, thread, start, duration µs) of every `cpu_op`: on a CPU trace, the work itself."""
    found = []
    for event in _raw(trace):
        name, ts, dur = event.get("name"), number(event.get("ts")), number(event.get("dur"))
        if event.get("cat") == "cpu_op" and isinstance(name, str) and ts is not None and dur is not None and dur >= 0:
            found.append((name, _thread(event), ts, dur))
    return found
