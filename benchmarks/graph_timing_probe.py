"""Where a graph's unprofiled wall per call differs between `python wrapper.py -p` and reportgen's graph timing.

    python benchmarks/graph_timing_probe.py BUNDLE_DIR --recipe RECIPE [--variant V] [--reps 4] [--graph 0]

On a bundle of a finished run (its Inductor cache warm, under `<bundle's results>/../cache/<bundle name>` or
`--cache`), each rep starts one fresh process per way of timing graph `--graph`, in a rotating order:

- `p`: `python <wrapper> -p`, the wall per call it prints (its first `times` x `repeat` calls);
- `p1`: `p` under reportgen's graph-process environment (`TORCHINDUCTOR_COMPILE_THREADS=1`, no compile workers);
- `alone`: the wrapper alone, reportgen's harness: first calls, then 3 rounds (`capture.time_graphs`);
- `both`: every wrapper of the bundle, as reportgen's graph process times them (graph by graph, each imported when
  its turn comes), under that process's environment too;
- `plain`: the wrapper's own `benchmark_compiled_module` called 4 times in a row, nothing else imported;
- `seq`: as `plain`, 6 times (do calls 101-600 take longer than calls 1-100?).

`--ways` picks some. Prints each process's numbers and, per way, the median over reps: a way that is slower than
`p` in every rep names what in reportgen's graph timing costs CPU time that `-p` does not pay.

First sitting (H200, torch 2.11, mixnet_l default, forward graph, 3 reps on a slow host whose rounds ranged
12-22 ms): `p` 13.75, 13.52, 13.27 ms; `plain` 14.45, 14.61, 14.79; `alone` 14.06, 15.16; `both` 14.43, 17.82,
12.05. Too few reps to decide.

Second sitting (H200, torch 2.11, mixnet_l default, forward graph, 2026-11-27; `both` then loaded every wrapper
and ran every graph's first calls before timing any): with no compile workers (`TORCHINDUCTOR_COMPILE_THREADS=1`
for both ways), `alone` 12.65, 12.56, 12.34 ms against `both` 13.94, 13.57, 12.74 (each pair back to back): the
forward timed after the backward's first calls was 3-10 % slower, which is why the graph-timing process now goes
graph by graph. `seq` rose from none of its 6 harness calls to the next (medians 15.6, 14.5, 15.1 ms; 12.6-22.0):
later calls are not slower. With 16 workers `alone` read 18.58, 15.35, 18.76 ms; `-p` 12.50, 25.47, 21.12 ms and
`p1` 15.33, 22.54 ms: a fresh `-p`'s first 100 calls are the noisiest figure here.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

WAYS = ("p", "alone", "both", "plain", "seq", "p1")


def _wrappers(bundle: Path) -> list[tuple[int, str]]:
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    files = manifest.get("modules") or []
    return sorted((f["order"], f["path"]) for f in files if f.get("kind") == "wrapper")


def child(way: str, bundle: Path, graph: int) -> None:
    """In a fresh process: time graph `graph` the way named, print one JSON line."""
    if way in ("plain", "seq"):
        import importlib.util

        path = bundle / dict(_wrappers(bundle))[graph]
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        from reportgen.run.inductor import wrapper_benchmark

        bench = wrapper_benchmark(module)
        print(
            json.dumps({"way": way, "ms": [bench(10, 10) * 1e3 for _ in range(4 if way == "plain" else 6)]}), flush=True
        )
        return
    from reportgen.bundle import ModuleFile
    from reportgen.run import capture, graph_process

    chosen = [(o, p) for o, p in _wrappers(bundle) if way == "both" or o == graph]
    files = [ModuleFile(path=p, kind="wrapper", order=o, size_bytes=0) for o, p in chosen]
    modules = graph_process._import_wrappers(files, bundle, [])  # each imported when its turn comes
    out = Path(os.environ.get("PROBE_OUT", "/tmp/probe-out"))
    out.mkdir(parents=True, exist_ok=True)
    timed = capture.time_graphs(modules, files, bundle)
    for result in timed:
        if result.graph == graph:
            print(
                json.dumps(
                    {
                        "way": way,
                        "ms": result.rounds_ms,
                        "median": result.wall_ms_per_call,
                        "first": result.first_wall_ms,
                    }
                )
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--recipe", type=Path, required=True)
    parser.add_argument("--variant")
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--graph", type=int, default=0)
    parser.add_argument("--ways", default=",".join(WAYS), help="comma-separated, of " + ", ".join(WAYS))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.bundle, args.graph)
        return
    from reportgen.formats import parse_seed_output
    from reportgen.pipeline import variant_recipe
    from reportgen.run import child_env
    from reportgen.run.graph_process import NO_WORKERS

    recipe = variant_recipe(args.recipe, args.variant)
    cache = args.cache or args.bundle.parent.parent / "cache" / args.bundle.name
    env = child_env(recipe, cache)
    wrapper = args.bundle / dict(_wrappers(args.bundle))[args.graph]
    ways = tuple(w for w in args.ways.split(",") if w in WAYS)
    seen: dict[str, list[float]] = {way: [] for way in ways}
    for rep in range(args.reps):
        order = ways[rep % len(ways) :] + ways[: rep % len(ways)]
        for way in order:
            started = time.perf_counter()
            if way in ("p", "p1"):
                command = [sys.executable, str(wrapper), "-p"]
            else:
                command = [sys.executable, __file__, str(args.bundle), "--recipe", str(args.recipe), "--child", way]
                command += ["--graph", str(args.graph)]
            way_env = {**env, **NO_WORKERS} if way in ("p1", "both") else env
            done = subprocess.run(command, env=way_env, capture_output=True, text=True, check=False)
            wall = time.perf_counter() - started
            if way in ("p", "p1"):
                profiles = parse_seed_output(done.stdout)
                value = profiles[-1].wall_ms if profiles else None
                detail = f"busy {profiles[-1].busy_percent} %" if profiles else done.stdout[-300:] + done.stderr[-500:]
            else:
                line = next((x for x in done.stdout.splitlines() if x.startswith('{"way"')), None)
                parsed = json.loads(line) if line else None
                value = statistics.median(parsed["ms"]) if parsed and way in ("plain", "seq") else None
                if parsed and way not in ("plain", "seq"):
                    value = parsed["median"]
                detail = parsed["ms"] if parsed else done.stdout[-300:] + done.stderr[-800:]
            if value is not None:
                seen[way].append(value)
            print(f"rep {rep} {way:6s} {value if value is None else round(value, 3)} ms ({wall:.0f} s) {detail}")
            sys.stdout.flush()
    for way, values in seen.items():
        if values:
            print(
                f"{way:6s} median {statistics.median(values):.3f} ms over {len(values)}: {[round(v, 2) for v in values]}"
            )


if __name__ == "__main__":
    main()
