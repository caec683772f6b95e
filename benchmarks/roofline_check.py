"""Issue 31's check of the FLOP counts: a bundle's largest counted GEMM/convolution rows against the same ops timed
alone, in the same sitting.

    python benchmarks/roofline_check.py BUNDLE_DIR [--top 3] [--iterations 50]

A kernel row aggregates every launch of one kernel name, and one name serves many shapes (cuDNN's fprop kernel
runs most of resnet50's convolutions), so a row is checked against every op call that launched it in the
bundle's shapes step. For each of the `--top` rows with the most time whose category is a GEMM or a convolution
and whose ops are all matrix products or convolutions: each distinct call (op, dims, strides, dtypes, arguments)
is made again (random tensors of the recorded shapes and strides, on the GPU, with the recipe's
`cudnn_benchmark` and the run's TF32 settings) and timed alone with CUDA events (`_time_ms`: the median of
`--iterations` calls each between its own events, and, printed beside, back to back); one short profile of it
gives the share of its kernel time that does arithmetic (`categories.is_compute`; cuDNN may add layout
transforms). The row's alone TFLOP/s is then

    sum over calls of  FLOPs(call) * r(call)  /  sum over calls of  alone time(call) * compute share(call) * r(call)

with r the row's share of that call's arithmetic kernel time in the shapes step (1 for a call the row ran
alone). Printed per row: the report's achieved TFLOP/s (its FLOPs over its time in the profiled steps), alone,
their difference, the calls and distinct shapes, and the roof.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from collections.abc import Callable
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
        if i < len(op.strides) and len(op.strides[i]) == len(op.dims[i]):
            return torch.empty_strided(op.dims[i], op.strides[i], device="cuda", dtype=dtype).normal_()
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


def _time_ms(call: Callable[..., Any], args: tuple[object, ...], iterations: int) -> tuple[float, float]:
    """Median ms of one call timed alone with CUDA events: (spaced, back to back).

    Spaced: each call between its own pair of events, after a 0.2 ms sleep kernel that keeps the GPU from idling
    while the CPU enqueues it (no launch gap inside the events) and lets it cool as between a step's other
    kernels. Back to back: `iterations` calls between one pair, 5 rounds (a long run of one large GEMM can hold
    the GPU at its power limit, below the clock a step's mix of kernels runs it at)."""
    for _ in range(10):
        call(*args)
    spaced = []
    for _ in range(iterations):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(400_000)  # about 0.2 ms at 2 GHz
        start.record()
        call(*args)
        end.record()
        end.synchronize()
        spaced.append(float(start.elapsed_time(end)))
    rounds = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iterations):
            call(*args)
        end.record()
        end.synchronize()
        rounds.append(float(start.elapsed_time(end)) / iterations)
    return statistics.median(spaced), statistics.median(rounds)


def _compute_share(call: Callable[..., Any], args: tuple[object, ...]) -> float:
    """The share of the op's kernel time that does arithmetic, from a short profile of it alone."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            call(*args)
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        prof.export_chrome_trace(f"{tmp}/alone.json")
        events = load_trace(Path(f"{tmp}/alone.json")).events
    work = [e for e in events if isinstance(e, dict) and e.get("cat") in GPU_WORK_CATS]
    total = sum(float(e["dur"]) for e in work)
    compute = sum(float(e["dur"]) for e in work if is_compute(str(e["name"]), str(e["cat"]), "cuda"))
    return compute / total if total > 0 else 1.0


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
    alone_cache: dict[tuple[object, ...], tuple[float, float, float]] = {}
    table = []
    for row in checked[: args.top]:
        assert row.cost is not None
        flops = seconds = back_to_back = 0.0
        launches, shapes = 0, set()
        for op, items in calls.values():
            mine = sum(item.dur for item in items if item.name == row.name)
            if mine <= 0:
                continue
            arithmetic = sum(item.dur for item in items if is_compute(item.name, item.cat, "cuda"))
            r = mine / arithmetic
            key = _signature(op)
            if key not in alone_cache:
                fn, call_args = _call(op)
                alone_cache[key] = (*_time_ms(fn, call_args, args.iterations), _compute_share(fn, call_args))
            alone_ms, looped_ms, share = alone_cache[key]
            cost = op_cost(op.name, op.dims, op.types, op.concrete)
            assert cost is not None
            flops += cost.flops * r
            seconds += alone_ms * 1e-3 * share * r
            back_to_back += looped_ms * 1e-3 * share * r
            launches += 1
            shapes.add(key)
        achieved = row.cost.achieved_tflops(row.device_time_us) or 0.0
        alone, looped = flops / seconds / 1e12, flops / back_to_back / 1e12
        table.append(
            [row.name[:48], ",".join(o[6:] for o in row.cost.ops), f"{launches} / {len(shapes)}", row.cost.dtype,
             f"{achieved:.1f}", f"{alone:.1f}", f"{100 * (achieved / alone - 1):+.1f} %",
             f"{looped:.1f} ({100 * (achieved / looped - 1):+.1f} %)", f"{row.cost.bound_tflops or 0:.0f} {row.cost.bound}"]
        )  # fmt: skip
    headers = ["kernel", "ops", "calls / shapes", "dtype", "row TFLOP/s", "alone TFLOP/s", "row vs alone",
               "back to back", "roof"]  # fmt: skip
    print(tabulate(table, headers=headers, disable_numparse=True))


if __name__ == "__main__":
    main()
