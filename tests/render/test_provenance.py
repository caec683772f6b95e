"""The report's section on device time per module and source line."""

from __future__ import annotations

from reportgen.bundle import LineTime, ModuleTime, ProvenanceSummary, read_analysis
from reportgen.render.provenance import provenance_section
from tests.data import BUNDLES_DIR

__all__: list[str] = []

ANALYSIS = read_analysis(BUNDLES_DIR / "fused_add_mul")


def _section(summary: ProvenanceSummary | None) -> str:
    assert ANALYSIS is not None
    return provenance_section(ANALYSIS.model_copy(update={"provenance": summary}))


def test_a_run_without_provenance_says_so() -> None:
    assert "was not captured for this run" in _section(None)


def test_nothing_attributed_gives_sentences_not_empty_tables() -> None:
    """An empty list-table fails the Sphinx build (-W): a max-autotune CPU run attributed nothing."""
    text = _section(ProvenanceSummary(method="debug-handles", compiled_us=10.0, module_us=0.0, line_us=0.0))
    assert "list-table" not in text
    assert "No kernel time was attributed to a module." in text
    assert "No kernel time was attributed to a source line." in text


def test_attributed_time_gives_module_and_line_tables() -> None:
    summary = ProvenanceSummary(
        method="debug-handles",
        compiled_us=10.0,
        module_us=10.0,
        line_us=10.0,
        modules=[ModuleTime(path="fc", module_class="Linear", forward_us=4000.0, backward_us=6000.0, self_us=10.0)],
        lines=[
            LineTime(file="/m/model.py", line=7, function="forward", module_path="fc", forward_us=4.0, backward_us=6.0)
        ],
    )
    text = _section(summary)
    assert "100.0 % of the compiled graphs' kernel time is attributed to an `nn.Module`" in text
    assert text.count("```{list-table}") == 2 and "  - 10\\.000" not in text and "  - 10.000" in text
