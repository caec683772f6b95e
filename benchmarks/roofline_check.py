"""Issue 31's check of the FLOP counts: a bundle's largest counted GEMM/convolution rows against the same op timed
alone, in the same sitting.

    python benchmarks/roofline_check.py BUNDLE_DIR [--top 3] [--iterations 50]

For each of the `--top` counted kernel rows with the most time whose op is a matrix product or a convolution
(forward or backward), the op call that launched it is read from the bundle's shapes trace, its tensors are made
again (random, same shapes and dtypes, on the GPU) and the op is timed alone with CUDA events (`--iterations`
calls after 10 warm-ups, median of 5 rounds). Printed per row: the row's achieved TFLOP/s (its FLOPs over its
time in the profiled steps), the op's alone (its FLOPs over the median call), their difference, and the roof.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from tabulate import tabulate

from reportgen.analyze import analyze
from reportgen.analyze.flops import COUNTED_OPS, concrete_ints, op_cost
from reportgen.bundle import SHAPES_TRACE_FILE, read_capture, read_manifest
from reportgen.formats import ShapedOp, load_trace, shaped_ops, work_items

__all__: list[str] = []

_DTYPES = {"float": torch.float32, "c10::BFloat16": torch.bfloat16, "c10::Half": torch.float16}
_TIMED = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::convolution", "aten::convolution_backward")


def _call(op: ShapedOp) -> tuple[Callable[..., Any], tuple[object, ...]]:
    """The op and its arguments made again on the GPU."""

    def tensor(i: int) -> torch.Tensor:
        return torch.randn(op.dims[i], device="cuda", dtype=_DTYPES[op.types[i]])

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


def _time_ms(call: Callable[..., Any], args: tuple[object, ...], iterations: int) -> float:
    for _ in range(10):
        call(*args)
    rounds = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iterations):
            call(*args)
        end.record()
        end.synchronize()
        rounds.append(float(start.elapsed_time(end)) / iterations)
    return statistics.median(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--top", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=50)
    args = parser.parse_args()
    manifest = read_manifest(args.bundle)
    analysis = analyze(args.bundle, manifest, read_capture(args.bundle, manifest))
    trace = load_trace(args.bundle / SHAPES_TRACE_FILE)
    ops = sorted(shaped_ops(trace, COUNTED_OPS), key=lambda op: op.ts)
    work = work_items(trace)
    counted = [row for row in analysis.kernels.kernels if row.cost is not None]
    print(f"{args.bundle.name}: {len(counted)} of {len(analysis.kernels.kernels)} kernel rows counted, "
          f"{100 * sum(r.device_time_us for r in counted) / analysis.kernels.total_us:.1f} % of the time; "
          f"roof {analysis.roof.model if analysis.roof else None}")  # fmt: skip
    table = []
    for row in [r for r in counted if r.cost and set(r.cost.ops) & set(_TIMED)][: args.top]:
        anchor = next(w.anchor for w in work if w.name == row.name and w.anchor is not None)
        op = next(o for o in ops if o.contains(anchor) and o.name in _TIMED)
        cost = op_cost(op.name, op.dims, op.types, op.concrete)
        assert cost is not None and row.cost is not None
        fn, call_args = _call(op)
        alone_ms = _time_ms(fn, call_args, args.iterations)
        achieved = row.cost.achieved_tflops(row.device_time_us) or 0.0
        alone = cost.flops / (alone_ms * 1e9)
        table.append(
            [row.name[:48], op.name, str(list(map(list, op.dims[:3]))), op.types[0], f"{achieved:.1f}",
             f"{alone:.1f}", f"{100 * (achieved / alone - 1):+.1f} %", f"{row.cost.bound_tflops or 0:.0f} {row.cost.bound}"]
        )  # fmt: skip
    headers = ["kernel", "op", "dims", "dtype", "row TFLOP/s", "alone TFLOP/s", "row vs alone", "roof"]
    print(tabulate(table, headers=headers, disable_numparse=True))


if __name__ == "__main__":
    main()
