"""Provenance on a real run: how much compiled-graph time lands on a module and a line, and what it costs.

    python benchmarks/provenance_check.py RESULTS recipes/mixnet_l.yaml --variant default [--off] [--json OUT]

Runs the recipe (one variant), analyses the bundle and prints: the method, the share of compiled-graph kernel
time attributed to a module path and to a user-visible `file:line`, the top modules and lines, whether the
top-10 kernels show both, the run's wall time and compile time. `--off` runs with `profile.provenance: false`
(the overhead baseline).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from reportgen.analyze import analyze
from reportgen.bundle import read_capture, read_manifest
from reportgen.recipe import load_recipe
from reportgen.run import RunOptions, run_recipe


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", type=Path)
    parser.add_argument("recipe", type=Path)
    parser.add_argument("--variant")
    parser.add_argument("--off", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    recipe = load_recipe(args.recipe)
    if args.off:
        profile = recipe.profile.model_copy(update={"provenance": False})
        recipe = recipe.model_copy(update={"profile": profile})
    variant = next((v for v in recipe.variants if v.name == args.variant), None)
    started = time.monotonic()
    bundle = run_recipe(recipe, args.recipe, args.results, RunOptions(), variant=variant)
    wall_s = time.monotonic() - started
    manifest = read_manifest(bundle)
    out: dict[str, object] = {"bundle": str(bundle), "status": manifest.status.value, "wall_s": round(wall_s, 1)}
    out["compile_s"] = manifest.metrics.compile_time_s
    out["stages_s"] = manifest.metrics.stages_s
    if manifest.trace_file:
        analysis = analyze(bundle, manifest, read_capture(bundle, manifest))
        out.update(_summary(analysis))
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")


def _summary(analysis: object) -> dict[str, object]:
    summary = analysis.provenance  # type: ignore[attr-defined]
    if summary is None:
        return {"provenance": "not captured"}
    graphs = [g for g in analysis.graphs if g.graph is not None]  # type: ignore[attr-defined]
    kernels = sorted((k for g in graphs for k in g.kernels), key=lambda k: -k.device_time_us)[:10]
    return {
        "method": summary.method,
        "notes": summary.notes,
        "module_share": round(summary.module_share, 4),
        "line_share": round(summary.line_share, 4),
        "top_modules": [
            (
                m.path,
                m.module_class,
                round(m.forward_us / 1e3, 2),
                round(m.backward_us / 1e3, 2),
                round(m.self_us / 1e3, 2),
            )
            for m in summary.modules[:15]
        ],
        "top_lines": [(f"{r.file}:{r.line}", r.module_path, round(r.total_us / 1e3, 2)) for r in summary.lines[:10]],
        "top_kernels": [
            (
                k.name[:80],
                k.category,
                round(k.device_time_us / 1e3, 2),
                [
                    (o.module_path, o.location and o.location.rsplit("/", 2)[-2:], round(o.share, 2), o.match)
                    for o in k.origins[:4]
                ],
            )
            for k in kernels
        ],
    }


if __name__ == "__main__":
    main()
