"""Trace analysis at scale: reportgen's streaming analysis vs HTA on large synthetic traces.

    python benchmarks/trace_analysis.py [--sizes 100,500,1000] [--hta-python /path/to/hta-venv/bin/python]

Each trace replicates the events of the H100 fixture (`tests/data/h100-mixnet_l-train-amp`) with
timestamps shifted past the previous copy, until the raw JSON reaches the size (MB). Every measurement
runs in a fresh process (`--measure reportgen|hta FILE` re-invokes this script); time is wall time of the
analysis, peak RSS is the process's `ru_maxrss`. Both sides read the same plain-JSON file in the same
benchmark run; reportgen's side is read + kernel table + categories + busy/idle + graph attribution +
region evidence, HTA's is `TraceAnalysis` load + `get_temporal_breakdown()` (see `hta_probe.py`).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "tests" / "data" / "h100-mixnet_l-train-amp" / "trace.json.gz"


_TS = re.compile(rb'"ts": (-?\d+(?:\.\d+)?)')
_CORRELATION = re.compile(rb'"correlation": (\d+)')


def make_trace(source: Path, out: Path, size_mb: int) -> Path:
    """Write `out` (plain JSON): the source's own text, its `traceEvents` repeated until `size_mb` MB raw.

    Each copy is the source's event text byte for byte (Kineto's layout), with `ts` shifted past the
    previous copy and `correlation` offset so that launches stay paired with their kernels.
    """
    if out.is_file() and out.stat().st_size >= size_mb * 1_000_000:
        return out
    text = gzip.decompress(source.read_bytes())
    opening = re.search(rb'"traceEvents"\s*:\s*\[', text)
    closing = text.rindex(b"]")
    assert opening is not None
    head, body, tail = text[: opening.end()], text[opening.end() : closing].rstrip(), text[closing:]
    stamps = [float(m) for m in _TS.findall(body)]
    period = max(stamps) - min(stamps) + 10_000.0
    tmp = out.with_suffix(".tmp")
    with open(tmp, "wb") as fh:
        fh.write(head)
        written, copy = len(head), 0
        while written + len(tail) < size_mb * 1_000_000:
            shift, offset = copy * period, copy * 10_000_000
            block = _TS.sub(lambda m, s=shift: b'"ts": %.3f' % (float(m.group(1)) + s), body)
            block = _CORRELATION.sub(lambda m, o=offset: b'"correlation": %d' % (int(m.group(1)) + o), block)
            if copy:
                block = b"," + block
            fh.write(block)
            written, copy = written + len(block), copy + 1
        fh.write(b"\n" + tail)
    tmp.replace(out)
    return out


def _peak_rss_mb() -> float:
    """Peak RSS of this process or its largest child (the reader's second process), in MiB."""
    usage = (resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return max(usage) / 1024


def measure_reportgen(trace: Path) -> dict[str, float]:
    """reportgen's full trace analysis of one file, as `analyze` runs it on a bundle."""
    t0 = time.perf_counter()
    from reportgen.analyze import analyze_trace

    imported = time.perf_counter()
    table, attribution, _, _ = analyze_trace(trace, "cuda", 3)
    done = time.perf_counter()
    busy = [s.busy_percent for s in attribution.steps]
    return {
        "total_s": done - imported,
        "import_s": imported - t0,
        "peak_rss_mb": _peak_rss_mb(),
        "kernels": len(table.kernels),
        "busy_percent": busy[0] if busy else float("nan"),
    }


def _median_run(kind: str, trace: Path, hta_python: str, repeat: int) -> dict[str, float]:
    """The run with the median time of `repeat` fresh-process runs (this VM's timings vary by ~10 %)."""
    runs = [_measure(kind, trace, hta_python) for _ in range(repeat)]
    key = "total_s" if kind == "reportgen" else "analysis_s"
    for run in runs:
        run.setdefault("analysis_s", run.get("load_s", 0.0) + run.get("breakdown_s", 0.0))
    runs.sort(key=lambda run: run[key])
    median = dict(runs[len(runs) // 2])
    median["times_s"] = [round(run[key], 2) for run in runs]  # type: ignore[assignment]
    return median


def _measure(kind: str, trace: Path, hta_python: str) -> dict[str, float]:
    if kind == "reportgen":
        cmd = [sys.executable, __file__, "--measure", "reportgen", str(trace)]
    else:
        cmd = [hta_python, str(HERE / "hta_probe.py"), str(trace), "--rank-map"]
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{kind} failed on {trace}:\n{proc.stderr[-2000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall_s"] = wall
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,500,1000", help="raw sizes in MB, comma separated")
    parser.add_argument("--work", type=Path, default=Path(os.environ.get("BENCH_WORK", "/tmp/reportgen-bench")))
    parser.add_argument("--hta-python", default=os.environ.get("HTA_PYTHON", ""), help="python of an HTA env")
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.add_argument("--repeat", type=int, default=3, help="fresh-process runs per tool and size (median)")
    parser.add_argument("--measure", nargs=2, metavar=("KIND", "TRACE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure_reportgen(Path(args.measure[1]))))
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        trace = make_trace(args.fixture, args.work / f"trace-{size}MB.json", size)
        raw_mb = trace.stat().st_size / 1e6
        ours = _median_run("reportgen", trace, args.hta_python, args.repeat)
        row = {"size_mb": raw_mb, "reportgen": ours}
        if args.hta_python:
            row["hta"] = _median_run("hta", trace, args.hta_python, args.repeat)
        rows.append(row)
        _print(rows)
    return 0


def _print(rows: list[dict]) -> None:
    from tabulate import tabulate

    table = []
    for row in rows:
        ours, hta = row["reportgen"], row.get("hta")
        line = [
            f"{row['size_mb']:.0f}",
            f"{ours['total_s']:.1f}",
            f"{row['size_mb'] / ours['total_s']:.0f}",
            f"{ours['peak_rss_mb']:.0f}",
        ]
        if hta:
            hta_s = hta["analysis_s"]
            line += [
                f"{hta_s:.1f}",
                f"{row['size_mb'] / hta_s:.0f}",
                f"{hta['peak_rss_mb']:.0f}",
                f"{hta_s / ours['total_s']:.1f}x",
                f"{hta['peak_rss_mb'] / ours['peak_rss_mb']:.1f}x",
            ]
        table.append(line)
    headers = ["raw MB", "reportgen s", "MB/s", "peak RSS MB"]
    headers += ["HTA s", "HTA MB/s", "HTA RSS MB", "speed ratio", "memory ratio"]
    print(tabulate(table, headers=headers[: len(table[0])], tablefmt="github"), flush=True)
    last = rows[-1]
    print(f"runs (s): reportgen {last['reportgen']['times_s']}, HTA {last.get('hta', {}).get('times_s')}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
