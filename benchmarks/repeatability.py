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
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import permutations
from pathlib import Path
from typing import Any

from tabulate import tabulate

from reportgen.bundle import COUNTS, Bundle, Figures, StepFigures, history_runs, load_bundle
from reportgen.errors import RecipeError
from reportgen.pipeline import select_variant
from reportgen.recipe import load_recipe

SIDES = ("eager", "compiled")
"""The two sides of a run, in the order the tables show them."""

GATED_KINDS = frozenset({"device", "count"})
"""The figure kinds a `--no-pool` comparison must judge (wall figures abstain without pooled runs, by design)."""

ABSTAINED = frozenset({"not judged", "not measured"})
"""Verdicts that are not a judgement: a pair whose gated device figure or count has one was not judged."""

MEASURABLE_CUT = 2 / 3
"""The normalised figure "cuts" the spread only if its CV is at most this fraction of the raw one (and its max/min
spread is smaller too): the CV of 5 runs has a relative standard error of about 1/√(2·(5−1)) ≈ 35 %, so a smaller
cut is within the CV's own noise."""

DEVICE_SPREAD_LIMIT = 0.02
"""Issue 27's acceptance: device time per step may spread at most this much (max/min − 1) over the runs."""

BEHIND = 3
"""Changed ops or kernels shown behind a regression (the comparison's `count_changes`, largest first)."""

LOG_TAIL = 3000
"""Characters of a failed command's output shown on stderr: the traceback's end, not the whole progress log."""

DASH = "—"
"""What a table shows for a figure a run lacks."""


@dataclass
class BaseRun:
    """One base run: its bundle and where it lies."""

    path: Path
    bundle: Bundle

    @property
    def figures(self) -> Figures | None:
        """The run's repeatable figures; None before the analysis stores them."""
        analysis = self.bundle.analysis
        return getattr(analysis, "figures", None) if analysis is not None else None

    def side(self, name: str) -> StepFigures | None:
        """Eager's or compiled's figures."""
        return getattr(self.figures, name, None) if self.figures is not None else None


@dataclass
class Row:
    """One figure across the base runs."""

    name: str
    kind: str  # "device", "count" or "wall"
    values: list[float | None]

    @property
    def spread(self) -> float | None:
        """max/min − 1 over the runs that have the figure; None with fewer than two or a non-positive minimum."""
        present = [v for v in self.values if v is not None]
        if len(present) < 2:
            return None
        if len(set(present)) == 1:
            return 0.0
        return max(present) / min(present) - 1 if min(present) > 0 else None

    @property
    def identical(self) -> bool | None:
        """Whether every run has the same value (None: a run lacks it)."""
        if not self.values or any(v is None for v in self.values):
            return None
        return len(set(self.values)) == 1

    @property
    def cv(self) -> float | None:
        """Coefficient of variation (sample stdev ÷ mean) over the runs; None with fewer than two."""
        present = [v for v in self.values if v is not None]
        if len(present) < 2 or statistics.fmean(present) <= 0:
            return None
        return statistics.stdev(present) / statistics.fmean(present)


@dataclass
class PairResult:
    """One `reportgen compare --no-pool` of two bundles."""

    before: str
    after: str
    exit_code: int
    judged: bool
    gated: dict[str, str] = field(default_factory=dict)  # gated device/count metric -> verdict
    regressed: list[str] = field(default_factory=list)  # "name (kind): before → after"
    regressed_names: list[str] = field(default_factory=list)  # the figures the verdicts name
    behind: list[str] = field(default_factory=list)  # the ops and kernels whose count changed, largest first
    error: str | None = None


# ---- running -------------------------------------------------------------------------------------------------


def bundle_name(recipe_path: Path, variant: str | None) -> str:
    """The bundle a run of the recipe (and variant) writes: `<name>` or `<name>--<variant>`."""
    try:
        recipe = load_recipe(recipe_path)
        if variant is None and recipe.variants:
            names = ", ".join(v.name for v in recipe.variants)
            raise SystemExit(f"{recipe_path}: the recipe has variants ({names}); pass --variant")
        return recipe.bundle_name(select_variant(recipe, variant, recipe_path))
    except RecipeError as exc:
        raise SystemExit(str(exc)) from exc


def run_reportgen(recipe_path: Path, variant: str | None, results: Path, cache: Path, log: Path) -> float:
    """One `reportgen run` in a fresh process, its output kept in `log`; its wall time in seconds."""
    command = [sys.executable, "-m", "reportgen", "run", str(recipe_path), "-o", str(results)]
    command += ["--inductor-cache", str(cache)] + (["--variant", variant] if variant else [])
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        code = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    wall_s = time.perf_counter() - started
    if code != 0:
        print(log.read_text(encoding="utf-8", errors="replace")[-LOG_TAIL:], file=sys.stderr)
        raise SystemExit(f"{' '.join(command)}: exit {code} (log: {log})")
    return wall_s


def base_runs(results: Path, name: str, runs: int) -> list[BaseRun]:
    """The newest `runs` runs of bundle `name` in `results`, oldest first."""
    paths = [*history_runs(results, name)]
    if (results / name / "manifest.json").is_file():
        paths.append(results / name)
    if len(paths) < runs:
        raise SystemExit(f"{results}: {len(paths)} run(s) of {name}, {runs} wanted")
    return [BaseRun(path, load_bundle(path)) for path in paths[-runs:]]


# ---- table 1 -------------------------------------------------------------------------------------------------


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def figure_rows(runs: list[BaseRun]) -> list[Row]:
    """Device figures, counts and wall figures, one row each, a value per run."""
    rows: list[Row] = []
    for side in SIDES:
        sides = [run.side(side) for run in runs]
        rows.append(Row(f"{side} device ms/step", "device", [s.device_ms if s else None for s in sides]))
        rows.append(Row(f"{side} GPU-active ms/step", "device", [s.active_ms if s else None for s in sides]))
    rows.append(Row("device speedup", "device", [r.figures.device_speedup if r.figures else None for r in runs]))
    for count in COUNTS:
        for side in SIDES:
            values = [s.count(count) if (s := run.side(side)) else None for run in runs]
            rows.append(Row(f"{side} {count}/step", "count", values))
    metrics = [run.bundle.manifest.metrics for run in runs]
    rows.append(Row("eager median ms", "wall", [m.eager.median_ms if m.eager else None for m in metrics]))
    rows.append(Row("compiled median ms", "wall", [m.compiled.median_ms if m.compiled else None for m in metrics]))
    rows.append(Row("wall speedup", "wall", [m.speedup for m in metrics]))
    rows.append(Row("host probe median ms", "wall", [_median(m.host_probe_ms) for m in metrics]))
    return rows


def _num(value: float | None) -> str:
    if value is None:
        return DASH
    return f"{value:.0f}" if value == int(value) and abs(value) >= 10 else f"{value:.4g}"


def _pct(value: float | None) -> str:
    return DASH if value is None else f"{value * 100:.2f} %"


def print_figures(rows: list[Row], runs: list[BaseRun], device: str | None) -> None:
    """Table 1: the figures per run, their spread, and whether the counts are identical."""
    headers = ["figure", "kind", *(f"run {i}" for i in range(1, len(runs) + 1)), "spread", "identical"]
    table = []
    for row in rows:
        same = DASH if row.kind != "count" or row.identical is None else ("yes" if row.identical else "NO")
        table.append([row.name, row.kind, *map(_num, row.values), _pct(row.spread), same])
    cpu = " (a CPU run: its device figures are CPU time, host-dependent)" if device == "cpu" else ""
    print(f"\nTable 1: {len(runs)} runs, device {device or DASH}{cpu}")
    print(tabulate(table, headers=headers, disable_numparse=True))
    for i, run in enumerate(runs, 1):
        print(f"  run {i}: {run.path}")
    counts = [r for r in rows if r.kind == "count"]
    present = [r for r in counts if r.identical is not None]
    differ = [r.name for r in present if not r.identical]
    print(f"counts identical: {len(present) - len(differ)}/{len(present)} recorded ({len(counts)} rows)")
    if differ:
        print(f"  differ: {', '.join(differ)}")


# ---- item 2: host-normalised CPU cost ------------------------------------------------------------------------


def _div(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def host_rows(runs: list[BaseRun]) -> list[tuple[Row, Row]]:
    """(raw, normalised) pairs: host ms per step (wall − GPU-active, ≥ 0) and wall ms, raw and ÷ the probe."""
    pairs: list[tuple[Row, Row]] = []
    probes = [_median(run.bundle.manifest.metrics.host_probe_ms) for run in runs]
    for side in SIDES:
        walls = [getattr(run.bundle.manifest.metrics, side) for run in runs]
        wall = [w.median_ms if w else None for w in walls]
        active = [s.active_ms if (s := run.side(side)) else None for run in runs]
        host = [max(w - a, 0.0) if w is not None and a is not None else None for w, a in zip(wall, active, strict=True)]
        pairs.append(
            (
                Row(f"{side} host ms/step (wall − active)", "wall", host),
                Row(f"{side} host ÷ probe", "wall", [_div(h, p) for h, p in zip(host, probes, strict=True)]),
            )
        )
        pairs.append(
            (
                Row(f"{side} wall median ms", "wall", wall),
                Row(f"{side} wall ÷ probe", "wall", [_div(w, p) for w, p in zip(wall, probes, strict=True)]),
            )
        )
    return pairs


def cut_verdict(raw: Row, normalised: Row) -> str:
    """Whether normalising by the probe measurably cuts the run-to-run spread, in words: by the CV, and by
    max/min − 1 where both have it (a host time of 0 ms leaves max/min undefined)."""
    if raw.cv is None or normalised.cv is None:
        return "not measured"
    spreads = f"{_pct(raw.spread)} to {_pct(normalised.spread)} (CV {_pct(raw.cv)} to {_pct(normalised.cv)})"
    narrower = raw.spread is None or normalised.spread is None or normalised.spread < raw.spread
    if normalised.cv <= raw.cv * MEASURABLE_CUT and narrower:
        return f"normalised cuts the spread from {spreads}"
    if normalised.cv < raw.cv and narrower:
        return f"smaller, not measurably: {spreads}"
    return f"does not cut it: {spreads}"


def print_host(pairs: list[tuple[Row, Row]], runs: int) -> None:
    """Raw against normalised host cost, per run, with their spreads."""
    headers = ["figure", *(f"run {i}" for i in range(1, runs + 1)), "max/min − 1", "CV"]
    table = [[r.name, *map(_num, r.values), _pct(r.spread), _pct(r.cv)] for pair in pairs for r in pair]
    print("\nHost-normalised CPU cost (item 2): raw against ÷ host-probe median")
    print(tabulate(table, headers=headers, disable_numparse=True))
    for raw, normalised in pairs:
        print(f"  {raw.name}: {cut_verdict(raw, normalised)}")


# ---- compare -------------------------------------------------------------------------------------------------


def compare(before: Path, after: Path) -> PairResult:
    """`reportgen compare BEFORE AFTER --no-pool --json`: exit code, gated device/count verdicts, regressions."""
    command = [sys.executable, "-m", "reportgen", "compare", str(before), str(after), "--no-pool", "--json"]
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    result = PairResult(str(before), str(after), out.returncode, judged=False)
    try:
        data = json.loads(out.stdout)
    except json.JSONDecodeError:
        result.error = (out.stderr or out.stdout).strip()[-LOG_TAIL:] or "no JSON"
        return result
    comparisons: list[dict[str, Any]] = data if isinstance(data, list) else [data]
    for comparison in comparisons:
        for metric in comparison.get("metrics", []):
            name, kind, verdict = metric.get("name", "?"), metric.get("kind"), metric.get("verdict", "?")
            if metric.get("gated") and kind in GATED_KINDS:
                result.gated[name] = verdict
            if metric.get("gated") and verdict == "regressed":
                before_v, after_v = _num(metric.get("before")), _num(metric.get("after"))
                unit = f" {metric['unit']}" if metric.get("unit") else ""
                result.regressed_names.append(name)
                result.regressed.append(f"{name} ({kind or '?'}): {before_v} → {after_v}{unit}")
        for change in comparison.get("count_changes", [])[:BEHIND]:
            what = f"{change.get('side', '?')} {change.get('what', '?')} {change.get('name', '?')}"
            result.behind.append(f"{what} {_num(change.get('before'))} → {_num(change.get('after'))}")
    result.judged = bool(result.gated) and not any(v in ABSTAINED for v in result.gated.values())
    return result


def _label(path: Path, runs: list[BaseRun]) -> str:
    for i, run in enumerate(runs, 1):
        if run.path == path:
            return f"run {i}"
    return path.name


def compare_pairs(runs: list[BaseRun]) -> list[PairResult]:
    """Every ordered pair of base runs (before, after), i ≠ j."""
    results = []
    for a, b in permutations(runs, 2):
        result = compare(a.path, b.path)
        print(f"  {_label(a.path, runs)} → {_label(b.path, runs)}: exit {result.exit_code}", flush=True)
        results.append(result)
    return results


def print_pairs(pairs: list[PairResult], runs: list[BaseRun]) -> None:
    """Exits 0 in k/N, judged in k/N, and every pair that failed or abstained."""
    n = len(pairs)
    zero = sum(p.exit_code == 0 for p in pairs)
    judged = sum(p.judged for p in pairs)
    print(f"\ncompare --no-pool over {n} ordered pairs: exit 0 in {zero}/{n}, judged in {judged}/{n}")
    names = sorted({name for p in pairs for name in p.gated})
    print(f"  gated device figures and counts: {'; '.join(names) or DASH}")
    for p in pairs:
        label = f"{_label(Path(p.before), runs)} → {_label(Path(p.after), runs)}"
        if p.error:
            print(f"  {label}: exit {p.exit_code}, {p.error.splitlines()[-1] if p.error else ''}")
        elif p.exit_code != 0:
            print(f"  {label}: exit {p.exit_code}; regressed: {'; '.join(p.regressed) or DASH}")
            if p.behind:
                print(f"    behind it: {'; '.join(p.behind)}")
        if not p.judged and not p.error:
            abstained = [f"{k}: {v}" for k, v in p.gated.items() if v in ABSTAINED]
            print(f"  {label}: not judged ({'; '.join(abstained) or 'no gated device figure or count'})")


def planted(name: str, bundle: Path, runs: list[BaseRun]) -> list[PairResult]:
    """The planted bundle against every base run (base before, planted after)."""
    if not (bundle / "manifest.json").is_file():
        print(f"\nplanted {name}: no bundle at {bundle}")
        return []
    results = [compare(run.path, bundle) for run in runs]
    failed = sum(r.exit_code == 1 for r in results)
    print(f"\nplanted {name}: exit 1 in {failed}/{len(results)}")
    for i, r in enumerate(results, 1):
        detail = r.error.splitlines()[-1] if r.error else "; ".join(r.regressed) or "nothing regressed"
        print(f"  run {i} → {name}: exit {r.exit_code}; {detail}")
        if r.behind:
            print(f"    behind it: {'; '.join(r.behind)}")
    return results


def summary(rows: list[Row], pairs: list[PairResult], plants: dict[str, list[PairResult]]) -> list[str]:
    """Issue 27's "Done when", one line per condition, with this run's numbers."""
    lines = []
    for row in rows:
        if row.name.endswith("device ms/step"):
            ok = row.spread is not None and row.spread <= DEVICE_SPREAD_LIMIT
            lines.append(
                f"{row.name} spread {_pct(row.spread)} (≤ {_pct(DEVICE_SPREAD_LIMIT)}: {'yes' if ok else 'NO'})"
            )
    counts = [r for r in rows if r.kind == "count" and r.identical is not None]
    same = sum(bool(r.identical) for r in counts)
    lines.append(f"counts identical: {same}/{len(counts)} ({'yes' if counts and same == len(counts) else 'NO'})")
    n = len(pairs)
    zero, judged = sum(p.exit_code == 0 for p in pairs), sum(p.judged for p in pairs)
    lines.append(
        f"compare --no-pool exit 0 in {zero}/{n}, judged in {judged}/{n} ({'yes' if zero == judged == n else 'NO'})"
    )
    walls = [f"{r.name} {_pct(r.spread)}" for r in rows if r.kind == "wall"]
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
