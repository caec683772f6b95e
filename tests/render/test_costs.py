"""The kernel table's FLOP columns (issue 31): achieved TFLOP/s and share of the roof, by hand."""

from __future__ import annotations

from pathlib import Path

from reportgen.bundle import GraphAnalysis, GraphKernel, GraphRoof, Kernel, KernelCost, KernelTable, Roof, RunStatus
from reportgen.render import kernels_text
from reportgen.render.costs import cost_cells, graph_roof_sentence, why_not_counted
from reportgen.render.graphs import graph_kernels_section
from reportgen.render.report import _graph_rooflines
from reportgen.render.roofline_chart import roofline_chart
from tests.conftest import make_analysis, make_manifest


def _table() -> KernelTable:
    counted = KernelCost(
        flops=2e9, bytes=1e6, dtype="c10::BFloat16", ops=["aten::mm"], bound_tflops=4.0, bound="compute"
    )
    return KernelTable(
        device="cuda",
        profiled_steps=2,
        total_us=2000.0,
        kernels=[
            Kernel(name="sm90_gemm", category="extern_gemm", device_time_us=1000.0, count=2, share=0.5, cost=counted),
            Kernel(name="triton_poi_fused_0", category="triton_pointwise", device_time_us=1000.0, count=2, share=0.5),
        ],
    )


def test_a_counted_row_shows_its_tflops_and_share_of_its_roof() -> None:
    rows = _table().kernels
    # 2e9 FLOPs in 1 ms: 2 TFLOP/s, half of a 4 TFLOP/s roof; 1e6 bytes in 1 ms: 1 GB/s
    assert cost_cells(rows[0]) == ["2", "50 (compute)", "1"]
    estimated = rows[0].model_copy(update={"cost": rows[0].cost.model_copy(update={"estimated": True})})  # type: ignore[union-attr]
    assert cost_cells(estimated) == ["≈2", "50 (compute)", "≈1"]  # a template's FLOPs as Inductor estimates them
    uncounted, roof_cell, gbps = cost_cells(rows[1])
    assert roof_cell == "—" and gbps == "—" and uncounted.endswith(">—</span>")
    moved = rows[1].model_copy(update={"estimated_bytes": 4e6})  # Inductor's estimate for a Triton kernel
    assert cost_cells(moved)[1:] == ["—", "≈4"]
    assert 'title="not counted: Inductor&#x27;s own kernel: no op of known cost launched it' in uncounted


def test_each_uncounted_row_says_why_by_its_category() -> None:
    def why(category: str) -> str:
        return why_not_counted(Kernel(name="k", category=category, device_time_us=1.0, count=1, share=1.0))

    assert why("triton_reduction").startswith("Inductor's own kernel") and why("cpp_fused") == why("triton_pointwise")
    assert why("memcpy") == "a copy: it moves bytes, no arithmetic"
    assert "layout transform" in why("conv") and "elementwise" in why("aten_native")
    assert why("other").startswith("no op of known cost")


def test_the_table_gains_the_columns_and_says_what_they_count() -> None:
    roof = Roof(model="H100 SXM", memory_tbps=3.35, source="https://example.com/datasheet")
    text = kernels_text(_table(), 10, roof)
    assert "TFLOP/s" in text and "% of roof" in text and "50 (compute)" in text
    assert "1 kernel, 50.0 % of the time, is counted" in text and "H100 SXM" in text
    assert "([datasheet](https://example.com/datasheet))" in text
    hostile = roof.model_copy(update={"source": "javascript:alert(1)"})  # (a bundle's analysis.json says what it likes)
    assert "(datasheet)" in kernels_text(_table(), 10, hostile) and "javascript" not in kernels_text(
        _table(), 10, hostile
    )
    plain = _table().model_copy(update={"kernels": [k.model_copy(update={"cost": None}) for k in _table().kernels]})
    assert "TFLOP/s" not in kernels_text(plain, 10, roof)


def test_the_roofline_chart_draws_the_counted_rows(tmp_path: Path) -> None:
    roof = Roof(
        model="H100 SXM", memory_tbps=3.35, source="https://example.com", compute_tflops={"c10::BFloat16": 989.4}
    )
    path = roofline_chart(_table().kernels, roof, tmp_path / "roofline.png")
    assert path.read_bytes().startswith(b"\x89PNG")
    empty = _table().model_copy(update={"kernels": _table().kernels[1:]})
    assert (
        roofline_chart(empty.kernels, roof, tmp_path / "empty.png").stat().st_size > 0
    )  # says there is nothing to draw


def test_a_graph_says_how_near_its_roof_its_counted_kernels_run() -> None:
    """The analysis's numbers (`GraphRoof`), as a sentence: 2 kernels, 4 of the graph's 8 ms, 37.5 % of their roof,
    2.125 ms left (see tests/analyze/test_roofline.py for the arithmetic)."""
    graph = GraphAnalysis(graph=0, label="forward (graph 0)", key=None, kind="forward", calls=1, wall_us=1.0,
                          kernel_time_us=8000.0,
                          roof=GraphRoof(kernels=2, time_us=4000.0, share_of_roof=0.375, time_left_us=2125.0))  # fmt: skip
    assert graph_roof_sentence(graph) == (
        "Kernels of known FLOPs: 2, 4.00 ms (50.0 % of the graph's time), at 38 % of their roof (time-weighted); "
        "at 80 % of it they would take 2.12 ms less."
    )
    unheld = graph.model_copy(update={"roof": GraphRoof(kernels=1, time_us=1000.0)})
    assert graph_roof_sentence(unheld).endswith("(12.5 % of the graph's time); no roof known.")
    assert graph_roof_sentence(graph.model_copy(update={"roof": None})) == ""


def test_each_graph_with_a_counted_kernel_gets_its_roofline_above_its_table(tmp_path: Path) -> None:
    """Graph 0 has a counted GEMM, graph 1 none: one chart, drawn for graph 0 and placed under its heading."""
    roof = Roof(model="H100 SXM", memory_tbps=3.35, source="https://example.com", compute_tflops={"float": 67.0})
    gemm_cost = KernelCost(flops=2e9, bytes=1e6, dtype="float", ops=["aten::mm"], bound_tflops=67.0, bound="compute")

    def graph(number: int, cost: KernelCost | None) -> GraphAnalysis:
        kernel = GraphKernel(graph=number, name=f"k{number}", category="extern_gemm", device_time_us=1000.0, count=1,
                             share=1.0, cost=cost)  # fmt: skip
        return GraphAnalysis(graph=number, label=f"forward (graph {number})", key=None, kind="forward", calls=1,
                             wall_us=1.0, kernel_time_us=1000.0, kernels=[kernel])  # fmt: skip

    analysis = make_analysis([("k0", "extern_gemm", 1000.0, 1), ("k1", "extern_gemm", 1000.0, 1)]).model_copy(
        update={"roof": roof, "graphs": [graph(0, gemm_cost), graph(1, None)]}
    )
    charts = _graph_rooflines(analysis, lambda n: tmp_path / f"roofline-graph-{n}.png")
    assert (
        charts == {"0": "roofline-graph-0.png"} and (tmp_path / "roofline-graph-0.png").read_bytes()[:4] == b"\x89PNG"
    )
    assert _graph_rooflines(analysis.model_copy(update={"roof": None}), lambda n: tmp_path / "x.png") is None

    def figure(path: str, title: str, caption: str) -> str:
        return f"[figure {path}: {title}]"

    manifest = make_manifest("x", RunStatus.ok, None)
    text = graph_kernels_section(analysis, manifest, None, figure=figure, rooflines=charts)
    first, second = text.split("### forward \\(graph 1\\)")
    assert "[figure roofline-graph-0.png: Roofline of forward (graph 0)]" in first and "[figure" not in second


def test_every_chart_file_is_listed_the_per_graph_rooflines_included() -> None:
    """A report's written files are these names (a set of them): a dict among them broke every GPU site build with
    per-graph rooflines."""
    from reportgen.render.pages import ChartFiles

    charts = ChartFiles(top_kernels="t.png", roofline="r.png", graph_rooflines={"0": "r0.png", "1": "r1.png"})
    assert sorted(charts.names()) == ["r.png", "r0.png", "r1.png", "t.png"]
    assert set(charts.names())  # hashable: `_write_report` returns a set of them
