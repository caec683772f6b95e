"""A cold `reportgen run` against the manual workflow it replaces, in one sitting (issue 31).

    python benchmarks/cold_run.py RECIPE [--variant NAME] [--work DIR] [--manual-first]

1. **ours**: `reportgen run RECIPE [--variant V] -o DIR/ours` (a fresh Inductor cache, as every run has): its
   process's wall time, and its stages from the manifest;
2. **the manual workflow**, as PyTorch's "TorchInductor GPU profiling" guide does it, in the user's own environment
   (the recipe's variables and a fresh cache `DIR/manual-cache`, nothing of reportgen's run environment): a plain
   process (this file, `--manual`) builds the same model and inputs, compiles with the recipe's options and times
   the first call (the compile), then `python <wrapper>.py -p` for each compiled graph it loaded, each process
   timed whole.

Prints ours, the manual total (first-call compile + the `-p` walls, the issue's definition) and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from fresh_process import last_json, repo_env, run_timed
from tabulate import tabulate

from reportgen.bundle import iter_bundles, load_bundle
from reportgen.pipeline import variant_recipe

__all__: list[str] = []


def manual(recipe_path: Path, variant: str | None) -> None:
    """In this fresh process: the model's first compiled call, timed; prints the compile and the wrappers as JSON."""
    import torch

    from reportgen.run import inductor
    from reportgen.run.workload import build_workload, compile_model, resolve_device

    recipe = variant_recipe(recipe_path, variant)
    device = resolve_device(recipe.device)
    recipe = recipe.for_device(device)
    work = build_workload(recipe, str(recipe_path.parent), device)
    compiled = compile_model(recipe, work.model)
    started = time.perf_counter()
    work.step(compiled)
    if device == "cuda":
        torch.cuda.synchronize()
    compile_s = time.perf_counter() - started
    wrappers = inductor.module_files([m for m in inductor.loaded_modules() if inductor.is_wrapper(m)])
    print(json.dumps({"compile_s": compile_s, "wrappers": [str(w) for w in wrappers]}), flush=True)


def _ours(args: argparse.Namespace, work: Path) -> tuple[float, dict[str, float]]:
    command = [sys.executable, "-m", "reportgen", "run", str(args.recipe), "-o", str(work / "ours")]
    command += ["--variant", args.variant] if args.variant else []
    wall, _ = run_timed(command, os.environ)
    bundle = load_bundle(next(iter(iter_bundles(work / "ours"))))
    return wall, dict(bundle.manifest.metrics.stages_s)


def _manual(args: argparse.Namespace, work: Path) -> tuple[float, list[float]]:
    recipe_env = variant_recipe(args.recipe, args.variant).env
    env = repo_env({**os.environ, **recipe_env}, TORCHINDUCTOR_CACHE_DIR=str(work / "manual-cache"))
    command = [sys.executable, __file__, str(args.recipe), "--manual"]
    _, out = run_timed(command + (["--variant", args.variant] if args.variant else []), env)
    found = last_json(out)
    walls = [run_timed([sys.executable, wrapper, "-p"], env)[0] for wrapper in found["wrappers"]]
    return float(found["compile_s"]), walls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipe", type=Path)
    parser.add_argument("--variant")
    parser.add_argument("--work", type=Path, default=Path("/tmp/cold-run"))
    parser.add_argument("--manual-first", action="store_true")
    parser.add_argument("--manual", action="store_true", help=argparse.SUPPRESS)  # the manual side's process
    args = parser.parse_args()
    if args.manual:
        manual(args.recipe, args.variant)
        return
    work = args.work.resolve()
    if work.exists() and any(work.iterdir()):
        raise SystemExit(f"{work} is not empty: a cold run needs fresh folders")
    work.mkdir(parents=True, exist_ok=True)
    if args.manual_first:
        compile_s, walls = _manual(args, work)
        ours_s, stages = _ours(args, work)
    else:
        ours_s, stages = _ours(args, work)
        compile_s, walls = _manual(args, work)
    manual_s = compile_s + sum(walls)
    print(f"\n{args.recipe} {args.variant or ''}: {os.cpu_count()} cores")
    rows = [
        ["reportgen run (cold)", f"{ours_s:.1f}"],
        ["manual: first-call compile", f"{compile_s:.1f}"],
        *[[f"manual: python <wrapper {i}> -p", f"{w:.1f}"] for i, w in enumerate(walls)],
        ["manual total", f"{manual_s:.1f}"],
        ["ratio (ours / manual)", f"{ours_s / manual_s:.2f}"],
    ]
    print(tabulate(rows, headers=["", "s"], disable_numparse=True))
    print("our stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in stages.items()))


if __name__ == "__main__":
    main()
