"""What `reportgen compare` prints (`reportgen.compare.format`): the metrics grouped by kind under a heading each,
the ops and kernels behind a changed count under the counts, and every name from a bundle escaped for the target.
Comparisons are built by hand."""

from __future__ import annotations

import re

from reportgen.bundle import Comparison, CountChange, FigureKind, LaunchChange, MetricChange, Side, Verdict
from reportgen.compare import to_markdown, to_text
from reportgen.escape import markdown_code

__all__: list[str] = []

RAW_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
EVIL = "aten::x\x1b[31m|<script>alert(1)</script>\n@user #12 [l](javascript:alert(1))"


def _m(name: str, before: float, after: float, verdict: Verdict, kind: FigureKind, unit: str = "ms") -> MetricChange:
    return MetricChange(
        name=name,
        unit=unit,
        better="lower",
        before=before,
        after=after,
        gated=True,
        verdict=verdict,
        kind=kind,
        side="compiled",
    )


def _comparison(changes: int = 1) -> Comparison:
    side = Side(bundle="b", status="ok", torch="2.11", device="cuda (NVIDIA H100)")
    return Comparison(
        name="transformer",
        before=side,
        after=side,
        threshold=0.05,
        device_threshold=0.02,
        metrics=[
            _m("device time per step, compiled", 2.27, 2.28, "within noise", "device"),
            _m("kernel launches per step, compiled", 13, 16, "regressed", "count", unit=""),
            _m("compiled median", 5.22, 6.72, "not judged", "wall").model_copy(update={"gated": False}),
            _m("compile time", 30.0, 31.0, "within noise", "other", unit="s").model_copy(update={"gated": False}),
        ],
        count_changes=[
            CountChange(side="compiled", what="kernel", name=f"{EVIL}{i}", before=0, after=1) for i in range(changes)
        ],
    )


def test_the_terminal_groups_the_metrics_by_kind() -> None:
    out = to_text([_comparison()])
    headings = [line for line in out.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert headings == [
        "Device figures:",
        "Counts per step:",
        "Ops and kernels whose count changed:",
        "Wall figures (host-dependent):",
        "Compile time and memory:",
        "Kernels that changed:",
    ]
    assert out.splitlines()[2].startswith(
        "Regressed: kernel launches per step, compiled +23.1 % (13 → 16; a count: exact for a given code, beyond 5 %)."
    )
    assert re.search(r"kernel launches per step, compiled +13 +16 +\+23\.1 % \(\+3\) +regressed", out)
    assert "Wall figures (host-dependent) not judged: 1 run before, 1 run after" in out


def test_count_changes_are_a_few_names_and_escaped() -> None:
    out = to_text([_comparison(changes=12)])
    assert RAW_CONTROLS.search(out) is None and "\\x1b[31m" in out  # the escape shown as text
    assert out.count("aten::x") == 3 + 10  # the verdict names 3, the table 10 of the 12
    assert "… and 2 more." in out
    markdown = to_markdown([_comparison()])
    assert "### Ops and kernels whose count changed" in markdown
    assert markdown_code(f"{EVIL}0", table=True) in markdown  # a code span in its cell, `|` escaped
    assert markdown_code(f"{EVIL}0") in markdown  # and in the verdict
    assert "<script>" not in markdown.replace(markdown_code(f"{EVIL}0", table=True), "").replace(
        markdown_code(f"{EVIL}0"), ""
    )


def test_launch_configs_that_changed_are_listed_after_the_kernels_and_escaped() -> None:
    comparison = _comparison(changes=0).model_copy(
        update={
            "launch_changes": [
                LaunchChange(
                    kernel="triton_red_fused_0",
                    source="ca.py",
                    before="XBLOCK: 1, R0_BLOCK: 2048",
                    after=EVIL,
                    tuning=("tuned", "tuned"),
                )
            ]
        }
    )
    out = to_text([comparison])
    assert out.splitlines().index("Launch configs that changed (same kernel code, another config):") > (
        out.splitlines().index("Kernels that changed:")
    )
    assert re.search(r"triton_red_fused_0 +XBLOCK: 1, R0_BLOCK: 2048 +aten::x.+ +tuned → tuned", out)
    assert RAW_CONTROLS.search(out) is None
    markdown = to_markdown([comparison])
    assert markdown_code(EVIL, table=True) in markdown and "<script>" not in markdown.replace(
        markdown_code(EVIL, table=True), ""
    )
    assert "Launch configs" not in to_text([_comparison()])  # none changed: no section
