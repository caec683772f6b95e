"""Repeatability's comparisons: `reportgen compare --no-pool` of two bundles, every ordered pair of base runs and
each planted bundle against them (`repeatability.py`)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from itertools import permutations
from pathlib import Path
from typing import Any

from repeatability_figures import DASH, num
from repeatability_runs import LOG_TAIL, BaseRun

__all__: list[str] = []

GATED_KINDS = frozenset({"device", "count"})
"""The figure kinds a `--no-pool` comparison must judge (wall figures abstain without pooled runs, by design)."""


ABSTAINED = frozenset({"not judged", "not measured"})
"""Verdicts that are not a judgement: a pair whose gated device figure or count has one was not judged."""


BEHIND = 3
"""Changed ops or kernels shown behind a regression (the comparison's `count_changes`, largest first)."""


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
                before_v, after_v = num(metric.get("before")), num(metric.get("after"))
                unit = f" {metric['unit']}" if metric.get("unit") else ""
                result.regressed_names.append(name)
                result.regressed.append(f"{name} ({kind or '?'}): {before_v} → {after_v}{unit}")
        for change in comparison.get("count_changes", [])[:BEHIND]:
            what = f"{change.get('side', '?')} {change.get('what', '?')} {change.get('name', '?')}"
            result.behind.append(f"{what} {num(change.get('before'))} → {num(change.get('after'))}")
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
