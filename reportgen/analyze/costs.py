"""FLOPs and bytes per kernel name, from a trace recorded with the ops' shapes (`SHAPES_TRACE_FILE`).

Each unit of work (a kernel, `formats.work_items`, or a CPU op's self time) is given to the outermost
counted op (`flops.COUNTED_OPS`) that holds its anchor on the same thread: `aten::convolution` holds the
`cudnn_convolution` that launched a cuDNN kernel, `aten::addmm` the cuBLAS kernel it launched. That op's cost
(`flops.op_cost`) is shared in proportion to time among the work that does its arithmetic (`categories.is_compute`:
the GEMM and convolution kernels, not the layout transforms, fills and elementwise kernels launched beside them;
all its work when none does), so those kernels' TFLOP/s is the op's over their time. Work no counted op holds
(Triton kernels, copies) has no cost here.

The shapes trace holds one step; the kernel table the profiled steps. A name's cost there is its cost in the
shapes step times the ratio of its launches: the same code launches the same kernels each step.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from reportgen.analyze.categories import is_compute
from reportgen.analyze.flops import COUNTED_OPS, OpCost, op_cost
from reportgen.analyze.kernels import TimedOp, self_times
from reportgen.bundle import IndexedKernel, Kernel, KernelCost, KernelTable, ModuleIndex
from reportgen.formats import ShapedOp, Trace, WorkItem, cpu_ops, shaped_ops, work_items

__all__ = ["NameCost", "name_costs", "with_costs", "with_template_estimates", "with_triton_bytes"]

logger = logging.getLogger(__name__)
_V = TypeVar("_V")


@dataclass
class NameCost:
    """One kernel name's cost in the shapes step: FLOPs and bytes of its launches, how many launches it had."""

    launches: int = 0
    flops: float = 0.0
    bytes: float | None = 0.0
    dtype_time: dict[str, float] = field(default_factory=dict)
    ops: set[str] = field(default_factory=set)

    @property
    def dtype(self) -> str:
        return max(self.dtype_time.items(), key=lambda item: item[1])[0]


def _holders(ops: Sequence[ShapedOp]) -> dict[str, tuple[list[float], list[ShapedOp]]]:
    """Per thread, the outermost counted ops (those no other counted op holds), sorted by start."""
    by_thread: dict[str, list[ShapedOp]] = {}
    for op in sorted(ops, key=lambda op: (op.ts, -op.dur)):
        kept = by_thread.setdefault(op.thread, [])
        if not kept or op.ts > kept[-1].ts + kept[-1].dur:
            kept.append(op)
    return {thread: ([op.ts for op in kept], kept) for thread, kept in by_thread.items()}


def _holder(holders: Mapping[str, tuple[list[float], list[ShapedOp]]], item: WorkItem) -> ShapedOp | None:
    if item.anchor is None or item.anchor[0] not in holders:
        return None
    starts, ops = holders[item.anchor[0]]
    index = bisect.bisect_right(starts, item.anchor[1]) - 1
    return ops[index] if index >= 0 and ops[index].contains(item.anchor) else None


def name_costs(trace: Trace, device: Literal["cuda", "cpu"]) -> dict[str, NameCost]:
    """Every work name of the trace with its launches and, where a counted op ran it, FLOPs and bytes."""
    holders = _holders(shaped_ops(trace, COUNTED_OPS))
    work = work_items(trace) if device == "cuda" else _cpu_work(trace)
    held: dict[int, list[WorkItem]] = {}
    ops: dict[int, ShapedOp] = {}
    out: dict[str, NameCost] = {}
    for item in work:
        out.setdefault(item.name, NameCost()).launches += 1
        op = _holder(holders, item)
        if op is not None:
            held.setdefault(id(op), []).append(item)
            ops[id(op)] = op
    malformed = 0
    for key, items in held.items():
        op = ops[key]
        try:
            cost = op_cost(op.name, op.dims, op.types, op.concrete)
        except (ValueError, IndexError):
            malformed += 1
            continue
        if cost is not None:
            compute = [item for item in items if is_compute(item.name, item.cat, device)]
            _share(cost, op.name, compute or items, out)
    if malformed:
        logger.warning("%d op calls with arguments unlike their schema were not counted", malformed)
    return out


def _cpu_work(trace: Trace) -> list[WorkItem]:
    """A CPU trace's ops with their self time (`kernels.self_times`, per thread), each anchored at itself."""
    by_thread: dict[str, list[TimedOp]] = {}
    for name, thread, ts, dur in cpu_ops(trace):
        by_thread.setdefault(thread, []).append(TimedOp(name, "cpu_op", ts, dur, (thread, None)))
    return [
        WorkItem(op.name, own, (thread, op.ts), "cpu_op")
        for thread, ops in by_thread.items()
        for op, own in self_times(ops)
        if own > 0
    ]


def _share(cost: OpCost, op: str, items: Sequence[WorkItem], out: dict[str, NameCost]) -> None:
    """Give `cost` to `items` in proportion to their time (equally when none took any); the op's other work
    keeps its launches only."""
    total = sum(item.dur for item in items)
    for item in items:
        share = item.dur / total if total > 0 else 1 / len(items)
        entry = out[item.name]
        entry.flops += cost.flops * share
        entry.bytes = None if entry.bytes is None or cost.bytes is None else entry.bytes + cost.bytes * share
        entry.dtype_time[cost.dtype] = entry.dtype_time.get(cost.dtype, 0.0) + item.dur
        entry.ops.add(op)


def with_costs(table: KernelTable, costs: Mapping[str, NameCost]) -> KernelTable:
    """The table's rows with `cost` where their name had FLOPs in the shapes step, scaled to the row's launches."""
    rows: list[Kernel] = []
    for row in table.kernels:
        found = costs.get(row.name)
        if found is None or found.flops <= 0 or found.launches == 0:
            rows.append(row)
            continue
        scale = row.count / found.launches
        cost = KernelCost(
            flops=found.flops * scale,
            bytes=None if found.bytes is None else found.bytes * scale,
            dtype=found.dtype,
            ops=sorted(found.ops),
        )
        rows.append(row.model_copy(update={"cost": cost}))
    return table.model_copy(update={"kernels": rows})


def with_template_estimates(table: KernelTable, index: ModuleIndex | None) -> KernelTable:
    """Triton template rows (max-autotune's GEMMs and convolutions) without a counted cost get Inductor's estimates
    (`IndexedKernel.flop`, `num_gb`: per call, times the row's launches), marked `estimated`. Only templates:
    Inductor also gives a pointwise kernel fused after an extern convolution that convolution's FLOPs. A name
    whose definitions disagree (two graphs, two sizes) is left uncounted."""
    agreed = _agreed(index, lambda k: (k.flop, k.num_gb, k.dtype) if k.flop and k.dtype else None)
    rows: list[Kernel] = []
    for row in table.kernels:
        estimates = agreed.get(row.name)
        if row.cost is not None or row.category != "triton_template" or estimates is None:
            rows.append(row)
            continue
        flop, num_gb, dtype = estimates
        cost = KernelCost(
            flops=float(flop * row.count),
            bytes=None if num_gb is None else num_gb * 1e9 * row.count,
            dtype=dtype,
            ops=[],
            estimated=True,
        )
        rows.append(row.model_copy(update={"cost": cost}))
    return table.model_copy(update={"kernels": rows})


def with_triton_bytes(table: KernelTable, index: ModuleIndex | None) -> KernelTable:
    """Triton rows without a cost get Inductor's byte estimate (`IndexedKernel.num_gb` per call, times the row's
    launches) as `estimated_bytes`; a name whose definitions disagree is left without."""
    agreed = _agreed(index, lambda k: k.num_gb if k.num_gb is not None and k.num_gb > 0 else None)
    rows = [
        row.model_copy(update={"estimated_bytes": agreed[row.name] * 1e9 * row.count})
        if row.cost is None and row.name in agreed
        else row
        for row in table.kernels
    ]
    return table.model_copy(update={"kernels": rows})


def _agreed(index: ModuleIndex | None, value: Callable[[IndexedKernel], _V | None]) -> dict[str, _V]:
    """Each kernel name's `value` where every definition of the name that has one gives the same (a name defined
    in two graphs with two sizes has none)."""
    found: dict[str, set[_V]] = {}
    for kernel in index.kernels if index is not None else []:
        if (got := value(kernel)) is not None:
            found.setdefault(kernel.name, set()).add(got)
    return {name: next(iter(values)) for name, values in found.items() if len(values) == 1}
