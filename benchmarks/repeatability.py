"""Repeatability: N runs of one recipe into one results directory, their figures side by side, every pair compared.

    python benchmarks/repeatability.py RECIPE [--variant V] [--runs 5] --work DIR [--planted VARIANT ...]
                                       [--json OUT] [--no-run | --only-run]

1. `reportgen run RECIPE -o DIR/results --inductor-cache DIR/cache` `--runs` times, one after the other (the first
   one on an empty cache compiles cold, the rest reuse it); `--no-run` runs nothing and reads what DIR/results
   holds. The newest `--runs` runs of the bundle are the base runs (`results/<name>/` and
   `results/.history/<name>/<id>/`), so a first `--runs 1` warms the cache and a later `--runs 5` reads only its own.
2. Each `--planted` variant once into `DIR/planted`, on the same cache. `--only-run` stops here (a sitting too long
   for one command: make the runs in several calls, then read them all with `--no-run`).
3. Table 1: per figure, one column per base run, then its spread (max/min − 1; counts: identical or not): device
   time and GPU-active time per step, device speedup and every count, eager and compiled; then the wall figures
   (step-time medians, wall speedup, host probe), which depend on the host.
4. A host-normalised CPU cost (issue 27, item 2): host time per step = wall median − GPU-active median, and the
   same in host-probe units; raw against normalised spread (max/min − 1 and CV over the runs).
5. `reportgen compare BEFORE AFTER --no-pool --json` on every ordered pair of base runs: exit codes, whether each
   gated device figure and count was judged, and the regressed metrics of any pair that failed.
6. Each planted bundle compared (`--no-pool`) against every base run: exit 1 in k of N, and what regressed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from repeatability_figures import (
    DASH,
    DEVICE_SPREAD_LIMIT,
    Row,
    cut_verdict,
    figure_rows,
    host_rows,
    pct,
    print_figures,
    print_host,
)
from repeatability_pairs import PairResult, compare_pairs, planted, print_pairs
from repeatability_runs import base_runs, bundle_name, run_reportgen


def summary(rows: list[Row], pairs: list[PairResult], plants: dict[str, list[PairResult]]) -> list[str]:
    """Issue 27's "Done when", one line per condition, with this run's numbers."""
    lines = []
    for row in rows:
        if row.name.endswith("device ms/step"):
            ok = row.spread is not None and row.spread <= DEVICE_SPREAD_LIMIT
            lines.append(f"{row.name} spread {pct(row.spread)} (≤ {pct(DEVICE_SPREAD_LIMIT)}: {'yes' if ok else 'NO'})")
    counts = [r for r in rows if r.kind == "count" and r.identical is not None]
    same = sum(bool(r.identical) for r in counts)
    lines.append(f"counts identical: {same}/{len(counts)} ({'yes' if counts and same == len(counts) else 'NO'})")
    n = len(pairs)
    zero, judged = sum(p.exit_code == 0 for p in pairs), sum(p.judged for p in pairs)
    lines.append(
        f"compare --no-pool exit 0 in {zero}/{n}, judged in {judged}/{n} ({'yes' if zero == judged == n else 'NO'})"
    )
    walls = [f"{r.name} {pct(r.spread)}" for r in rows if r.kind == "wall"]
    lines.append(f"wall spread beside them: {', '.join(walls)}")
    for name, results in plants.items():
        failed = sum(r.exit_code == 1 for r in results)
        figures = sorted({name for r in results for name in r.regressed_names})
        lines.append(f"planted {name}: exit 1 in {failed}/{len(results)}, naming {'; '.join(figures) or DASH}")
    return lines


# ---- main ----------------------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recipe", type=Path)
    parser.add_argument("--variant", help="the base variant (required when the recipe has variants)")
    parser.add_argument("--runs", type=int, default=5, help="base runs to make and read (default 5)")
    parser.add_argument("--work", type=Path, required=True, help="holds results/, planted/, cache/ and logs/")
    parser.add_argument(
        "--planted",
        nargs="+",
        default=[],
        metavar="VARIANT|RECIPE",
        help="variants of RECIPE, or recipe files (*.yaml), that must regress",
    )
    parser.add_argument("--json", type=Path, help="write every number here")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--no-run", action="store_true", help="run nothing; read what --work holds")
    mode.add_argument(
        "--only-run", action="store_true", help="make the runs and stop (split a long sitting; read with --no-run)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.runs < (1 if args.only_run else 2):
        raise SystemExit(f"--runs: at least {1 if args.only_run else 2}")
    work: Path = args.work.resolve()
    results, cache, planted_dir = work / "results", work / "cache", work / "planted"
    name = bundle_name(args.recipe, args.variant)
    # A planted change: a variant of RECIPE, or a recipe file of its own (`recipes/transformer_extra_matmul.yaml`).
    plant_recipes = {v: (Path(v), None) if v.endswith((".yaml", ".yml")) else (args.recipe, v) for v in args.planted}
    plant_names = {v: bundle_name(*plant_recipes[v]) for v in args.planted}  # unknown variants fail before any run
    walls: list[float] = []
    if not args.no_run:
        for i in range(1, args.runs + 1):
            walls.append(run_reportgen(args.recipe, args.variant, results, cache, work / "logs" / f"run-{i}.log"))
            print(f"run {i}/{args.runs} of {name}: {walls[-1]:.1f} s", flush=True)
        for variant in args.planted:
            log = work / "logs" / f"planted-{plant_names[variant]}.log"
            wall_s = run_reportgen(*plant_recipes[variant], planted_dir, cache, log)
            print(f"planted {variant}: {wall_s:.1f} s", flush=True)
    if args.only_run:
        return 0
    runs = base_runs(results, name, args.runs)
    figures = [run.figures for run in runs]
    device = next((f.device for f in figures if f is not None), None)
    rows = figure_rows(runs)
    print_figures(rows, runs, device)
    host = host_rows(runs)
    print_host(host, len(runs))
    print(f"\ncomparing {len(runs) * (len(runs) - 1)} ordered pairs ...", flush=True)
    pairs = compare_pairs(runs)
    print_pairs(pairs, runs)
    plants = {v: planted(v, planted_dir / plant_names[v], runs) for v in args.planted}
    lines = summary(rows, pairs, plants)
    lines += [f"item 2, {raw.name}: {cut_verdict(raw, norm)}" for raw, norm in host]
    print("\nsummary (issue 27, Done when):", *lines, sep="\n  ")
    if args.json:
        report = {
            "recipe": str(args.recipe),
            "variant": args.variant,
            "bundle": name,
            "device": device,
            "runs": [str(run.path) for run in runs],
            "run_wall_s": walls,
            "figures": [_row_json(r) for r in rows],
            "host_normalised": [
                {"raw": _row_json(raw), "normalised": _row_json(norm), "verdict": cut_verdict(raw, norm)}
                for raw, norm in host
            ],
            "pairs": [vars(p) for p in pairs],
            "pairs_exit_0": sum(p.exit_code == 0 for p in pairs),
            "pairs_judged": sum(p.judged for p in pairs),
            "planted": {v: [vars(r) for r in rs] for v, rs in plants.items()},
            "summary": lines,
        }
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0


def _row_json(row: Row) -> dict[str, object]:
    return {
        "name": row.name,
        "kind": row.kind,
        "values": row.values,
        "spread": row.spread,
        "cv": row.cv,
        "identical": row.identical if row.kind == "count" else None,
    }


if __name__ == "__main__":
    sys.exit(main())
