"""Tests of reportgen.sphinx_ext.text and of the chart kinds of reportgen.sphinx_ext.assets."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from reportgen.bundle import DistributedRun, RankRun, RunStatus, load_bundle
from reportgen.render.pages import ChartFiles
from reportgen.sphinx_ext.assets import CHART_KINDS, BundleAssets
from reportgen.sphinx_ext.text import report_text, summary_table

MakeBundle = Callable[..., Path]
BUNDLE = Path(__file__).parents[1] / "data" / "bundles" / "fused_add_mul"


def test_summary_table_of_a_gpu_bundle() -> None:
    text = summary_table(load_bundle(BUNDLE))
    assert text.startswith("```{list-table} Fused A \\* B \\+ C\n:header-rows: 1\n")
    for row in (
        "* - Status\n  - **ok**",
        "* - Device\n  - NVIDIA H200",
        "* - Torch\n  - 2\\.11.0\\+cu130",
        "* - Eager step (median)\n  - 0.118 ms (IQR 0.116–0.119)",
        "* - Compiled step (median)\n  - 0.125 ms (IQR 0.122–0.130)",
        "* - Speedup\n  - 0.94×",
        "* - Compile time\n  - 3.5 s",
    ):
        assert row in text


def test_summary_table_of_a_failed_run(tmp_path: Path, make_bundle: MakeBundle) -> None:
    text = summary_table(load_bundle(make_bundle(tmp_path, "broken", status=RunStatus.failed)))
    assert "* - Status\n  - **failed**" in text
    assert "* - Speedup\n  - —" in text


def test_report_text_leaves_out_links_to_other_pages() -> None:
    bundle = load_bundle(BUNDLE)
    text = report_text(bundle, ChartFiles(step_times="s.png"), recipe_yaml="name: x\n", log_tail=None, max_kernels=5)
    assert text.startswith("# Fused A \\* B \\+ C\n")
    assert "```{figure} s.png" in text
    assert "{download}`Download recipe.yaml <recipe.yaml>`" in text
    assert "{doc}" not in text


def test_chart_kinds_name_chart_files_fields() -> None:
    """Every chart of one per page is a `perf-chart` kind; the per-graph rooflines come with `perf-report`."""
    fields = {f.name for f in dataclasses.fields(ChartFiles)} - {"graph_rooflines"}
    assert {kind.field for kind in CHART_KINDS.values()} == fields
    charts = ChartFiles(roofline="r.png", graph_rooflines={"0": "r0.png", "1": "r1.png"})
    assets = BundleAssets(directory=Path("/cache"), charts=charts, recipe="recipe.yaml")
    assert sorted(assets.names()) == ["r.png", "r0.png", "r1.png", "recipe.yaml"]  # all relocated in perf-report


def test_an_embedded_distributed_report_leads_with_its_ranks_without_links() -> None:
    bundle = load_bundle(BUNDLE)
    ranks = [RankRun(rank=r, status="ok", stage="done", graphs=["a.py"]) for r in (0, 1)]
    run = DistributedRun(world_size=2, strategy="ddp", backend="nccl", ranks=ranks)
    bundle = dataclasses.replace(bundle, manifest=bundle.manifest.model_copy(update={"distributed": run}))
    text = report_text(bundle, ChartFiles(ranks="r.png"), recipe_yaml=None, log_tail=None, max_kernels=5)
    assert text.index("## Distributed run") < text.index("## Findings")
    assert "* - rank 1\n" in text and "```{figure} r.png" in text and "{doc}" not in text
