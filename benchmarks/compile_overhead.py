"""What a run's recorders add to its compile (issue 31): the first compiled call with and without them.

    python benchmarks/compile_overhead.py RECIPE [--variant NAME] [--rounds 3]

A cold run's compile took 124.5 s against the manual workflow's 113.8 s in the same sitting (mixnet_l, H200). The
run compiles with two recorders on: compile diagnostics (`DiagnosticsRecorder`: logging hooks on Dynamo's artifact
loggers, the recompile messages) and kernel provenance (`ProvenanceRecorder`: a post-grad pass that keeps each
graph, Inductor's provenance tracking at level 2). Each arm is a fresh process with a fresh Inductor cache that builds
the recipe's model, runs one eager step (as the run does before compiling) and times the first compiled step:

- `plain`: `torch.compile` alone, as the manual workflow compiles;
- `recorders`: both recorders started before the first compiled call, as the run's child does.

Arms alternate for `--rounds`; prints each first-call time and the median ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fresh_process import last_json, repo_env, run_timed
from tabulate import tabulate

__all__: list[str] = []

_ARMS = ("plain", "recorders")


def probe(recipe_path: Path, variant: str | None, arm: str) -> None:
    """In this fresh process: the first compiled call's seconds, as one JSON line."""
    import torch

    from reportgen.pipeline import variant_recipe
    from reportgen.run.workload import build_workload, compile_model, resolve_device

    recipe = variant_recipe(recipe_path, variant)
    device = resolve_device(recipe.device)
    recipe = recipe.for_device(device)
    work = build_workload(recipe, str(recipe_path.parent), device)
    work.step(work.model)
    compiled = compile_model(recipe, work.model)
    if arm == "recorders":
        from reportgen.run.diagnostics import DiagnosticsRecorder
        from reportgen.run.provenance import ProvenanceRecorder

        DiagnosticsRecorder(root=recipe_path.parent).start()
        ProvenanceRecorder().start()
    started = time.perf_counter()
    work.step(compiled)
    if device == "cuda":
        torch.cuda.synchronize()
    print(json.dumps({"first_call_s": time.perf_counter() - started}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipe", type=Path)
    parser.add_argument("--variant")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--arm", choices=_ARMS, help=argparse.SUPPRESS)  # an arm's fresh process
    args = parser.parse_args()
    if args.arm:
        probe(args.recipe, args.variant, args.arm)
        return
    from reportgen.pipeline import variant_recipe

    recipe_env = variant_recipe(args.recipe, args.variant).env  # as the run applies it, before torch's import
    command = [sys.executable, __file__, str(args.recipe)] + (["--variant", args.variant] if args.variant else [])
    seconds: dict[str, list[float]] = {arm: [] for arm in _ARMS}
    rows = []
    for round_ in range(args.rounds):
        for arm in _ARMS[round_ % 2 :] + _ARMS[: round_ % 2]:
            with tempfile.TemporaryDirectory(prefix="compile-overhead-") as cache:
                env = repo_env({**os.environ, **recipe_env}, TORCHINDUCTOR_CACHE_DIR=cache)
                _, out = run_timed([*command, "--arm", arm], env)
            seconds[arm].append(last_json(out)["first_call_s"])
            rows.append([round_, arm, f"{seconds[arm][-1]:.2f}"])
            print(rows[-1], flush=True)
    print(tabulate(rows, headers=["round", "arm", "first compiled call (s)"]))
    plain, recorded = statistics.median(seconds["plain"]), statistics.median(seconds["recorders"])
    print(f"medians: plain {plain:.2f} s, recorders {recorded:.2f} s, ratio {recorded / plain:.3f}")


if __name__ == "__main__":
    main()
