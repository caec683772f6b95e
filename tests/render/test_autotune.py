"""The Autotuning section: one row per tuned operation, user text escaped."""

from __future__ import annotations

from reportgen.bundle import AutotuneChoice, AutotuneOp
from reportgen.render.autotune import autotune_section, autotune_summary


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
