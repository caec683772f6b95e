"""Tests of reportgen.render.charts: every chart is a valid, non-empty PNG of the expected width."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from matplotlib.image import imread

from reportgen.bundle import (
    CATEGORIES,
    GraphAnalysis,
    IdleHistogram,
    Interval,
    KernelTable,
    Metrics,
    StepTimes,
    category_color,
    load_bundle,
)
from reportgen.render.charts import (
    MAX_SPEEDUP_BARS,
    category_chart,
    speedup_chart,
    step_time_chart,
    top_kernels_chart,
)
from reportgen.render.graph_charts import graph_categories_chart, idle_histogram_chart, timeline_chart

MakeBundle = Callable[..., Path]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_png(path: Path, min_height: int = 200) -> None:
    """`path` is a PNG about 8 in × 110 dpi wide."""
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    assert path.stat().st_size > 5000
    height, width = imread(path).shape[:2]
    assert 850 <= width <= 900
    assert height >= min_height


@pytest.fixture
def table(tmp_path: Path, make_bundle: MakeBundle) -> KernelTable:
    analysis = load_bundle(make_bundle(tmp_path / "results", "mixnet")).analysis
    assert analysis is not None
    return analysis.kernels


def test_top_kernels_chart(tmp_path: Path, table: KernelTable) -> None:
    path = tmp_path / "charts" / "top.png"
    assert top_kernels_chart(table, path) == path
    assert_png(path)


def test_top_kernels_chart_limits_bars(tmp_path: Path, table: KernelTable) -> None:
    short = top_kernels_chart(table, tmp_path / "two.png", n=2)
    full = top_kernels_chart(table, tmp_path / "all.png", n=15)
    assert imread(short).shape[0] < imread(full).shape[0]


def test_category_chart(tmp_path: Path, table: KernelTable) -> None:
    assert_png(category_chart(table, tmp_path / "categories.png"))


def test_step_time_chart(tmp_path: Path, make_bundle: MakeBundle) -> None:
    metrics = load_bundle(make_bundle(tmp_path / "results", "mixnet")).manifest.metrics
    assert_png(step_time_chart(metrics, tmp_path / "steps.png"))


def test_speedup_chart(tmp_path: Path) -> None:
    runs = [("mixnet_l--default", 1.24), ("graph_breaks", 0.66), ("x" * 80, 12.0)]
    assert speedup_chart(runs, tmp_path / "speedups.png") == tmp_path / "speedups.png"
    assert_png(tmp_path / "speedups.png", min_height=200)
    assert_png(speedup_chart([], tmp_path / "none.png"), min_height=200)


def test_charts_without_data_still_draw(tmp_path: Path) -> None:
    empty = KernelTable(device="cpu", profiled_steps=1, total_us=0.0, kernels=[])
    assert_png(top_kernels_chart(empty, tmp_path / "top.png"), min_height=150)
    assert_png(category_chart(empty, tmp_path / "categories.png"), min_height=150)
    assert_png(step_time_chart(Metrics(), tmp_path / "steps.png"), min_height=150)


def test_category_colors_are_stable() -> None:
    assert category_color("triton_pointwise") == CATEGORIES[0].color == "#4c72b0"
    assert category_color("brand_new") == category_color("brand_new")
    assert category_color("brand_new").startswith("#")


NOT_NUMBERS = (float("inf"), float("nan"))


@pytest.mark.parametrize("bad", NOT_NUMBERS, ids=["inf", "nan"])
def test_charts_leave_out_what_is_not_a_finite_number(tmp_path: Path, table: KernelTable, bad: float) -> None:
    """Models built here, not read from a file (where `bundle.json_bounds` already nulls them): a bundle from an
    older reader, the history index or a derived number (a sum, a ratio) may still hold one."""
    kernels = [
        k.model_copy(update={"device_time_us": bad if i % 2 else k.device_time_us}) for i, k in enumerate(table.kernels)
    ]
    hostile = table.model_copy(update={"kernels": kernels})
    times = StepTimes(samples_ms=[1.0, bad], median_ms=bad, q1_ms=1.0, q3_ms=bad, min_ms=1.0, max_ms=bad)
    good = StepTimes(samples_ms=[1.0], median_ms=2.0, q1_ms=1.0, q3_ms=3.0, min_ms=1.0, max_ms=3.0)
    graph = GraphAnalysis.model_construct(label="forward", categories_us={"gemm": bad, "pointwise": 10.0})
    assert Interval(low=1, high=2).contains(1.5)  # the models take the value as they are given
    drawn = [
        top_kernels_chart(hostile, tmp_path / "top.png"),
        category_chart(hostile, tmp_path / "cat.png"),
        step_time_chart(Metrics(eager=times, compiled=good), tmp_path / "step.png"),
        step_time_chart(
            Metrics(eager=good, compiled=good.model_copy(update={"median_ms": 1e-320})), tmp_path / "s.png"
        ),
        speedup_chart([("a", bad), ("b", 1.5)], tmp_path / "speedup.png"),
        graph_categories_chart([graph], tmp_path / "graphs.png"),
        timeline_chart([(0.0, 5.0), (6.0, bad)], bad, tmp_path / "timeline.png"),
        idle_histogram_chart(
            IdleHistogram(edges_us=[0, 10, 1e12], counts=[1, 2], total_idle_us=bad), tmp_path / "idle.png"
        ),
    ]
    for path in drawn:
        assert path.read_bytes()[:8] == PNG_SIGNATURE


def test_a_tiny_compiled_median_gives_no_speedup() -> None:
    """eager ÷ 1e-320 overflows to infinity: no speedup, as when one side is missing."""

    def times(median: float) -> StepTimes:
        return StepTimes(
            samples_ms=[median], median_ms=median, q1_ms=median, q3_ms=median, min_ms=median, max_ms=median
        )

    assert Metrics(eager=times(5.0), compiled=times(1e-320)).speedup is None
    assert Metrics(eager=times(5.0), compiled=times(2.0)).speedup == 2.5


def test_a_speedup_chart_of_many_runs_shows_the_lowest_and_highest(tmp_path: Path) -> None:
    """Past MAX_SPEEDUP_BARS runs the chart keeps its height: it shows the 20 lowest and 20 highest speedups."""
    import matplotlib.image

    runs = [(f"run-{i:03d}", 0.5 + i / 100) for i in range(200)]
    heights = {}
    for n in (MAX_SPEEDUP_BARS, 200):
        heights[n] = matplotlib.image.imread(speedup_chart(runs[:n], tmp_path / f"speedups-{n}.png")).shape[0]
    assert heights[200] == heights[MAX_SPEEDUP_BARS]
