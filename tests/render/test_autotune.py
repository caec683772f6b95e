"""The Autotuning section: one row per tuned operation, user text escaped."""

from __future__ import annotations

from reportgen.bundle import AutotuneChoice, AutotuneOp, KernelLaunch
from reportgen.render.autotune import autotune_section, autotune_summary, launch_section


def _op(winner: str, winner_ms: float, extern_ms: float | None) -> AutotuneOp:
    choices = [AutotuneChoice(name=winner, ms=winner_ms)]
    if extern_ms is not None:
        choices.append(AutotuneChoice(name="mm", ms=extern_ms))
    return AutotuneOp(op="mm", sizes="64x1536, 1536x1000", dtypes="torch.float16", choices=choices,
                      num_choices=20, benchmark_s=0.5, precompile_s=1.5)  # fmt: skip


def test_section_has_one_row_per_op_with_winner_and_gain() -> None:
    text = autotune_section([_op("triton_mm_4", 0.010, 0.015), _op("mm", 0.020, None)])
    assert text.startswith("## Autotuning")
    assert "2 operations autotuned in 4.0 s" in text and "a generated template won 1, the library call 1" in text
    assert "`triton_mm_4`" in text and "1.50×" in text
    assert "  - template\n" in text and "  - library\n" in text
    assert "64x1536, 1536x1000" in text


def test_no_ops_no_section() -> None:
    assert autotune_section([]) == "" and autotune_summary([]) == ""


def test_long_lists_are_cut_and_say_so() -> None:
    text = autotune_section([_op("mm", 0.02, None)] * 5, max_rows=2)
    assert "The first 2 of 5 are listed." in text
    assert autotune_summary([_op("mm", 0.02, None)]).startswith("1 operation autotuned in 2.0 s")


def _launch(kernel: str, tuning: str, config: str = "XBLOCK: 1024, num_warps: 4", ms: float = 0.0) -> KernelLaunch:
    return KernelLaunch(
        kernel=kernel, source=f"c{kernel[-1]}.py", config=config, tuning=tuning, configs=4, tuning_ms=ms
    )  # type: ignore[arg-type]


def test_launch_configs_list_the_kernels_this_process_tuned() -> None:
    launches = [
        _launch("triton_red_fused_0", "tuned", "XBLOCK: 1, R0_BLOCK: 2048, num_warps: 16", ms=310.25),
        _launch("triton_poi_fused_1", "cached"),
        _launch("triton_poi_fused_2", "single"),
        _launch("triton_per_fused_3", "tuned", "XBLOCK: 8, num_warps: 2", ms=120.0),
    ]
    text = launch_section(launches)
    assert text.startswith("## Launch configs")
    assert "4 Triton kernels after the warm-ups (tuned 2, cached 1, single 1)" in text
    assert "Tuned in this run (430.2 ms of benchmarks):" in text
    rows = text.split("```{list-table}", 1)[1]
    assert "`triton_red_fused_0`" in rows and "`XBLOCK: 1, R0_BLOCK: 2048, num_warps: 16`" in rows
    assert "`triton_per_fused_3`" in rows and "310.2" in rows and "120.0" in rows
    assert "triton_poi_fused_1" not in rows  # a cached config is the same in every run: not listed


def test_launch_configs_without_tuned_kernels_say_so_in_one_paragraph() -> None:
    text = launch_section([_launch("triton_poi_fused_1", "cached")])
    assert "1 Triton kernel after the warm-ups (cached 1)" in text and "list-table" not in text
    assert launch_section([]) == ""


def test_a_launch_config_from_another_machine_is_text() -> None:
    """A bundle is untrusted: its kernel names and configs reach the page as text, not as MyST."""
    from docutils.core import publish_string
    from myst_parser.parsers.docutils_ import Parser

    evil = _launch("triton_`{raw}`_0", "tuned", config="{raw}`html` <script>alert(1)</script> **bold**")
    html = publish_string(
        launch_section([evil]), parser=Parser(), writer_name="html5", settings_overrides={"output_encoding": "unicode"}
    )
    assert "<script>" not in html and "<strong>" not in html
    assert "&lt;script&gt;" in html
