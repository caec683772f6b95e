"""`reportgen compare`: headline metrics against their intervals, the kernel diff, text/Markdown/JSON, exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reportgen.analyze import analyze
from reportgen.bundle import (
    ANALYSIS_FILE,
    ANALYSIS_REVISION,
    COUNTS,
    MANIFEST_FILE,
    Comparison,
    load_bundle,
    write_analysis,
)
from reportgen.cli import main
from reportgen.compare import compare_bundles, compare_paths, to_text
from tests.data import BUNDLES_DIR, RECIPES_DIR

__all__: list[str] = []

REAL = BUNDLES_DIR / "fused_add_mul"  # an H200 run: 20 eager and 20 compiled blocks


def _copy(tmp_path: Path, name: str) -> Path:
    return Path(shutil.copytree(REAL, tmp_path / name))


def _edit(path: Path, edit: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)  # type: ignore[operator]
    path.write_text(json.dumps(data), encoding="utf-8")


def _scale_compiled(factor: float) -> object:
    def edit(manifest: dict[str, object]) -> None:
        compiled = manifest["metrics"]["compiled"]  # type: ignore[index]
        for key in ("median_ms", "q1_ms", "q3_ms", "min_ms", "max_ms"):
            compiled[key] *= factor
        compiled["samples_ms"] = [s * factor for s in compiled["samples_ms"]]

    return edit


def _analysed(tmp_path: Path, name: str) -> Path:
    """A copy of the real bundle with a current analysis.json (its compiled figures from its trace)."""
    path = _copy(tmp_path, name)
    bundle = load_bundle(path)
    write_analysis(path, analyze(path, bundle.manifest, bundle.capture))
    return path


def _figures(side: str, **plant: object) -> object:
    """Plant into analysis.json `figures.<side>`: `device` scales each step's device time, `<count>=n` adds n to
    that count in every step, `op=(name, n)` adds an ATen op name."""

    def edit(analysis: dict[str, Any]) -> None:
        figures = analysis["figures"][side]
        if (scale := plant.get("device")) is not None:
            figures["device_us"] = [us * scale for us in figures["device_us"]]  # type: ignore[operator]
            figures["active_us"] = [us * scale for us in figures["active_us"]]  # type: ignore[operator]
        for name, extra in plant.items():
            if name in figures["counts"]:
                figures["counts"][name] = [n + extra for n in figures["counts"][name]]
        if (op := plant.get("op")) is not None:
            figures["aten_ops"][op[0]] = op[1]  # type: ignore[index]

    return edit


def _verdicts(comparison: Comparison) -> dict[str, str]:
    return {m.name: m.verdict for m in comparison.metrics}


def test_a_run_against_itself_is_no_regression(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    [comparison] = compare_paths(REAL, REAL)
    assert not comparison.regressed
    verdicts = _verdicts(comparison)
    # Judged: device time (the GPU's clock) and every count of the profiled compiled steps.
    assert verdicts["device time per step, compiled"] == "within noise"
    assert [m.gated for m in comparison.metrics if m.name == "device time per step, compiled"] == [True]
    counts = {m.name: m.verdict for m in comparison.metrics if m.kind == "count" and m.side == "compiled"}
    assert set(counts) == {f"{words} per step, compiled" for words in COUNTS.values()}
    assert set(counts.values()) == {"within noise"}
    # Not judged: wall figures of one run a side; eager's figures (this bundle profiled no eager steps).
    assert verdicts["compiled median"] == verdicts["eager median"] == verdicts["speedup"] == "not judged"
    assert verdicts["device time per step, eager"] == "not measured"
    assert verdicts["host probe (CPU speed)"] == "not measured"  # recorded before the host probe existed
    assert comparison.kernels == [] and comparison.count_changes == []
    assert main(["compare", str(REAL), str(REAL)]) == 0
    assert "No regression" in capsys.readouterr().out


@pytest.mark.parametrize("scale", [1.2, 3.0])
def test_a_wall_slowdown_alone_is_not_judged_with_one_run_a_side(tmp_path: Path, scale: float) -> None:
    """Step times of one process, +20 % or +200 %: device time and counts did not move, so no gate fails (five
    runs of one code on one H200 spread 39 % in eager step time)."""
    slow = _copy(tmp_path, "slow")
    _edit(slow / MANIFEST_FILE, _scale_compiled(scale))
    comparison = compare_bundles(REAL, slow)
    assert not comparison.regressed
    assert _verdicts(comparison)["compiled median"] == "not judged"
    assert main(["compare", str(REAL), str(slow)]) == 0


@pytest.mark.parametrize(
    ("scale", "verdict"), [(1.05, "regressed"), (1.03, "regressed"), (1.01, "within noise"), (0.95, "improved")]
)
def test_device_time_is_judged_against_the_device_threshold(tmp_path: Path, scale: float, verdict: str) -> None:
    """2 % by default: an extra matmul of 5 % of the GPU work fails; 1 % (inside the steps' range) does not."""
    before, after = _analysed(tmp_path, "before"), _analysed(tmp_path, "after")
    _edit(after / ANALYSIS_FILE, _figures("compiled", device=scale))
    comparison = compare_bundles(before, after)
    assert _verdicts(comparison)["device time per step, compiled"] == verdict
    assert comparison.regressed == (verdict == "regressed")
    assert [m.name for m in comparison.regressions] == (
        ["device time per step, compiled"] if comparison.regressed else []
    )
    assert main(["compare", str(before), str(after), "--no-pool"]) == int(verdict == "regressed")


def test_the_device_threshold_comes_from_the_recipe_and_the_flag(tmp_path: Path) -> None:
    before, after = _analysed(tmp_path, "before"), _analysed(tmp_path, "after")
    _edit(after / ANALYSIS_FILE, _figures("compiled", device=1.05))
    _edit(after / MANIFEST_FILE, lambda manifest: manifest["recipe"].update(device_regression_threshold=0.1))
    comparison = compare_bundles(before, after)
    assert not comparison.regressed and comparison.device_threshold == 0.1
    assert main(["compare", str(before), str(after), "--device-threshold", "0.02"]) == 1


def _set_count(side: str, name: str, value: int) -> object:
    def edit(analysis: dict[str, Any]) -> None:
        counts = analysis["figures"][side]["counts"]
        counts[name] = [value] * len(counts[name])

    return edit


@pytest.mark.parametrize(
    ("count", "before_n", "after_n", "verdict"),
    [
        ("launches", 600, 600, "within noise"),
        ("launches", 600, 601, "changed"),  # listed, under the 5 % threshold
        ("launches", 600, 660, "regressed"),
        ("launches", 600, 500, "improved"),
        ("graphs", 1, 2, "regressed"),  # a graph break
        ("syncs", 0, 1, "regressed"),  # a synchronisation where there was none
    ],
)
def test_a_count_that_grows_beyond_the_threshold_regresses_and_any_change_is_listed(
    tmp_path: Path, count: str, before_n: int, after_n: int, verdict: str
) -> None:
    before, after = _analysed(tmp_path, "before"), _analysed(tmp_path, "after")
    _edit(before / ANALYSIS_FILE, _set_count("compiled", count, before_n))
    _edit(after / ANALYSIS_FILE, _set_count("compiled", count, after_n))
    comparison = compare_bundles(before, after)
    metric = next(m for m in comparison.metrics if m.name == f"{COUNTS[count]} per step, compiled")  # type: ignore[index]
    assert (metric.before, metric.after, metric.verdict, metric.gated) == (before_n, after_n, verdict, True)
    assert comparison.regressed == (verdict == "regressed")


def test_a_changed_count_names_the_ops_behind_it(tmp_path: Path) -> None:
    before, after = _analysed(tmp_path, "before"), _analysed(tmp_path, "after")
    _edit(after / ANALYSIS_FILE, _figures("compiled", aten_ops=2, op=("aten::planted_mm", 2.0)))
    comparison = compare_bundles(before, after)
    assert [(c.side, c.what, c.name, c.before, c.after) for c in comparison.count_changes] == [
        ("compiled", "aten op", "aten::planted_mm", 0.0, 2.0)
    ]


def test_a_cpu_runs_device_figures_are_not_judged(tmp_path: Path) -> None:
    """On a CPU run the "device" time is CPU time, which the host's speed moves: shown, never gated."""
    before, after = _analysed(tmp_path, "before"), _analysed(tmp_path, "after")
    for path in (before, after):
        _edit(path / ANALYSIS_FILE, lambda analysis: analysis["figures"].update(device="cpu"))
    _edit(after / ANALYSIS_FILE, _figures("compiled", device=1.5))
    comparison = compare_bundles(before, after)
    device = next(m for m in comparison.metrics if m.name == "device time per step, compiled")
    assert (device.verdict, device.gated, comparison.regressed) == ("not judged", False, False)
    shown = {m.name: m.verdict for m in comparison.metrics if m.kind == "device"}
    assert shown["GPU-active time per step, compiled"] == "not judged"  # CPU time too, as is the device speedup
    assert shown["device speedup"] in ("not judged", "not measured")


def test_kernel_diff_names_slower_added_and_removed_kernels(tmp_path: Path) -> None:
    before, after = _copy(tmp_path, "before"), _copy(tmp_path, "after")
    (before / ANALYSIS_FILE).unlink()  # analysed in memory: nothing is written into the bundle
    assert compare_bundles(before, after).kernels == []  # after's stale analysis is analysed again, not trusted
    assert not (before / ANALYSIS_FILE).exists()
    [fused] = compare_bundles(before, after).categories

    def plant(analysis: dict[str, object]) -> None:
        analysis["revision"] = ANALYSIS_REVISION
        graph = analysis["graphs"][0]  # type: ignore[index]
        kernel = graph["kernels"][0]
        kernel["device_time_us"] *= 2
        graph["kernels"].append({**kernel, "name": "triton_poi_fused_planted_9", "device_time_us": 50.0})

    _edit(after / ANALYSIS_FILE, plant)
    comparison = compare_bundles(before, after)
    slower, added = comparison.kernels
    assert (slower.kind, added.kind) == ("slower", "added")
    assert slower.name.startswith("triton_poi_fused_add_mul") and slower.graph == fused.graph
    assert slower.before_us is not None and slower.after_us == pytest.approx(2 * slower.before_us)
    assert (added.name, added.before_us, added.after_us) == (
        "triton_poi_fused_planted_9",
        None,
        pytest.approx(50.0 / 3),
    )
    text = to_text([comparison])
    assert "Kernels that changed:" in text and "triton_poi_fused_planted_9" in text and "+100.0 %" in text


def test_results_directories_pair_bundles_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    shutil.copytree(REAL, old / "fused_add_mul")
    shutil.copytree(REAL, new / "fused_add_mul")
    shutil.copytree(REAL, new / "only_new")  # nothing to pair with: left out
    _edit(new / "fused_add_mul" / MANIFEST_FILE, _scale_compiled(1.5))
    assert [c.name for c in compare_paths(old, new)] == ["fused_add_mul"]
    assert main(["compare", str(old), str(new), "--json"]) == 0  # step times of one run a side: not judged
    [data] = json.loads(capsys.readouterr().out)
    assert data["regressed"] is False and data["threshold"] == 0.05 and data["device_threshold"] == 0.02
    compiled = next(m for m in data["metrics"] if m["name"] == "compiled median")
    assert (compiled["kind"], compiled["verdict"]) == ("wall", "not judged")
    write_analysis(new / "fused_add_mul", analyze(new / "fused_add_mul", load_bundle(new / "fused_add_mul").manifest))
    _edit(new / "fused_add_mul" / ANALYSIS_FILE, _figures("compiled", graphs=1))
    assert main(["compare", str(old), str(new), "--json"]) == 1
    [data] = json.loads(capsys.readouterr().out)
    regressed = [m["name"] for m in data["metrics"] if m["verdict"] == "regressed"]
    assert regressed == ["compiled graphs entered per step, compiled"]


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(tmp_path / "nope"), str(REAL)]) == 2
    assert (
        capsys.readouterr().err.strip() == f"reportgen: error: {tmp_path / 'nope'}: no such bundle or results directory"
    )
    (tmp_path / "empty").mkdir()
    assert main(["compare", str(tmp_path / "empty"), str(REAL)]) == 2
    assert "not one of each" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(REAL), str(REAL), "--threshold", "5"])
    assert exc.value.code == 2
    assert "expected a fraction between 0 and 1" in capsys.readouterr().err


def _run(recipe: str, results: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "reportgen", "run", str(RECIPES_DIR / recipe), "-o", str(results)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _counts(bundle: Path) -> dict[str, dict[str, list[int]]]:
    figures = load_bundle(bundle).analysis.figures  # type: ignore[union-attr]
    assert figures is not None and figures.eager is not None and figures.compiled is not None
    return {"eager": dict(figures.eager.counts), "compiled": dict(figures.compiled.counts)}


@pytest.mark.slow
def test_real_cpu_runs_repeat_their_counts_and_gate_planted_ones(tmp_path: Path) -> None:
    """Two runs of one recipe on this (noisy, shared) CPU: identical counts, and the gate passes having judged
    them; an extra matmul adds ATen ops, a graph break adds a compiled graph: each fails the gate by name."""
    first, second = tmp_path / "first", tmp_path / "second"
    for results in (first, second):
        _run("nap.yaml", results)
    _run("nap_extra.yaml", second)
    _run("nap_break.yaml", second)
    base = _counts(first / "nap")
    assert base == _counts(second / "nap")
    assert base["compiled"]["graphs"] == [1, 1] and base["eager"]["graphs"] == [0, 0]
    assert base["eager"]["aten_ops"][0] > 0 and set(base["eager"]) == {"aten_ops", "graphs"}  # no GPU counts on CPU
    cli = [sys.executable, "-m", "reportgen", "compare", "--no-pool", "--json", first / "nap"]
    same = subprocess.run([*cli, second / "nap"], capture_output=True, text=True)
    assert same.returncode == 0, same.stdout + same.stderr
    [data] = json.loads(same.stdout)
    counts = [m for m in data["metrics"] if m["kind"] == "count"]
    assert len(counts) == 4 and {m["verdict"] for m in counts} == {"within noise"}  # judged, all equal
    extra = subprocess.run([*cli, second / "nap_extra"], capture_output=True, text=True)
    assert extra.returncode == 1, extra.stdout + extra.stderr
    [data] = json.loads(extra.stdout)
    regressed = {m["name"] for m in data["metrics"] if m["verdict"] == "regressed"}
    assert "ATen ops dispatched per step, eager" in regressed
    assert any(c["name"].startswith("aten::m") and c["after"] > c["before"] for c in data["count_changes"])
    broken = subprocess.run([*cli, second / "nap_break"], capture_output=True, text=True)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    [data] = json.loads(broken.stdout)
    assert "compiled graphs entered per step, compiled" in {
        m["name"] for m in data["metrics"] if m["verdict"] == "regressed"
    }
    assert _counts(second / "nap_break")["compiled"]["graphs"] == [2, 2]


def test_the_recipe_sets_the_threshold_and_the_flag_overrides_it(tmp_path: Path) -> None:
    """`regression_threshold` in the later run's recipe: launches +20 % regress at 5 %, not at 30 %."""
    before, after = _analysed(tmp_path, "before"), _analysed(tmp_path, "after")
    _edit(before / ANALYSIS_FILE, _set_count("compiled", "launches", 100))
    _edit(after / ANALYSIS_FILE, _set_count("compiled", "launches", 120))
    assert compare_bundles(before, after).regressed
    _edit(after / MANIFEST_FILE, lambda manifest: manifest["recipe"].update(regression_threshold=0.3))
    assert not compare_bundles(before, after).regressed
    assert compare_bundles(before, after).threshold == 0.3
    assert compare_bundles(before, after, threshold=0.05).regressed
    assert main(["compare", str(before), str(after)]) == 0
    assert main(["compare", str(before), str(after), "--threshold", "0.05"]) == 1
