"""Tests of benchmarks/window_truth.py's figures: the busy windows' median against the quiet ones', and `--report`."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import window_truth
from window_truth import PROBE, Pair, median_shift


def test_a_constant_shift_reads_exactly_with_an_interval_of_its_own_width() -> None:
    pairs = [Pair(r, PROBE, q, q * 1.05) for r in (1, 2, 3) for q in (1.0, 1.2, 1.7, 0.9)]
    estimate, low, high = median_shift(pairs)
    assert estimate == pytest.approx(5.0)
    assert low == pytest.approx(5.0) and high == pytest.approx(5.0)


def test_the_estimate_is_the_ratio_of_the_two_medians_not_a_pooled_pair_statistic() -> None:
    quiet = [1.0, 1.0, 1.8, 1.8, 1.8, 0.9, 1.7]
    busy = [1.8, 1.0, 1.8, 1.7, 1.9, 1.0, 0.95]
    pairs = [Pair(1 + i % 2, PROBE, q, b) for i, (q, b) in enumerate(zip(quiet, busy, strict=True))]
    expected = 100 * (statistics.median(busy) / statistics.median(quiet) - 1)
    estimate, low, high = median_shift(pairs)
    assert estimate == pytest.approx(expected)
    assert low <= estimate <= high
    assert median_shift(pairs) == (estimate, low, high)  # fixed seed: the same pairs, the same interval


def test_the_interval_resamples_whole_rounds() -> None:
    """Round 1 reads 0 %, round 2 +50 %: a quarter of the resamples draw round 1 twice (0 %) and a quarter round 2
    twice (+50 %), so the 95 % interval reaches both ends; resampling pairs alone would almost never do so."""
    pairs = [Pair(1, PROBE, 1.0, 1.0) for _ in range(10)] + [Pair(2, PROBE, 1.0, 1.5) for _ in range(10)]
    estimate, low, high = median_shift(pairs)
    assert estimate == pytest.approx(25.0)
    assert low == pytest.approx(0.0) and high == pytest.approx(50.0)


def _sitting(path: Path, recipe: str, pairs: list[tuple[float, float]], settle_s: float = 0.0) -> Path:
    rows = [{"round": 1 + i // 2, "figure": PROBE, "quiet": q, "busy": b} for i, (q, b) in enumerate(pairs)]
    data = {"recipe": recipe, "quiet_s": 1.0, "settle_s": settle_s, "pairs": rows, "windows": []}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


ARGS = argparse.Namespace(tolerance_pct=5.0, probe_tolerance_pct=10.0)


def test_report_pools_sittings_and_prints_the_medians(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = [(1.0, 1.1), (1.6, 1.7), (0.9, 1.6), (1.7, 1.75)]
    second = [(1.5, 1.5), (1.0, 1.0)]
    paths = [_sitting(tmp_path / "a.json", "r.yaml", first), _sitting(tmp_path / "b.json", "r.yaml", second)]
    window_truth._reprint(paths, ARGS)
    out = capsys.readouterr().out
    quiet, busy = [q for q, _ in first + second], [b for _, b in first + second]
    row = next(line for line in out.splitlines() if line.startswith(PROBE) and " / " in line)
    assert row.split()[2:5] == ["6", "/", "3"]  # pairs / rounds: the files' 2 and 1 rounds kept apart
    assert f"{100 * (statistics.median(busy) / statistics.median(quiet) - 1):+.2f}" in row.split()


@pytest.mark.parametrize(("recipe", "settle_s"), [("other.yaml", 0.0), ("r.yaml", 0.1)])
def test_report_refuses_to_pool_other_recipes_or_waits(tmp_path: Path, recipe: str, settle_s: float) -> None:
    paths = [
        _sitting(tmp_path / "a.json", "r.yaml", [(1.0, 1.0), (1.0, 1.0)]),
        _sitting(tmp_path / "b.json", recipe, [(1.0, 1.0), (1.0, 1.0)], settle_s),
    ]
    with pytest.raises(SystemExit, match="one recipe and the same waits"):
        window_truth._reprint(paths, ARGS)
