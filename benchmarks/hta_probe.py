"""Time Holistic Trace Analysis (HTA) on one PyTorch profiler chrome trace.

Run with the HTA virtualenv, not the project's interpreter::

    /work/hta-venv/bin/python benchmarks/hta_probe.py TRACE_FILE [--rank-map]

HTA (PyPI ``traceinsight``, import name ``hta``) only takes a directory of
per-rank traces named ``*.json`` or ``*.gz`` (gzip chosen by suffix). The trace
is symlinked into a fresh temporary directory as ``trace.json[.gz]``, then
``TraceAnalysis(trace_dir=...)`` and ``get_temporal_breakdown(visualize=False)``
are timed. Without ``distributedInfo.rank`` in the trace, HTA reads the whole
file once just to look for a rank; ``--rank-map`` passes ``trace_files={0: name}``
to skip that scan. One JSON line goes to stdout; HTA's logging goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _peak_rss_mb() -> float:
    """Peak RSS in MiB of this process or any waited-for child, whichever is larger."""
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(self_kb, child_kb) / 1024, 1)


def _link_name(trace_file: str) -> str:
    """Name for the link: HTA lists only *.json / *.gz and picks gzip by the .gz suffix."""
    with open(trace_file, "rb") as fh:
        is_gzip = fh.read(2) == b"\x1f\x8b"
    return "trace.json.gz" if is_gzip else "trace.json"


def probe(trace_file: str, rank_map: bool) -> dict[str, Any]:
    """Load TRACE_FILE with HTA, compute the temporal breakdown, return timings and rank 0's row."""
    t0 = time.perf_counter()
    from hta.trace_analysis import TraceAnalysis  # import time counts in total_s only

    hta_log = logging.getLogger("hta")
    hta_log.handlers[:] = [logging.StreamHandler(sys.stderr)]
    hta_log.propagate = False

    with tempfile.TemporaryDirectory(prefix="hta_probe_") as tmp:
        name = _link_name(trace_file)
        (Path(tmp) / name).symlink_to(Path(trace_file).resolve())
        t1 = time.perf_counter()
        files = {0: name} if rank_map else None  # None: HTA lists the dir and scans for "rank"
        analysis = TraceAnalysis(trace_files=files, trace_dir=tmp)
        t2 = time.perf_counter()
        df = analysis.get_temporal_breakdown(visualize=False)
        t3 = time.perf_counter()

    row = df.iloc[0].to_dict()
    out: dict[str, Any] = {
        "load_s": round(t2 - t1, 3),
        "breakdown_s": round(t3 - t2, 3),
        "total_s": round(t3 - t0, 3),
        "peak_rss_mb": _peak_rss_mb(),
        "ranks": [int(r) for r in df["rank"]],
    }
    for key, value in row.items():
        out[str(key)] = int(value) if key == "rank" else float(value)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="Time HTA on one PyTorch profiler chrome trace.")
    parser.add_argument("trace_file", help="chrome trace, .json or .json.gz")
    parser.add_argument(
        "--rank-map",
        action="store_true",
        help="pass trace_files={0: name} so HTA skips its rank-finding scan",
    )
    args = parser.parse_args()
    with contextlib.redirect_stdout(sys.stderr):
        result = probe(args.trace_file, args.rank_map)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
