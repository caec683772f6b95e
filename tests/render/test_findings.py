"""Tests of reportgen.render.findings: the findings admonitions and the compile diagnostics section."""

from __future__ import annotations

from reportgen.bundle import CompileDiagnostics, Finding, GraphBreak, Recompile, RegionEvidence
from reportgen.render.findings import NO_FINDINGS, findings_section, regions_section

__all__: list[str] = []

REASON = "Encountered graph break when attempting to trace CALL:\n\nCall to `torch._dynamo.graph_break()`\n  Hint: x"


def _finding(severity: str = "warning", **fields: str) -> Finding:
    values = {
        "rule": "launch-bound",
        "title": "Launch-bound graph: forward (graph 0)",
        "evidence": "forward (graph 0): GPU busy 49.4 % (-p), 785 kernel launches per call.",
        "suggestion": 'Compile with `mode="reduce-overhead"`.',
        **fields,
    }
    return Finding(severity=severity, **values)  # type: ignore[arg-type]


def test_no_findings() -> None:
    assert findings_section([]) == f"## Findings\n\n{NO_FINDINGS}"
    assert NO_FINDINGS == "No findings: nothing stood out."


def test_one_admonition_per_finding_by_severity() -> None:
    text = findings_section([_finding("problem"), _finding("warning"), _finding("info")])
    assert text.startswith("## Findings\n\n```{important}\n**Launch\\-bound graph\\: forward \\(graph 0\\)**\n")
    assert [line for line in text.splitlines() if line.startswith("```{")] == [
        "```{important}",
        "```{warning}",
        "```{note}",
    ]
    assert "forward \\(graph 0\\)\\: GPU busy 49.4 \\% \\(\\-p\\), 785 kernel launches per call." in text
    assert '**Suggestion:** Compile with `mode="reduce-overhead"`.' in text


def test_evidence_lines_lists_code_and_escaping() -> None:
    finding = _finding(
        title="<b>*x*</b>",
        evidence="2 graph breaks:\n- Call to `f()` at `m.py:3`\n- [link](http://x) **bold**\nThe end.",
        suggestion="- first\n- second",
    )
    text = findings_section([finding])
    assert "**\\<b\\>\\*x\\*\\</b\\>**" in text
    assert (
        "2 graph breaks\\:\n\n- Call to `f()` at `m.py:3`\n- \\[link\\]\\(http\\://x\\) \\*\\*bold\\*\\*\n\nThe end."
        in text
    )
    assert "**Suggestion:**\n\n- first\n- second\n```" in text


def test_an_absolute_source_location_in_evidence_is_shortened_with_the_whole_path_on_hover() -> None:
    """Issue 29 item 3, in findings as in the tables: `recipes/models.py:54`, the clone's path in the title."""
    evidence = '- `features.1` at `/tmp/fresh/recipes/models.py:54`: 0.13 ms\n- at `/a/b"<x>/m.py:3`'
    text = findings_section([_finding(evidence=evidence)])
    assert '- `features.1` at <span title="/tmp/fresh/recipes/models.py:54">`recipes/models.py:54`</span>' in text
    assert '<span title="/a/b&quot;&lt;x&gt;/m.py:3">`b"<x>/m.py:3`</span>' in text  # (the title stays one attribute)
    assert "`m.py:3`" in findings_section([_finding(evidence="at `m.py:3`")])  # a short one is left as it is


def test_unbalanced_backticks_are_escaped_and_fences_outgrow_code() -> None:
    text = findings_section([_finding(evidence="a ` b", suggestion="run ```` a```b ```` now")])
    assert "a \\` b" in text
    assert text.splitlines()[2].startswith("`````{warning}")
    assert text.rstrip().endswith("`````")


def test_compile_diagnostics_section() -> None:
    diagnostics = CompileDiagnostics(
        graph_breaks=[GraphBreak(reason=REASON, location="models.py:29", count=2)],
        recompiles=[Recompile(frame="forward", reason="size mismatch at index 0\nmore")],
        unique_graphs=4,
        graph_ops=[4, 5],
        compile_phases_s={"dynamo": 1.0, "autotune": 3.0},
        cache={"fxgraph_cache_hit": 4},
        cudagraphs="skipped",
        cudagraph_skip_reasons=["mutated inputs (1 instances)"],
    )
    regions = RegionEvidence(compiled_regions=4, nested_regions=9, compiled_function_blocks_per_step=4.0)
    text = regions_section(regions, diagnostics)
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == [
        "## Compile diagnostics",
        "### Graph breaks",
        "### Recompiles",
        "### Graphs and compiled regions",
        "### Compile time",
        "### CUDA graphs",
    ]
    assert "2 graph breaks." in text
    assert "* - Call to `torch._dynamo.graph_break()`\n  - `models.py:29`\n  - 2" in text
    assert "1 recompile." in text and "* - `forward`\n  - size mismatch at index 0\n" in text
    assert "- Unique graphs \\(Dynamo\\)\\: 4; FX call ops per graph\\: 4, 5" in text
    assert "distinct `Torch-Compiled Region` names\\)\\: 4" in text
    assert "- Region events nested inside another region\\: 9" in text
    assert "- `CompiledFunction` blocks per profiled step\\: 4.0" in text
    assert "* - `autotune`\n  - 3.00\n  - 75.0" in text and "* - total\n  - 4.00\n  - 100.0" in text
    assert "* - `fxgraph_cache_hit`\n  - 4" in text
    assert "CUDA graphs: requested but skipped" in text
    assert "- mutated inputs \\(1 instances\\)" in text


def test_compile_diagnostics_when_quiet_or_missing() -> None:
    assert regions_section(None, None) == ""
    text = regions_section(None, CompileDiagnostics())
    assert "No graph breaks." in text and "No recompiles." in text
    assert "### Graphs and compiled regions" not in text and "### Compile time" not in text
    assert text.endswith("CUDA graphs: off (not requested).")
    only_trace = regions_section(RegionEvidence(compiled_regions=1, nested_regions=0), None)
    assert only_trace.splitlines()[0] == "## Compile diagnostics"
    assert "- `CompiledFunction` blocks per profiled step\\: —" in only_trace
    assert "### CUDA graphs" not in only_trace
