"""What a fresh process's first step of a recipe costs, and how much of it CUDA's module loading is (issue 31).

    python benchmarks/first_call_cost.py RECIPE [--variant NAME] [--rounds 2] [--modes lazy,eager]

A run's graph-timing process spent 4.3 s + 11 s of one-time work in its first calls of mixnet_l's two compiled
graphs on an H200 (the calls themselves: 1.4 s + 2.8 s), and the run's eager first step took 9.7 s: work every fresh
process pays again. Each arm here is a fresh process on the recipe's eager model, timing: torch's import, the GPU's
context (a tiny op), the model and its inputs, the first step, then the second (steady) step.

- `lazy`: CUDA's default (`CUDA_MODULE_LOADING=LAZY`): a library kernel's module loads at its first launch;
- `eager`: `CUDA_MODULE_LOADING=EAGER`: every module loads with the context.

If `eager` moves the first step's extra seconds into the context's creation, the one-time cost is module loading,
which a waiting process can pay early; if they stay in the first step, it is the libraries' own first-call work
(cuDNN's heuristics, runtime-compiled kernels). Arms alternate for `--rounds`; prints each number per arm.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from fresh_process import last_json, repo_env, run_timed
from tabulate import tabulate

__all__: list[str] = []

_MODES = {"lazy": "LAZY", "eager": "EAGER"}


def probe(recipe_path: Path, variant: str | None) -> None:
    """In this fresh process: each phase's seconds, as one JSON line."""
    started = time.perf_counter()
    import torch

    from reportgen.pipeline import variant_recipe
    from reportgen.run.workload import build_workload, resolve_device

    seconds = {"import": time.perf_counter() - started}
    recipe = variant_recipe(recipe_path, variant)
    device = resolve_device(recipe.device)
    recipe = recipe.for_device(device)

    def phase(name: str, job: object) -> None:
        begun = time.perf_counter()
        job()  # type: ignore[operator]
        if device == "cuda":
            torch.cuda.synchronize()
        seconds[name] = time.perf_counter() - begun

    phase("context", lambda: torch.ones(1, device=device).sum().item())
    work: list[object] = []
    phase("model", lambda: work.append(build_workload(recipe, str(recipe_path.parent), device)))
    workload = work[0]
    phase("first step", lambda: workload.step(workload.model))  # type: ignore[attr-defined]
    phase("second step", lambda: workload.step(workload.model))  # type: ignore[attr-defined]
    print(json.dumps(seconds), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipe", type=Path)
    parser.add_argument("--variant")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--modes", default=",".join(_MODES))
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)  # an arm's fresh process
    args = parser.parse_args()
    if args.probe:
        probe(args.recipe, args.variant)
        return
    modes = args.modes.split(",")
    command = [sys.executable, __file__, str(args.recipe), "--probe"] + (
        ["--variant", args.variant] if args.variant else []
    )
    rows = []
    for round_ in range(args.rounds):
        for mode in modes[round_ % len(modes) :] + modes[: round_ % len(modes)]:
            wall, out = run_timed(command, repo_env(CUDA_MODULE_LOADING=_MODES[mode]))
            seconds = last_json(out)
            rows.append([round_, mode, *(f"{s:.2f}" for s in seconds.values()), f"{wall:.2f}"])
            print(rows[-1], flush=True)
    print(tabulate(rows, headers=["round", "mode", "import", "context", "model", "first step", "second step", "wall"]))


if __name__ == "__main__":
    main()
