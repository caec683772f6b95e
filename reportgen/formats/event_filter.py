"""Which streamed trace events the analyses keep (as compact `TraceEvent`s), and the extent of all CPU
events: the hot loop of the streaming reader.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from reportgen.formats.bounds import DEFAULT_BOUNDS, TraceBounds, TraceTooLargeError
from reportgen.formats.events import (
    ATEN_PREFIX,
    CPU_CATS,
    GPU_WORK_CATS,
    KERNEL_CAT,
    LAUNCH_CATS,
    is_cpu_span,
    is_graph_span,
)
from reportgen.formats.trace import CollectiveArgs, TraceEvent, collective_args, copy_bytes

__all__ = ["EventFilter"]

_GPU, _LAUNCH, _CPU = 1, 2, 3
_KIND = {**dict.fromkeys(GPU_WORK_CATS, _GPU), **dict.fromkeys(LAUNCH_CATS, _LAUNCH), **dict.fromkeys(CPU_CATS, _CPU)}


class EventFilter:
    """Which events to keep (as `TraceEvent` tuples), and the extent of all CPU events; within `bounds`: the
    events seen, each kept name's length (cut beyond it), the characters of the distinct names held."""

    def __init__(self, device: Literal["cuda", "cpu"], bounds: TraceBounds = DEFAULT_BOUNDS) -> None:
        self.all_cpu_ops = device == "cpu"
        self.bounds = bounds
        self._names_chars = 0
        self.first_us, self.last_us = float("inf"), float("-inf")
        self.seen = 0
        self.events: list[TraceEvent] = []
        self.ops: list[tuple[str, float]] = []
        """(name, ts) of the ATen ops not kept as events (GPU traces keep only spans): what the counts need."""
        self.collectives: dict[object, CollectiveArgs] = {}
        """Communication kernels' `CollectiveArgs` by their correlation (few per step: one per collective)."""
        self.copy_bytes: dict[object, int] = {}
        """Bytes each copy or fill moved (the profiler's `bytes`), by its correlation."""
        self._op_names: dict[str, str] = {}
        self._names: dict[str, str] = {}
        self._spans: dict[str, dict[str, bool]] = {}  # cat -> name -> kept: names repeat, decide once

    def side_tables(self) -> dict[str, Any]:
        """What a streamed `Trace` holds beside its events, by its fields' names: `ops` (a list), `collectives` and
        `copy_bytes` (by correlation)."""
        return {"ops": self.ops, "collectives": self.collectives, "copy_bytes": self.copy_bytes}

    def keep(self, events: Iterable[Any]) -> list[TraceEvent]:
        """Add the events worth keeping to `self.events`; returns it. The hot loop of the reader:
        one dict lookup classifies an event, and kept ones become `TraceEvent`s in place."""
        kept = self.events
        add, names, all_cpu_ops = kept.append, self._names, self.all_cpu_ops
        add_op, op_names = self.ops.append, self._op_names
        decided: dict[str, dict[str, bool]] = {cat: self._spans.setdefault(cat, {}) for cat in CPU_CATS}
        first_us, last_us, seen = self.first_us, self.last_us, 0
        budget = self.bounds.events - self.seen
        for raw in events:
            seen += 1
            if seen > budget:
                raise TraceTooLargeError(f"it holds over {self.bounds.events:,} events")
            if type(raw) is not dict:
                continue
            cat: Any = raw.get("cat")
            kind = _KIND.get(cat) if type(cat) is str else None
            if kind is None:
                continue
            name: Any = raw.get("name")
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
                    self._hold(name)
                    keep = by_name[name] = all_cpu_ops or is_cpu_span(name, cat) or is_graph_span(name)
                if not keep:
                    if ts is not None and name.startswith(ATEN_PREFIX):
                        held = op_names.get(name)
                        add_op((held if held is not None else op_names.setdefault(name, name), ts))
                    continue
                correlation = args.get("correlation") if type(args) is dict else None
            else:
                correlation = args.get("correlation") if type(args) is dict else None
                if correlation is not None and (cat != KERNEL_CAT or "Collective name" in args):  # type: ignore[operator]
                    self._note(cat, correlation, args)  # type: ignore[arg-type]  # a dict: it gave a correlation
            if type(name) is str:
                held = names.get(name)
                name = held if held is not None else self._intern(name, counted=kind == _CPU)
            elif name is not None:
                name = None
            add(TraceEvent(name, cat, raw.get("ph"), raw.get("pid"), raw.get("tid"), ts, dur, correlation))
        self.first_us, self.last_us, self.seen = first_us, last_us, self.seen + seen
        return kept

    def _note(self, cat: str, correlation: object, args: dict[str, Any]) -> None:
        """A copy's or fill's recorded bytes; a collective kernel's `CollectiveArgs`."""
        if cat != KERNEL_CAT:
            moved = copy_bytes(args)
            if moved is not None:
                self.copy_bytes[correlation] = moved
        elif "Collective name" in args:
            call = collective_args(args)
            if call is not None:
                self.collectives[correlation] = call._replace(collective=self._intern(call.collective))

    def _hold(self, name: str) -> None:
        """Count a distinct name held; past the bound on all of them, the trace is refused."""
        self._names_chars += len(name)
        if self._names_chars > self.bounds.names_chars:
            raise TraceTooLargeError(f"its distinct event names pass {self.bounds.names_chars:,} characters")

    def _intern(self, name: str, counted: bool = False) -> str:
        """The one copy of a kept name, cut to the bound on a name's length.

        :param counted: the name was held already (a CPU event's name, held when its kind was decided)
        """
        if not counted:
            self._hold(name)
        limit = self.bounds.name_chars
        short = name if len(name) <= limit else name[: limit - 1] + "…"
        self._names[name] = short
        return short
