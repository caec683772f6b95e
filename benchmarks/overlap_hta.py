"""reportgen's per-rank communication/computation overlap against HTA's, on the same traces (issue 32).

    python benchmarks/overlap_hta.py BUNDLE --hta-python /path/to/hta-venv/bin/python
    python benchmarks/overlap_hta.py --traces R0.json.gz R1.json.gz --hta-python PY
    python benchmarks/overlap_hta.py --inject tests/data/h200-mixnet_l/trace.json.gz --out /tmp/ranks --hta-python PY

A bundle's ranks are its manifest's `distributed.ranks` traces; `--traces` takes one trace per rank (rank = position).
`--inject` makes two ranks from a single-GPU trace: NCCL all-reduce kernels placed on a stream of their own at
rank-dependent times (some over compute, some over idle time), written to `--out` and compared like any others.

reportgen's side: `read_trace` → step windows → `analyze.overlap.rank_overlap`, as `reportgen build` computes it.
HTA's side (its own virtualenv, as `nox -s bench` installs `traceinsight`): the traces copied into a fresh
directory with `distributedInfo.rank` set, `TraceAnalysis(trace_dir).get_comm_comp_overlap(visualize=False)`.
Prints one row per rank; exits 1 when a rank's two figures differ by more than `--tolerance` percentage points.
HTA is run on every profiled step (`include_last_profiler_step=True`, as reportgen counts them) with
`HTA_DISABLE_NS_ROUNDING=1` (the trace's own times, what reportgen reads): the tolerance applies to that. Two more
columns show HTA's defaults: every event shrunk to whole microseconds (start rounded up, end down, which takes up to a
microsecond off each of thousands of short kernels), and the GPU work launched from the last profiler step on left
out (on resnet50 under DDP that drops the last step's five all-reduces on rank 0: 32.50 % against 31.27 %).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

_HTA = """
import json, logging, sys
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
analysis = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=sys.argv[2] == "all")
frame = analysis.get_comm_comp_overlap(visualize=False)
print(json.dumps({int(r): float(p) for r, p in zip(frame["rank"], frame["comp_comm_overlap_pctg"])}))
"""


def _load(path: Path) -> dict:
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def inject(source: Path, out: Path, ranks: int = 2, period_us: float = 900.0, length_us: float = 300.0) -> list[Path]:
    """One trace per rank: `source` with NCCL all-reduce kernels every `period_us` (shifted by rank) on stream 99."""
    trace = _load(source)
    kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    first, last = min(e["ts"] for e in kernels), max(e["ts"] + e["dur"] for e in kernels)
    pid = kernels[0]["pid"]
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for rank in range(ranks):
        events = list(trace["traceEvents"])
        start, n = first + 50.0 + rank * period_us / (ranks + 1), 0
        while start + length_us < last:
            events.append(
                {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": pid, "tid": 99,
                 "ts": start, "dur": length_us * (1.0 + 0.25 * (n % 3)), "args": {"stream": 99, "device": 0}}
            )  # fmt: skip
            start, n = start + period_us * (1.0 + 0.5 * (n % 2)), n + 1
        made = {
            **trace,
            "traceEvents": events,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": ranks},
        }
        path = out / f"rank{rank}.json.gz"
        path.write_bytes(gzip.compress(json.dumps(made).encode()))
        paths.append(path)
    return paths


def reportgen_overlap(paths: list[Path]) -> dict[int, tuple[float | None, float, float]]:
    """Per rank: (overlap %, communication us, compute us) as `reportgen build` computes them."""
    from reportgen.analyze.graphs import attribute_graphs
    from reportgen.analyze.overlap import rank_overlap
    from reportgen.formats import read_trace

    found = {}
    for rank, path in enumerate(paths):
        trace = read_trace(path, "cuda")
        overlap, _ = rank_overlap(trace, "cuda", attribute_graphs(trace, "cuda").steps, rank)
        found[rank] = (overlap.overlap_percent, overlap.communication_us, overlap.compute_us)
    return found


def hta_overlap(paths: list[Path], python: str, rounding: bool, every_step: bool = True) -> dict[int, float]:
    """Per rank: HTA's `comp_comm_overlap_pctg`, in HTA's own interpreter. HTA shrinks every event to whole
    microseconds by default (start rounded up, end down); `rounding=False` sets `HTA_DISABLE_NS_ROUNDING=1`.
    By default HTA also drops the GPU work launched from the last profiler step on (the step may be incomplete in a
    trace cut mid-step); `every_step` keeps it (`include_last_profiler_step=True`), as reportgen counts every
    profiled step."""
    with tempfile.TemporaryDirectory() as folder:
        for rank, path in enumerate(paths):
            trace = _load(path)
            trace["distributedInfo"] = {**trace.get("distributedInfo", {}), "rank": rank}
            (Path(folder) / f"rank-{rank}.json").write_text(json.dumps(trace), encoding="utf-8")
        env = {**os.environ, "HTA_DISABLE_NS_ROUNDING": "0" if rounding else "1"}
        argv = [python, "-c", _HTA, folder, "all" if every_step else "default"]
        done = subprocess.run(argv, capture_output=True, text=True, check=True, env=env)
    return {int(rank): value for rank, value in json.loads(done.stdout.strip().splitlines()[-1]).items()}


def _bundle_traces(bundle: Path) -> list[Path]:
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    ranks = (manifest.get("distributed") or {}).get("ranks") or []
    if not ranks or any(not r.get("trace_file") for r in ranks):
        raise SystemExit(f"{bundle}: not a distributed run with a trace per rank")
    return [bundle / r["trace_file"] for r in sorted(ranks, key=lambda r: r["rank"])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bundle", nargs="?", type=Path)
    parser.add_argument("--traces", nargs="+", type=Path)
    parser.add_argument("--inject", type=Path, help="a single-GPU trace to make two ranks from")
    parser.add_argument("--out", type=Path, default=Path("overlap-ranks"))
    parser.add_argument("--hta-python", required=True)
    parser.add_argument("--tolerance", type=float, default=1.0, help="percentage points (default 1)")
    args = parser.parse_args()
    paths = inject(args.inject, args.out) if args.inject else args.traces or _bundle_traces(args.bundle)
    ours = reportgen_overlap(paths)
    exact, rounded = hta_overlap(paths, args.hta_python, False), hta_overlap(paths, args.hta_python, True)
    last_cut = hta_overlap(paths, args.hta_python, False, every_step=False)
    print(
        "| rank | reportgen overlap % | HTA overlap % | difference (pp) | HTA with its µs rounding % "
        "| HTA without the last step's launches % | communication (ms) | compute (ms) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    worst = 0.0
    for rank, (percent, comm_us, compute_us) in ours.items():
        hta = exact.get(rank)
        diff = None if percent is None or hta is None else percent - hta
        worst = max(worst, abs(diff) if diff is not None else float("inf"))
        cells = [
            f"{percent:.2f}" if percent is not None else "—",
            f"{hta:.2f}" if hta is not None else "—",
            f"{diff:+.2f}" if diff is not None else "—",
            f"{rounded[rank]:.2f}" if rank in rounded else "—",
            f"{last_cut[rank]:.2f}" if rank in last_cut else "—",
            f"{comm_us / 1000:.3f}",
            f"{compute_us / 1000:.3f}",
        ]
        print(f"| {rank} | " + " | ".join(cells) + " |")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
