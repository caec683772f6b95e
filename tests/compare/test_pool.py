"""Pooled sides: the runs of one identity kept in a results directory widen a side's interval to cover the
variation between processes, which one run's intervals miss."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from reportgen.analyze import analyze
from reportgen.bundle import (
    ANALYSIS_FILE,
    HISTORY_DIR,
    MANIFEST_FILE,
    Comparison,
    MetricChange,
    load_bundle,
    write_analysis,
)
from reportgen.cli import main
from reportgen.compare import compare_bundles, compare_paths
from reportgen.compare.pool import POOL_MAX, pools
from tests.data import BUNDLES_DIR

__all__: list[str] = []

REAL = BUNDLES_DIR / "fused_add_mul"  # an H200 run: 20 eager and 20 compiled blocks
NAME = REAL.name


def _edit(path: Path, **updates: object) -> None:
    """Scale the compiled step times by `factor`, set `started_at`, or set torch's version in a manifest."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if (factor := updates.get("factor")) is not None:
        compiled = data["metrics"]["compiled"]
        for key in ("median_ms", "q1_ms", "q3_ms", "min_ms", "max_ms"):
            compiled[key] *= factor
        compiled["samples_ms"] = [s * factor for s in compiled["samples_ms"]]
    if "started_at" in updates:
        data["started_at"] = updates["started_at"]
    if "torch" in updates:
        data["environment"]["versions"]["torch"] = updates["torch"]
    path.write_text(json.dumps(data), encoding="utf-8")


def _history(tmp_path: Path, factors: Sequence[float]) -> tuple[Path, list[Path]]:
    """A results dir whose runs of the real bundle (oldest first; the last is the latest) have their compiled
    step times scaled by `factors`; analyses removed, so every interval comes from the scaled samples."""
    results, runs = tmp_path / "results", []
    for index, factor in enumerate(factors):
        latest = index == len(factors) - 1
        run = results / NAME if latest else results / HISTORY_DIR / NAME / f"2026010{index + 1}T000000-0000000{index}"
        shutil.copytree(REAL, run)
        (run / ANALYSIS_FILE).unlink()
        _edit(run / MANIFEST_FILE, factor=factor, started_at=f"2026-01-0{index + 1}T00:00:00+00:00")
        runs.append(run)
    return results, runs


def test_a_spread_between_earlier_runs_is_noise_not_a_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same code ran at 1.2x and 1.0x by turns: alone, two runs say nothing about step times (not judged);
    pooled, three runs a side, the spread between them is noise."""
    results, runs = _history(tmp_path, [1.2, 1.0, 1.2, 1.0, 1.2, 1.0])
    alone = compare_bundles(runs[2], runs[5])
    assert not alone.regressed and (alone.before.pooled, alone.after.pooled) == ([], [])
    assert _metric(alone, "compiled median").verdict == "not judged"
    pooled = compare_bundles(runs[2], runs[5], pool=True)
    assert pooled.before.pooled == [str(runs[1]), str(runs[0])]
    assert pooled.after.pooled == [str(runs[4]), str(runs[3])]  # only runs after `before`
    compiled, single = _metric(pooled, "compiled median"), _metric(alone, "compiled median")
    assert compiled.before_ci is not None and single.before_ci is not None
    assert compiled.before_ci[0] < single.before_ci[0]  # the envelope reaches the 1.0x run's interval
    assert (compiled.verdict, compiled.gated, pooled.regressed) == ("within noise", True, False)
    # The CLI pools by default (one bundle: against the run it replaced, which pools up to POOL_MAX runs).
    assert main(["compare", str(results / NAME)]) == 0
    assert main(["compare", str(results / NAME), "--no-pool"]) == 0


def _metric(comparison: Comparison, name: str) -> MetricChange:
    return next(m for m in comparison.metrics if m.name == name)


def test_a_wall_change_beyond_every_pooled_run_regresses_only_with_the_code(tmp_path: Path) -> None:
    """Three runs a side, +40 % step time beyond all intervals: with device time and counts unchanged it is the
    host or the processes (not failing); with a count that moved too, a regression."""
    _, runs = _history(tmp_path, [1.0, 1.02, 1.0, 1.4, 1.4, 1.4])
    comparison = compare_bundles(runs[2], runs[5], pool=True)
    assert len(comparison.before.pooled) == len(comparison.after.pooled) == 2
    assert _metric(comparison, "compiled median").verdict == "host or between-process"
    assert not comparison.regressed
    bundle = load_bundle(runs[5])
    write_analysis(runs[5], analyze(runs[5], bundle.manifest, bundle.capture))
    data = json.loads((runs[5] / ANALYSIS_FILE).read_text(encoding="utf-8"))
    data["figures"]["compiled"]["counts"]["kernels"] = [2, 2, 2]  # one more kernel than the base's one per step
    (runs[5] / ANALYSIS_FILE).write_text(json.dumps(data), encoding="utf-8")
    comparison = compare_bundles(runs[2], runs[5], pool=True)
    assert {m.name for m in comparison.regressions} == {
        "kernels run per step, compiled",
        "compiled median",
        "speedup",
    }


def test_only_runs_of_the_same_identity_are_pooled_and_the_sides_never_share_one(tmp_path: Path) -> None:
    _, runs = _history(tmp_path, [1.0, 1.0, 1.0, 1.0])
    assert pools(runs[2], runs[3]) == ([runs[2], runs[1], runs[0]], [runs[3]])  # newest first
    assert pools(runs[1], runs[3]) == ([runs[1], runs[0]], [runs[3], runs[2]])  # after: the runs after `before`
    _edit(runs[0] / MANIFEST_FILE, torch="2.99.0")  # another torch: not the same code
    assert pools(runs[2], runs[3]) == ([runs[2], runs[1]], [runs[3]])
    (runs[1] / MANIFEST_FILE).write_text("{", encoding="utf-8")  # unreadable: left out, never trusted
    assert pools(runs[2], runs[3]) == ([runs[2]], [runs[3]])


def test_a_side_pools_its_newest_runs_at_most(tmp_path: Path) -> None:
    _, runs = _history(tmp_path, [1.0] * (POOL_MAX + 2))
    before, _ = pools(runs[-2], runs[-1])
    assert before == runs[-2::-1][:POOL_MAX]


def test_results_directories_pool_each_side_in_its_own_directory(tmp_path: Path) -> None:
    """A pull request's gate: two runs on each side, in two results directories."""
    base, _ = _history(tmp_path / "base", [1.0, 1.06])
    pr, _ = _history(tmp_path / "pr", [1.08, 1.14])
    [comparison] = compare_paths(base, pr)
    assert len(comparison.before.pooled) == len(comparison.after.pooled) == 1
    assert not comparison.regressed  # two runs a side: step times not judged; device time and counts equal
    assert compare_paths(base, pr, pool=False)[0].after.pooled == []
