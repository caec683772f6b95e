from __future__ import annotations

from reportgen.bundle import (
    Analysis,
    Capture,
    GraphAnalysis,
    GraphKernel,
    KernelBenchmark,
    KernelTable,
    Manifest,
    PeakBandwidth,
    RunStatus,
    StepAnalysis,
)
from reportgen.recipe.model import Recipe
from reportgen.render.graphs import (
    STEP_WINDOWS,
    WHOLE_TRACE_WINDOW,
    busy_section,
    graph_kernels_section,
    kernel_benchmarks_section,
)
from reportgen.render.kernel_names import short_kernel_name
from reportgen.render.markup import figure


def _graph(kind: str, number: int, busy_seed: float | None) -> GraphAnalysis:
    kernel = GraphKernel(
        graph=number,
        name=f"triton_poi_fused_add_mul_{number}",
        category="triton_pointwise",
        device_time_us=300.0,
        count=3,
        share=1.0,
        aten_ops=["aten.add", "aten.mul"],
    )
    return GraphAnalysis(
        graph=number,
        label=f"{kind} (graph {number})",
        key="k",
        kind=kind,
        calls=3,
        wall_us=3000.0,
        kernel_time_us=300.0,
        busy_union_percent=9.5,
        busy_seed_percent=busy_seed,
        seed_categories_percent={"pointwise": 8.25, "reduction": 0.0, "persistent_reduction": 0.0, "other": 1.0}
        if busy_seed
        else {},
        unprofiled_wall_ms=1.0 if busy_seed else None,
        unprofiled_rounds_ms=[1.2, 1.0, 1.05] if busy_seed else [],
        categories_us={"triton_pointwise": 300.0},
        kernels=[kernel],
    )


def _analysis() -> Analysis:
    table = KernelTable(device="cuda", profiled_steps=3, total_us=600.0, kernels=[])
    steps = [
        StepAnalysis(
            step=1,
            wall_us=2000.0,
            kernel_time_us=200.0,
            busy_union_us=190.0,
            busy_percent=9.5,
            idle_us=1810.0,
            gap_count=12,
        )
    ]
    return Analysis(kernels=table, graphs=[_graph("forward", 0, 9.25), _graph("backward", 1, None)], steps=steps)


def test_busy_section_shows_both_definitions_per_graph_and_step() -> None:
    text = busy_section(_analysis(), "timeline.png", None, figure)
    assert "**busy (-p)**" in text and "**busy (union)**" in text
    assert (
        "* - forward \\(graph 0\\)\n  - 3\n  - 0.100\n  - 1.000\n  - 1.000 (1.20 / 1.00 / 1.05)\n  - 9.5\n  - 9.2\n  - 8.2\n  - 0.0\n  - 0.0\n  - 1.0"
        in text
    )
    assert "* - 1\n  - 2.000\n  - 0.200\n  - 0.190\n  - 9.5\n  - 1.810\n  - 12" in text
    assert "```{figure} timeline.png" in text


def test_busy_section_names_the_step_window_and_warns_of_doubtful_ones() -> None:
    analysis = _analysis()
    text = busy_section(analysis, None, None, figure)
    assert STEP_WINDOWS in text and "never overlap" in text
    assert "{warning}" not in text
    noted = analysis.steps[0].model_copy(update={"step": 2, "note": "Kernels span 0.1 ms (1.0 %): *idle*"})
    text = busy_section(analysis.model_copy(update={"steps": [*analysis.steps, noted]}), None, None, figure)
    warning = text[text.index("```{warning}") :]
    assert warning.startswith("```{warning}\nThe busy and idle figures of these windows are doubtful:\n\n")
    assert "- Step 2: Kernels span 0.1 ms \\(1.0 \\%\\)\\: \\*idle\\*\n```" in warning
    assert "Step 1:" not in warning


def test_busy_section_says_the_whole_trace_was_the_window() -> None:
    whole = StepAnalysis(
        step=-1,
        window="whole trace",
        wall_us=31000.0,
        kernel_time_us=990.0,
        busy_union_us=990.0,
        busy_percent=3.2,
        idle_us=30010.0,
        gap_count=1,
        note="The whole-trace window (no ProfilerStep#N markers) lasts 31.000 ms",
    )
    text = busy_section(_analysis().model_copy(update={"steps": [whole]}), None, None, figure)
    assert WHOLE_TRACE_WINDOW in text and STEP_WINDOWS not in text
    assert "* - whole trace\n  - 31.000" in text
    assert "- Whole trace: The whole\\-trace window \\(no ProfilerStep\\#N markers\\) lasts 31.000 ms\n```" in text


def test_graph_kernels_lists_fused_aten_ops() -> None:
    manifest = Manifest(
        name="x",
        recipe=Recipe.model_validate({"name": "x", "model": {"ref": "m:f"}, "inputs": {"tensors": [{"shape": [1]}]}}),
        recipe_sha256="0",
        recipe_path="x.yaml",
        status=RunStatus.ok,
        started_at="",
        finished_at="",
        wall_time_s=1.0,
    )
    text = graph_kernels_section(_analysis(), manifest, None)
    assert "### forward \\(graph 0\\)" in text and "### backward \\(graph 1\\)" in text
    assert "`triton_poi_fused_add_mul_0`" in text
    assert "`add` `mul`" in text


def test_kernel_benchmarks_report_bandwidth_against_peak() -> None:
    bench = KernelBenchmark(graph=0, name="triton_red_fused_sum_3", module="modules/kernels/x.py", ms=0.5, num_gb=1.0)
    peak = PeakBandwidth(gbps=4000.0, source="measured")
    text = kernel_benchmarks_section([bench], peak, Capture(copy_bandwidth_gbps=4000.0), None, figure)
    assert "* - `triton_red_fused_sum_3`\n  - 0\n  - 0.5000\n  - 1.0000\n  - 2000\n  - 50" in text
    assert "a measured device-to-device copy, 4000 GB/s" in text
    assert kernel_benchmarks_section([], None, Capture(), None, figure) == ""


def test_short_kernel_names() -> None:
    assert short_kernel_name("void at::native::elementwise_kernel<128, 4>(int, F)") == "at::native::elementwise_kernel"
    assert short_kernel_name("triton_poi_fused_add_0") == "triton_poi_fused_add_0"
    assert short_kernel_name("Memcpy DtoD (Device -> Device)") == "Memcpy DtoD (Device -> Device)"
