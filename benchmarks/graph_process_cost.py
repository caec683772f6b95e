"""What the graph-timing process costs (issue 28), with Inductor's compile workers as the run has them and without.

    python benchmarks/graph_process_cost.py RECIPE [--variant NAME] [--rounds 3] [--work DIR] [--threads 16]
        [--cprofile STATS]

One `reportgen run` of RECIPE (one GPU, its Inductor cache kept in DIR/cache) makes a bundle; then its graphs
are timed again in a fresh process (`reportgen.run.graph_process`, as the run does it) on that warm cache,
alternating: `TORCHINDUCTOR_COMPILE_THREADS=--threads` (a matrix run's, one per core of its share) and `=1` (the
wrappers load their cached kernels in the process itself, no worker pool). Per round: the process's wall time and
its own stages (torch import, loading the wrappers, timing, profiling).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from fresh_process import last_json, run_timed
from tabulate import tabulate

from reportgen.bundle import iter_bundles, load_bundle
from reportgen.pipeline import select_variant
from reportgen.recipe import load_recipe
from reportgen.run import child_env
from reportgen.run.graph_process import REQUEST_FILE, RESULT_FILE

__all__: list[str] = []


def _time_once(bundle: Path, env: dict[str, str], files: bytes, device: str) -> tuple[float, dict[str, float]]:
    (bundle / REQUEST_FILE).parent.mkdir(exist_ok=True)
    (bundle / REQUEST_FILE).write_bytes(files)
    wall, out = run_timed([sys.executable, "-m", "reportgen.run.graph_process", str(bundle), device], env)
    (bundle / RESULT_FILE).unlink(missing_ok=True)
    return wall, last_json(out)["stages_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipe", type=Path)
    parser.add_argument("--variant")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=16, help="compile workers of the first arm (default 16)")
    parser.add_argument("--work", type=Path)
    parser.add_argument("--device", default="cuda", help="what the run ran on (default cuda)")
    parser.add_argument("--cprofile", type=Path, help="then one more process (threads=1) under cProfile, stats here")
    args = parser.parse_args()
    work = (args.work or Path(tempfile.mkdtemp(prefix="graph-cost-"))).resolve()
    results, cache = work / "results", work / "cache"
    if not any(iter_bundles(results)):
        command = [sys.executable, "-m", "reportgen", "run", str(args.recipe), "-o", str(results)]
        command += ["--inductor-cache", str(cache), *(["--gpus", "1"] if args.device == "cuda" else [])]
        command += ["--variant", args.variant] if args.variant else []
        subprocess.run(command, check=True)
    bundle_dir = next(iter(iter_bundles(results)))
    bundle = load_bundle(bundle_dir)
    wrappers = [f for f in bundle.manifest.modules if f.kind == "wrapper"]
    files = json.dumps([f.model_dump(mode="json") for f in wrappers]).encode()
    recipe = load_recipe(args.recipe)
    variant = select_variant(recipe, args.variant, args.recipe)
    base = child_env(recipe.for_variant(variant) if variant is not None else recipe, cache / bundle_dir.name)
    arms = {f"threads={args.threads}": str(args.threads), "threads=1": "1"}
    rows: dict[str, list[tuple[float, dict[str, float]]]] = {arm: [] for arm in arms}
    for round_ in range(args.rounds):
        for arm, threads in arms.items() if round_ % 2 == 0 else reversed(arms.items()):
            wall, stages = _time_once(
                bundle_dir, {**base, "TORCHINDUCTOR_COMPILE_THREADS": threads}, files, args.device
            )
            rows[arm].append((wall, stages))
            print(f"round {round_ + 1} {arm}: {wall:.2f} s {stages}", flush=True)
    table = []
    for arm, samples in rows.items():
        stage_names = list(samples[0][1])
        medians = [statistics.median(s[1][name] for s in samples) for name in stage_names]
        table.append([arm, statistics.median(w for w, _ in samples), *medians])
    print(f"\n{bundle_dir.name}, {len(wrappers)} wrappers, medians of {args.rounds} rounds (s), {os.cpu_count()} cores")
    print(tabulate(table, headers=["arm", "process wall", *stage_names], floatfmt=".2f"))
    if args.cprofile is not None:
        _profiled(bundle_dir, {**base, "TORCHINDUCTOR_COMPILE_THREADS": "1"}, files, args.device, args.cprofile)


def _profiled(bundle: Path, env: dict[str, str], files: bytes, device: str, stats: Path) -> None:
    """One graph process under cProfile (its wall is inflated; where the time goes is the point): the top functions."""
    import pstats

    (bundle / REQUEST_FILE).write_bytes(files)
    command = [sys.executable, "-m", "cProfile", "-o", str(stats), "-m", "reportgen.run.graph_process"]
    subprocess.run([*command, str(bundle), device], env=env, check=True, capture_output=True)
    (bundle / RESULT_FILE).unlink(missing_ok=True)
    for order in ("cumulative", "tottime"):
        print(f"\ncProfile of the graph process, by {order}:")
        pstats.Stats(str(stats)).sort_stats(order).print_stats(30)


if __name__ == "__main__":
    main()
