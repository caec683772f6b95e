"""Issue 31's check of the FLOP counts: a bundle's largest counted GEMM/convolution rows against the same ops timed
alone, in the same sitting.

    python benchmarks/roofline_check.py BUNDLE_DIR [--top 3] [--iterations 50]

A kernel row aggregates every launch of one kernel name, and one name serves many shapes (cuDNN's fprop kernel
runs most of resnet50's convolutions), so a row is checked against every op call that launched it in the
bundle's shapes step. For each of the `--top` rows with the most time whose category is a GEMM or a convolution
and whose ops are all matrix products or convolutions: each distinct call (op, dims, strides, dtypes, arguments)
is made again (random tensors of the recorded shapes and strides, on the GPU, with the recipe's
`cudnn_benchmark` and the run's TF32 settings) and timed alone (`Alone`): with CUDA events around a CUDA graph
of `--iterations` calls (the criterion's measure: no launch gaps, the events' cost spread), with events around
each call, and with the profiler (the row's own instrument). The profile also gives the share of its kernel time
that does arithmetic (`categories.is_compute`; cuDNN may add layout transforms). The row's alone TFLOP/s is then

    sum over calls of  FLOPs(call) * r(call)  /  sum over calls of  alone time(call) * compute share(call) * r(call)

with r the row's share of that call's arithmetic kernel time in the shapes step (1 for a call the row ran
alone). Printed per row: the report's achieved TFLOP/s (its FLOPs over its time in the profiled steps), alone
each way with the row's difference from it, the calls and distinct shapes, and the roof.

Measured on an H200 (2026-11-26), per-call events read the transformer's 21 µs GEMMs 14-22 % slow (their own
few microseconds) and a loop of 50 calls on a slow host 35-50 % slow (launch-bound): hence the graph.
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from tabulate import tabulate

from reportgen.analyze import analyze
from reportgen.analyze.categories import is_compute
from reportgen.analyze.flops import COUNTED_OPS, concrete_ints, op_cost
from reportgen.bundle import SHAPES_TRACE_FILE, read_capture, read_manifest
from reportgen.formats import GPU_WORK_CATS, ShapedOp, WorkItem, load_trace, shaped_ops, work_items

__all__: list[str] = []

_DTYPES = {"float": torch.float32, "c10::BFloat16": torch.bfloat16, "c10::Half": torch.float16}
_TIMED = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::convolution", "aten::convolution_backward")
_CATEGORIES = ("extern_gemm", "conv")


def _call(op: ShapedOp) -> tuple[Callable[..., Any], tuple[object, ...]]:
    """The op and its arguments made again on the GPU."""

    def tensor(i: int) -> torch.Tensor:
        dtype = _DTYPES[op.types[i]]
        if i < len(op.strides) and len(op.strides[i]) == len(op.dims[i]):  # the recorded layout (0: expanded)
            size = 1 + sum((d - 1) * s for d, s in zip(op.dims[i], op.strides[i], strict=True) if d > 0)
            return torch.randn(size, device="cuda", dtype=dtype).as_strided(op.dims[i], op.strides[i])
        return torch.randn(op.dims[i], device="cuda", dtype=dtype)

    c = op.concrete
    if op.name in ("aten::mm", "aten::bmm"):
        return getattr(torch.ops.aten, op.name[6:]), (tensor(0), tensor(1))
    if op.name in ("aten::addmm", "aten::baddbmm"):
        return getattr(torch.ops.aten, op.name[6:]), (tensor(0), tensor(1), tensor(2))
    if op.name == "aten::convolution":
        bias = tensor(2) if op.dims[2] else None
        args = (
            concrete_ints(c[3]),
            concrete_ints(c[4]),
            concrete_ints(c[5]),
            c[6] == "True",
            concrete_ints(c[7]),
            int(c[8]),
        )
        return torch.ops.aten.convolution, (tensor(0), tensor(1), bias, *args)
    mask = [part.strip() == "True" for part in c[10].strip("[]").split(",")]
    args = (
        concrete_ints(c[3]) or None,
        concrete_ints(c[4]),
        concrete_ints(c[5]),
        concrete_ints(c[6]),
        c[7] == "True",
        concrete_ints(c[8]),
        int(c[9]),
        mask,
    )
    return torch.ops.aten.convolution_backward, (tensor(0), tensor(1), tensor(2), *args)


@dataclass(frozen=True)
class Alone:
    """One op call timed alone, three ways (ms per call)."""

    graphed_ms: float | None
    """CUDA events around a CUDA graph of `iterations` calls, replayed 5 times (median / iterations): no launch
    gaps and the events' own cost spread over the calls. None when the op cannot be captured."""
    spaced_ms: float
    """Each call between its own events, after a 0.2 ms sleep kernel (no launch gap inside the events, but the
    events' few microseconds count against a short kernel)."""
    cupti_ms: float
    """The arithmetic kernels' time per call as the profiler records it: the instrument of the row itself."""
    share: float
    """The share of the call's kernel time that does arithmetic (`categories.is_compute`)."""


def _graphed_ms(call: Callable[..., Any], args: tuple[object, ...], iterations: int) -> float | None:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            call(*args)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            for _ in range(iterations):
                call(*args)
    except RuntimeError:
        return None
    graph.replay()
    rounds = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        rounds.append(float(start.elapsed_time(end)) / iterations)
    return statistics.median(rounds)


def _spaced_ms(call: Callable[..., Any], args: tuple[object, ...], iterations: int) -> float:
    spaced = []
    for _ in range(iterations):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(400_000)  # about 0.2 ms at 2 GHz
        start.record()
        call(*args)
        end.record()
        end.synchronize()
        spaced.append(float(start.elapsed_time(end)))
    return statistics.median(spaced)


def _profiled(call: Callable[..., Any], args: tuple[object, ...], calls: int = 20) -> tuple[float, float]:
    """(arithmetic kernel ms per call, its share of all kernel time) from a profile of the op alone."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            call(*args)
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        prof.export_chrome_trace(f"{tmp}/alone.json")
        events = load_trace(Path(f"{tmp}/alone.json")).events
    work = [e for e in events if isinstance(e, dict) and e.get("cat") in GPU_WORK_CATS]
    total = sum(float(e["dur"]) for e in work)
    compute = sum(float(e["dur"]) for e in work if is_compute(str(e["name"]), str(e["cat"]), "cuda"))
    return compute / calls / 1000, (compute / total if total > 0 else 1.0)


def _alone(op: ShapedOp, iterations: int) -> Alone:
    call, args = _call(op)
    for _ in range(10):
        call(*args)
    torch.cuda.synchronize()
    cupti_ms, share = _profiled(call, args)
    return Alone(_graphed_ms(call, args, iterations), _spaced_ms(call, args, iterations), cupti_ms, share)


def _signature(op: ShapedOp) -> tuple[object, ...]:
    return (op.name, op.dims, op.strides, op.types, op.concrete)


def _calls_by_op(ops: list[ShapedOp], work: list[WorkItem]) -> dict[int, tuple[ShapedOp, list[WorkItem]]]:
    """The work of each outermost timed op call, found by the anchor of each kernel on the op's thread."""
    timed = [op for op in ops if op.name in _TIMED]
    out: dict[int, tuple[ShapedOp, list[WorkItem]]] = {}
    for item in work:
        if item.anchor is None:
            continue
        holder = next((op for op in timed if op.contains(item.anchor)), None)
        if holder is not None:
            out.setdefault(id(holder), (holder, []))[1].append(item)
    return out


def _versus(achieved: float, flops: float, alone_ms: float) -> str:
    """The alone TFLOP/s and the row's difference from it (— when not timed)."""
    if not alone_ms > 0:
        return "—"
    tflops = flops / (alone_ms * 1e-3) / 1e12
    return f"{tflops:.1f} ({100 * (achieved / tflops - 1):+.1f} %)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--top", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=50)
    args = parser.parse_args()
    manifest = read_manifest(args.bundle)
    capture = read_capture(args.bundle, manifest)
    torch.backends.cudnn.benchmark = manifest.recipe.cudnn_benchmark
    torch.backends.cuda.matmul.allow_tf32 = bool(capture.tf32_matmul)
    torch.backends.cudnn.allow_tf32 = bool(capture.tf32_cudnn)
    analysis = analyze(args.bundle, manifest, capture)
    trace = load_trace(args.bundle / SHAPES_TRACE_FILE)
    calls = _calls_by_op(sorted(shaped_ops(trace, COUNTED_OPS), key=lambda op: op.ts), work_items(trace))
    counted = [row for row in analysis.kernels.kernels if row.cost is not None]
    print(f"{args.bundle.name}: {len(counted)} of {len(analysis.kernels.kernels)} kernel rows counted, "
          f"{100 * sum(r.device_time_us for r in counted) / analysis.kernels.total_us:.1f} % of the time; "
          f"roof {analysis.roof.model if analysis.roof else None}; cudnn.benchmark "
          f"{manifest.recipe.cudnn_benchmark}")  # fmt: skip
    checked = [r for r in counted if r.category in _CATEGORIES and r.cost and set(r.cost.ops) <= set(_TIMED)]
    alone_cache: dict[tuple[object, ...], Alone] = {}
    table = []
    for row in checked[: args.top]:
        assert row.cost is not None
        flops, graphed, spaced, cupti = 0.0, 0.0, 0.0, 0.0
        launches, shapes = 0, set()
        for op, items in calls.values():
            mine = sum(item.dur for item in items if item.name == row.name)
            if mine <= 0:
                continue
            arithmetic = sum(item.dur for item in items if is_compute(item.name, item.cat, "cuda"))
            r = mine / arithmetic
            key = _signature(op)
            if key not in alone_cache:
                alone_cache[key] = _alone(op, args.iterations)
            alone = alone_cache[key]
            cost = op_cost(op.name, op.dims, op.types, op.concrete)
            assert cost is not None
            flops += cost.flops * r
            graphed = math.nan if alone.graphed_ms is None else graphed + alone.graphed_ms * alone.share * r
            spaced += alone.spaced_ms * alone.share * r
            cupti += alone.cupti_ms * r
            launches += 1
            shapes.add(key)
        achieved = row.cost.achieved_tflops(row.device_time_us) or 0.0
        table.append(
            [row.name[:48], ",".join(o[6:] for o in row.cost.ops), f"{launches} / {len(shapes)}", row.cost.dtype,
             f"{achieved:.1f}", *(_versus(achieved, flops, ms) for ms in (graphed, spaced, cupti)),
             f"{row.cost.bound_tflops or 0:.0f} {row.cost.bound}"]
        )  # fmt: skip
    headers = ["kernel", "ops", "calls / shapes", "dtype", "row TFLOP/s", "alone, graphed (row vs)",
               "alone, spaced", "alone, profiler", "roof"]  # fmt: skip
    print(tabulate(table, headers=headers, disable_numparse=True))


if __name__ == "__main__":
    main()
