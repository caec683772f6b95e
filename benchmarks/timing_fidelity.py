"""Timing fidelity: reportgen's numbers against a bare timing loop and `python <wrapper>.py -p`, in one sitting.

    python benchmarks/timing_fidelity.py RECIPE [--variant NAME] [--work DIR] [--json OUT]

1. `reportgen run RECIPE` into `DIR/results`, with a kept, initially empty Inductor cache (a cold compile);
   its wall time is the run's cost.
2. A bare loop in a fresh process, on the run's warm cache and in the run's own environment
   (`reportgen.run.child_env`): the same model and input (built by the run stage's workload builder), nothing
   else set; the same warm-ups as the run (first call + `profile.warmup` - 1 steps, eager then compiled),
   then eager and compiled timed in alternating blocks of `profile.block_steps` steps back to back with one
   synchronisation per block, `profile.steps` blocks each, as the run times them; medians. Plain code, not
   reportgen's timing functions: it is the reference.
3. `python <wrapper>.py -p` in a fresh process for each compiled graph the run captured, on the same warm
   cache, as the manual workflow does; its `Output for tabulate` line gives busy % and category shares.
4. The bare loop again: the two bare loops' difference is the sitting's own drift, the floor under any
   comparison of step times made minutes apart.
Then it prints the differences side by side: step times and speedup (%), each graph's busy % and category
shares (percentage points), and the run's wall time against first-call compile + the `-p` runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

from reportgen.analyze import timing_summary
from reportgen.bundle import SEED_BUCKETS, Analysis, Capture, GraphAnalysis, Manifest, Metrics, StepTimes, load_bundle
from reportgen.formats import SeedProfile, parse_seed_output
from reportgen.pipeline import select_variant
from reportgen.recipe import Recipe, load_recipe
from reportgen.run import child_env


def _recipe(path: Path, variant: str | None) -> Recipe:
    recipe = load_recipe(path)
    chosen = select_variant(recipe, variant, path)
    return recipe.for_variant(chosen) if chosen is not None else recipe


def bare_loop(recipe_path: Path, variant: str | None) -> dict[str, object]:
    """In this (fresh) process: time eager and compiled like a user's script. Medians and samples in ms."""
    import torch

    from reportgen.run.measure import host_probe
    from reportgen.run.workload import build_workload, compile_model

    recipe = _recipe(recipe_path, variant).for_device("cuda")
    work = build_workload(recipe, str(recipe_path.parent), "cuda")
    compiled = compile_model(recipe, work.model)  # the recipe's compile options, nothing else

    def block(fn: object, steps: int) -> float:
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            work.step(fn)  # type: ignore[arg-type]
        torch.cuda.synchronize()
        return (time.perf_counter() - start) / steps * 1e3

    profile = recipe.profile
    for fn in (work.model, compiled):  # first call (the compile, from the warm cache), then warm-up steps
        for _ in range(max(profile.warmup, 1)):
            block(fn, 1)
    eager, comp, probe = [], [], []
    for _ in range(profile.steps):
        probe.append(host_probe() * 1e3)  # the host's CPU speed, outside the timed blocks (as the run does)
        eager.append(block(work.model, profile.block_steps))
        comp.append(block(compiled, profile.block_steps))
    return {
        "eager_ms": statistics.median(eager),
        "compiled_ms": statistics.median(comp),
        "eager_samples_ms": eager,
        "compiled_samples_ms": comp,
        "host_probe_ms": probe,
    }


def _bare(recipe_path: Path, variant: str | None, env: dict[str, str]) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, __file__, str(recipe_path), "--bare"] + (["--variant", variant] if variant else []),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _steps(samples: list[float]) -> StepTimes:
    return StepTimes(
        samples_ms=samples,
        median_ms=statistics.median(samples),
        q1_ms=min(samples),
        q3_ms=max(samples),
        min_ms=min(samples),
        max_ms=max(samples),
    )


def _intervals(eager: list[float], compiled: list[float]) -> dict[str, str]:
    """95 % bootstrap intervals of both medians and of the speedup, as the report computes them."""
    summary = timing_summary(Metrics(eager=_steps(eager), compiled=_steps(compiled)))
    if summary is None:
        return {}
    out = {
        "eager_ms": f"{summary.eager_median_ci_ms.low:.2f}–{summary.eager_median_ci_ms.high:.2f}",
        "compiled_ms": f"{summary.compiled_median_ci_ms.low:.2f}–{summary.compiled_median_ci_ms.high:.2f}",
    }
    if summary.speedup_ci is not None:
        out["speedup"] = f"{summary.speedup_ci.low:.3f}–{summary.speedup_ci.high:.3f}"
    return out


def _run_reportgen(recipe_path: Path, variant: str | None, work: Path) -> tuple[Path, float]:
    command = [sys.executable, "-m", "reportgen", "run", str(recipe_path), "-o", str(work / "results")]
    command += ["--inductor-cache", str(work / "cache")] + (["--variant", variant] if variant else [])
    started = time.perf_counter()
    subprocess.run(command, check=True)
    wall_s = time.perf_counter() - started
    recipe = load_recipe(recipe_path)
    name = recipe.bundle_name(select_variant(recipe, variant, recipe_path))
    return work / "results" / name, wall_s


def _seed_runs(manifest: Manifest, bundle: Path, env: dict[str, str]) -> list[tuple[SeedProfile | None, float]]:
    """`python <wrapper>.py -p` per graph, in graph order: its report and its wall time."""
    runs = []
    for module in sorted((m for m in manifest.modules if m.kind == "wrapper"), key=lambda m: m.order):
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, str(bundle / module.path), "-p"], env=env, capture_output=True, text=True, check=False
        )
        wall_s = time.perf_counter() - started
        profiles = parse_seed_output(out.stdout)
        busy = (
            f"busy {profiles[-1].busy_percent:.1f} %, {profiles[-1].wall_ms:.2f} ms per call"
            if profiles
            else "no report"
        )
        print(f"-p {module.path}: {wall_s:.1f} s, {busy}", flush=True)
        if not profiles:
            print(f"{module.path}: no -p report (exit {out.returncode})\n{out.stderr[-2000:]}", file=sys.stderr)
        runs.append((profiles[-1] if profiles else None, wall_s))
    return runs


def _pct(new: float, ref: float) -> str:
    return f"{100 * (new - ref) / ref:+.1f} %" if ref else "—"


def _step_table(manifest: Manifest, bares: list[dict[str, object]]) -> list[list[str]]:
    """reportgen against each bare loop (diff against their mean) and the bare loops' own drift."""
    metrics = manifest.metrics
    assert metrics.eager is not None and metrics.compiled is not None
    ours = {"eager_ms": metrics.eager.median_ms, "compiled_ms": metrics.compiled.median_ms}
    ours["speedup"] = ours["eager_ms"] / ours["compiled_ms"]
    ours_ci = _intervals(metrics.eager.samples_ms, metrics.compiled.samples_ms)
    refs = [{**b, "speedup": float(b["eager_ms"]) / float(b["compiled_ms"])} for b in bares]  # type: ignore[arg-type]
    refs_ci = [_intervals(b["eager_samples_ms"], b["compiled_samples_ms"]) for b in bares]  # type: ignore[arg-type]
    rows = []
    for key in ("eager_ms", "compiled_ms", "speedup"):
        values = [float(r[key]) for r in refs]  # type: ignore[arg-type]
        mean = statistics.fmean(values)
        digits = 3 if key == "speedup" else 2
        row = [key, f"{ours[key]:.{digits}f} [{ours_ci.get(key, '')}]"]
        row += [f"{v:.{digits}f} [{ci.get(key, '')}]" for v, ci in zip(values, refs_ci, strict=True)]
        row += [_pct(ours[key], mean), _pct(values[-1], values[0]) if len(values) > 1 else "—"]
        rows.append(row)
    host = [_probe_cv(manifest.metrics.host_probe_ms)] + [_probe_cv(b.get("host_probe_ms", [])) for b in bares]  # type: ignore[arg-type]
    rows.append(["host probe CV", *host, "", ""])
    return rows


def _probe_cv(samples: list[float]) -> str:
    if len(samples) < 2:
        return "—"
    return f"{statistics.stdev(samples) / statistics.fmean(samples):.1%} (median {statistics.median(samples):.2f} ms)"


def _first_calls(graph: GraphAnalysis, capture: Capture | None) -> str:
    """Busy % over the graph process's first calls, timed as `-p` times them (before any warm-up)."""
    bench = next((b for b in capture.graph_benchmarks if b.graph == graph.graph), None) if capture else None
    if bench is None or bench.first_wall_ms is None or graph.busy_seed_percent is None or not graph.unprofiled_wall_ms:
        return ""
    device_ms = graph.busy_seed_percent / 100 * graph.unprofiled_wall_ms
    return f"first calls {bench.first_wall_ms:.2f} ms, busy {100 * device_ms / bench.first_wall_ms:.1f}"


def _graph_table(
    analysis: Analysis, capture: Capture | None, seeds: list[tuple[SeedProfile | None, float]]
) -> list[list[str]]:
    rows = []
    by_graph = {g.graph: g for g in analysis.graphs if g.graph is not None}
    for number, (seed, _) in enumerate(seeds):
        graph = by_graph.get(number)
        if graph is None or seed is None or graph.busy_seed_percent is None:
            rows.append([str(number), "not measured by one side", "", "", ""])
            continue
        rows.append(
            [
                f"{graph.label} busy",
                f"{graph.busy_seed_percent:.1f}",
                f"{seed.busy_percent:.1f}",
                f"{graph.busy_seed_percent - seed.busy_percent:+.1f} pp",
                f"wall {graph.unprofiled_wall_ms or 0:.2f} vs {seed.wall_ms:.2f} ms; {_first_calls(graph, capture)}",
            ]
        )
        for bucket in SEED_BUCKETS:
            ours = graph.seed_categories_percent.get(bucket, 0.0)
            rows.append(
                [
                    f"  {bucket}",
                    f"{ours:.1f}",
                    f"{seed.categories_percent[bucket]:.1f}",
                    f"{ours - seed.categories_percent[bucket]:+.1f} pp",
                    "",
                ]
            )
    return rows


def compare(recipe_path: Path, variant: str | None, work: Path, json_out: Path | None = None) -> dict[str, object]:
    """Run all three in this sitting, printing each table as soon as its numbers exist; returns the numbers."""
    result: dict[str, object] = {}

    def keep(**fields: object) -> None:
        result.update(fields)
        if json_out is not None:
            json_out.write_text(json.dumps(result, indent=2))

    bundle_dir, run_wall_s = _run_reportgen(recipe_path, variant, work)
    bundle = load_bundle(bundle_dir)
    assert bundle.analysis is not None, f"{bundle_dir} has no analysis"
    env = bundle.manifest.environment
    print(
        f"\n{bundle_dir.name} on {env.gpus[0].name if env and env.gpus else 'cpu'}: run {run_wall_s:.1f} s", flush=True
    )
    keep(bundle=bundle_dir.name, run_wall_s=run_wall_s, stages_s=bundle.manifest.metrics.stages_s)
    recipe = _recipe(recipe_path, variant)
    run_env = child_env(recipe, work / "cache" / bundle_dir.name)
    bares = [_bare(recipe_path, variant, run_env)]
    keep(bare=bares)
    seeds = _seed_runs(bundle.manifest, bundle_dir, run_env)
    print()
    print(
        tabulate(_graph_table(bundle.analysis, bundle.capture, seeds), headers=["graph", "reportgen", "-p", "diff", ""])
    )
    bares.append(_bare(recipe_path, variant, run_env))
    keep(bare=bares)
    print()
    headers = ["step (median) [95 % CI]", "reportgen", "bare loop 1", "bare loop 2", "diff vs bare mean", "bare drift"]
    print(tabulate(_step_table(bundle.manifest, bares), headers=headers))
    compile_s = bundle.manifest.metrics.compile_time_s or 0.0
    manual_s = compile_s + sum(wall for _, wall in seeds)
    print(
        f"\nreportgen run {run_wall_s:.1f} s; first-call compile {compile_s:.1f} s + -p runs "
        f"{' + '.join(f'{w:.1f}' for _, w in seeds)} s = {manual_s:.1f} s; ratio {run_wall_s / manual_s:.2f}"
    )
    keep(
        compile_s=compile_s,
        seeds=[
            {"busy": s.busy_percent, "wall_ms": s.wall_ms, "categories": s.categories_percent} if s else None
            for s, _ in seeds
        ],
        seed_walls_s=[w for _, w in seeds],
        ratio=run_wall_s / manual_s,
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipe", type=Path)
    parser.add_argument("--variant")
    parser.add_argument("--work", type=Path, help="work directory (default: a new temporary one)")
    parser.add_argument("--json", type=Path, help="write the numbers here")
    parser.add_argument("--bare", action="store_true", help=argparse.SUPPRESS)  # the fresh bare-loop process
    args = parser.parse_args()
    if args.bare:
        print(json.dumps(bare_loop(args.recipe.resolve(), args.variant)))
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="fidelity-"))
    compare(args.recipe.resolve(), args.variant, work, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
