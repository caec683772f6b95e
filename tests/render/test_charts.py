"""Tests of reportgen.render.charts: every chart is a valid, non-empty PNG of the expected width."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from matplotlib.image import imread

from reportgen.bundle import CATEGORIES, KernelTable, Metrics, category_color, load_bundle
from reportgen.render.charts import (
    category_chart,
    speedup_chart,
    step_time_chart,
    top_kernels_chart,
)

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
