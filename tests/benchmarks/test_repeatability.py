"""Tests of benchmarks/repeatability.py (and its repeatability_* modules): which runs are the base, a figure's
spread over them, the host-normalised verdict, and one real `reportgen compare --no-pool` read back."""

from __future__ import annotations

import shutil
import statistics
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from repeatability_figures import Row, cut_verdict, figure_rows
from repeatability_pairs import compare
from repeatability_runs import base_runs

HISTORY = Path(__file__).resolve().parents[1] / "data" / "cpu-history-addmul"
"""Three CPU runs of one recipe in one results directory: two in its history, the newest in place."""


def test_the_base_runs_are_the_newest_oldest_first() -> None:
    older = sorted((HISTORY / ".history" / "addmul").iterdir())
    runs = base_runs(HISTORY, "addmul", 2)
    assert [run.path for run in runs] == [older[-1], HISTORY / "addmul"]
    assert [run.path for run in base_runs(HISTORY, "addmul", 3)] == [*older, HISTORY / "addmul"]
    with pytest.raises(SystemExit, match="3 run\\(s\\) of addmul, 4 wanted"):
        base_runs(HISTORY, "addmul", 4)


def test_a_figure_spreads_max_over_min_and_a_missing_value_leaves_counts_undecided() -> None:
    row = Row("eager device ms/step", "device", [2.0, 2.2, None, 2.1])
    assert row.spread == pytest.approx(0.1)
    assert row.cv == pytest.approx(statistics.stdev([2.0, 2.2, 2.1]) / 2.1)
    assert row.identical is None
    assert Row("launches", "count", [7.0, 7.0]).identical is True
    assert Row("launches", "count", [7.0, 8.0]).identical is False


def test_the_recorded_runs_rows_hold_each_runs_own_wall_figures() -> None:
    runs = base_runs(HISTORY, "addmul", 3)
    rows = {row.name: row for row in figure_rows(runs)}
    medians = [run.bundle.manifest.metrics.eager.median_ms for run in runs]  # type: ignore[union-attr]
    assert rows["eager median ms"].values == medians
    assert {row.kind for row in rows.values()} == {"device", "count", "wall"}


def test_normalising_counts_as_a_cut_only_when_the_cv_falls_by_a_third() -> None:
    raw = Row("eager wall median ms", "wall", [10.0, 12.0, 14.0])
    assert cut_verdict(raw, Row("÷ probe", "wall", [10.0, 10.2, 10.4])).startswith("normalised cuts the spread")
    assert cut_verdict(raw, Row("÷ probe", "wall", [10.0, 11.5, 13.0])).startswith("smaller, not measurably")
    assert cut_verdict(raw, Row("÷ probe", "wall", [10.0, 13.0, 16.0])).startswith("does not cut it")
    assert cut_verdict(raw, Row("÷ probe", "wall", [10.0, None, None])) == "not measured"


def test_a_real_comparison_of_two_recorded_runs_is_read_back(tmp_path: Path) -> None:
    first, second = base_runs(HISTORY, "addmul", 2)
    result = compare(first.path, second.path)
    assert result.error is None and result.exit_code in (0, 1)
    assert result.gated, "a --no-pool comparison judges device figures and counts"
    assert all(kind for kind in result.gated.values())
    missing = tmp_path / "gone"
    shutil.copytree(first.path, missing)
    (missing / "manifest.json").unlink()
    broken = compare(first.path, missing)
    assert broken.exit_code != 0 and broken.error
