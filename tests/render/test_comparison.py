"""The comparison's words on the site: the verdict sentence, the page's tables by kind of figure, the index's line
and the report's `regressions` finding. Comparisons are built by hand; expected words and numbers are written by
hand from the rules (issue 27: device figures, counts, wall figures kept apart)."""

from __future__ import annotations

from typing import Literal

from reportgen.bundle import Comparison, CountChange, FigureKind, KernelChange, MetricChange, Side, Verdict
from reportgen.render.comparison import comparison_page, regression_finding, since_previous, verdict_text
from reportgen.render.markup import code_span, escape_md

__all__: list[str] = []

Where = Literal["eager", "compiled", "both"] | None


def _m(
    name: str,
    before: float,
    after: float,
    verdict: Verdict,
    kind: FigureKind,
    side: Where = "compiled",
    gated: bool = True,
    ci: bool = True,
) -> MetricChange:
    unit = {"device": "ms", "count": "", "wall": "ms", "other": "s"}[kind]
    interval = (lambda v: (0.99 * v, 1.01 * v)) if ci and kind in ("device", "wall") else (lambda v: None)
    return MetricChange(
        name=name,
        unit=unit,
        better="lower",
        before=before,
        after=after,
        before_ci=interval(before),
        after_ci=interval(after),
        gated=gated,
        verdict=verdict,
        kind=kind,
        side=side,
    )


def _side(pooled: int = 0) -> Side:
    return Side(bundle="b", status="ok", torch="2.11", started_at="2026-11-25", pooled=[f"r{i}" for i in range(pooled)])


def _comparison(*metrics: MetricChange, pooled: int = 0, **extra: object) -> Comparison:
    return Comparison.model_validate(
        {
            "name": "transformer",
            "before": _side(pooled),
            "after": _side(pooled),
            "threshold": 0.05,
            "device_threshold": 0.02,
            "metrics": list(metrics),
            **extra,
        }
    )


DEVICE_SAME = _m("device time per step, compiled", 2.273, 2.275, "within noise", "device")
LAUNCHES_SAME = _m("kernel launches per step, compiled", 13, 13, "within noise", "count")
WALL_NOT_JUDGED = _m("compiled median", 5.22, 6.72, "not judged", "wall", gated=False)
PROBE = _m("host probe (CPU speed)", 0.92, 0.93, "within noise", "wall", side=None, gated=False, ci=False)


def test_a_count_regression_names_the_count_its_kind_and_the_ops_behind_it() -> None:
    launches = _m("kernel launches per step, compiled", 13, 16, "regressed", "count")  # +23.1 %
    c = _comparison(
        DEVICE_SAME,
        launches,
        WALL_NOT_JUDGED,
        PROBE,
        count_changes=[
            CountChange(side="compiled", what="kernel", name="triton_poi_fused_add_0", before=0, after=2),
            CountChange(side="compiled", what="aten op", name="aten::mm", before=4, after=5),
            CountChange(side="eager", what="aten op", name="aten::add", before=1, after=2),  # eager: no count moved
        ],
    )
    text = verdict_text(c, "")
    assert text.startswith(
        "Regressed: kernel launches per step, compiled +23.1 % (13 → 16; a count: exact for a given code, beyond "
        "5 %). Behind the counts: `triton_poi_fused_add_0` (kernel, compiled) 0 → 2 per step, `aten::mm` (aten op, "
        "compiled) 4 → 5 per step."
    )
    assert "aten::add" not in text
    assert "Wall figures (host-dependent) not judged: 1 run before, 1 run after" in text
    finding = regression_finding(c)
    assert finding is not None and finding.title == "More work per step than the previous run"
    assert finding.evidence.splitlines()[:3] == [
        "Compared with the run of 2026-11-25 (torch 2.11): kernel launches per step, compiled +23.1 % (13 → 16; a "
        "count: exact for a given code, beyond 5 %).",
        "- `triton_poi_fused_add_0` (kernel, compiled) 0 → 2 per step",
        "- `aten::mm` (aten op, compiled) 4 → 5 per step",
    ]
    assert since_previous(c) == "kernel launches per step, compiled +23.1 %, **regressed**"  # not the device time
    evil = "[x](javascript:alert(1)) *y*"  # a metric name is read from the bundle: escaped into MyST
    renamed = [m.model_copy(update={"name": evil}) if m in c.regressions else m for m in c.metrics]
    line = since_previous(c.model_copy(update={"metrics": renamed}))
    assert line == f"{escape_md(evil)} +23.1 %, **regressed**" and "[x](" not in line


def test_a_device_regression_names_its_threshold_range_and_kernels() -> None:
    device = _m("device time per step, compiled", 2.40, 2.52, "regressed", "device")  # +5.0 %
    kernels = [
        KernelChange(graph="forward", name="small", category="triton", before_us=10, after_us=12, kind="slower"),
        KernelChange(graph="forward", name="mm_extra", category="mm", before_us=None, after_us=120, kind="added"),
    ]
    c = _comparison(device, LAUNCHES_SAME, WALL_NOT_JUDGED, kernels=kernels)
    text = verdict_text(c, "**")
    assert text.startswith(
        "**Regressed**: device time per step, compiled +5.0 % (a device figure: beyond 2 % and outside the profiled "
        "steps' range). Behind the device time: `mm_extra` (forward) added, `small` (forward) slower +20.0 %."
    )
    finding = regression_finding(c)
    assert finding is not None and finding.title == "Slower than the previous run"
    assert finding.evidence.splitlines()[1:3] == ["- `mm_extra` (forward) added", "- `small` (forward) slower +20.0 %"]


def test_a_wall_move_without_the_code_is_the_hosts_and_does_not_fail() -> None:
    """The H200 case: eager 6.18 → 7.66 ms with disjoint intervals, device time and counts unchanged."""
    eager = _m("eager median", 6.18, 7.66, "host or between-process", "wall", side="eager", gated=False)
    probe = _m("host probe (CPU speed)", 0.92, 1.10, "host or between-process", "wall", side=None, gated=False)
    c = _comparison(DEVICE_SAME, LAUNCHES_SAME, eager, probe, pooled=2)
    assert not c.regressed and regression_finding(c) is None
    assert verdict_text(c, "") == (
        "No regression: device time per step within 2 % or the profiled steps' range, no count grew beyond 5 %. "
        "eager median +23.9 % moved while no device figure or count did: the host's CPU speed or the variation "
        "between processes, not the code (not failing); the host probe moved +19.6 %."
    )
    assert since_previous(c) == "compiled device time +0.1 %, ok"


def test_changed_and_improved_figures_are_listed_without_failing() -> None:
    aten = _m("ATen ops dispatched per step, compiled", 300, 303, "changed", "count")  # +1 %: within 5 %
    device = _m("device time per step, eager", 6.10, 5.00, "improved", "device", side="eager")
    c = _comparison(
        device,
        aten,
        count_changes=[CountChange(side="compiled", what="aten op", name="aten::view", before=10, after=13)],
    )
    text = verdict_text(c, "")
    assert text == (
        "No regression: device time per step within 2 % or the profiled steps' range, no count grew beyond 5 %. "
        "Improved: device time per step, eager -18.0 %. Changed, within the threshold: ATen ops dispatched per step, "
        "compiled +1.0 % (300 → 303). Behind the counts: `aten::view` (aten op, compiled) 10 → 13 per step."
    )


def test_a_cpu_run_says_its_device_figures_were_not_judged() -> None:
    device = _m("device time per step, compiled", 10.97, 0.016, "not judged", "device", gated=False)
    aten = _m("ATen ops dispatched per step, compiled", 12, 12, "within noise", "count")
    assert verdict_text(_comparison(device, aten), "") == (
        "No regression: no count grew beyond 5 %. Device figures not judged: on a CPU run they are CPU time, which "
        "the host's speed moves."
    )


def test_the_page_has_a_table_per_kind_and_the_count_changes() -> None:
    c = _comparison(
        DEVICE_SAME,
        _m("kernel launches per step, compiled", 13, 16, "regressed", "count"),
        WALL_NOT_JUDGED,
        PROBE,
        _m("compile time", 30.0, 31.0, "within noise", "other", side=None, gated=False),
        count_changes=[CountChange(side="compiled", what="kernel", name="triton_x", before=1, after=4)],
    )
    page = comparison_page(c, "Transformer")
    headings = [line for line in page.splitlines() if line.startswith("#")]
    assert headings == [
        "# Transformer: compared with the run before",
        "## Device figures",
        "## Counts per step",
        "### Ops and kernels whose count changed",
        "## Wall figures (host-dependent)",
        "## Compile time and memory",
        "## Kernels that changed",
    ]
    assert "* - device time per step, compiled\n  - 2\\.27 ms \\[2.25–2.30\\]" in page
    assert "* - kernel launches per step, compiled\n  - 13\n  - 16\n  - \\+23.1 \\% \\(\\+3\\)\n  - regressed" in page
    assert "* - compiled\n  - kernel\n  - `triton_x`\n  - 1\n  - 4\n  - \\+300.0 \\% \\(\\+3\\)" in page
    assert "* - compiled median\n  - 5\\.22 ms \\[5.17–5.27\\]\n  - 6\\.72 ms \\[6.65–6.79\\]" in page
    assert "  - not judged\n" in page and "  - within noise \\(not gated\\)\n" in page  # the wall step; compile time


def test_hostile_names_behind_a_count_are_escaped() -> None:
    evil = "aten::x`<script>alert(1)</script>\n\n```{eval-rst}\n.. raw:: html\n```"
    c = _comparison(
        _m("ATen ops dispatched per step, compiled", 4, 8, "regressed", "count"),
        count_changes=[CountChange(side="compiled", what="aten op", name=evil, before=0, after=4)],
    )
    text = verdict_text(c)
    assert code_span(evil) in text and "<script>" not in text.replace(code_span(evil), "")
    page = comparison_page(c, "T")
    assert "\n```{eval-rst}" not in page and page.count(code_span(evil)) == 2  # the verdict and the table
    finding = regression_finding(c)
    assert finding is not None  # a code span of the finding convention, on one line, its backticks dropped
    assert finding.evidence.splitlines()[1] == (
        "- `aten::x<script>alert(1)</script> {eval-rst} .. raw:: html` (aten op, compiled) 0 → 4 per step"
    )


def test_an_old_comparison_with_a_host_change_is_shown_as_is() -> None:
    """comparison.json written before issue 27: no kinds (read as `wall`), `host changed` verdicts."""
    old = [
        MetricChange(name=n, unit="ms", better="lower", before=b, after=a, gated=False, verdict="host changed")
        for n, b, a in (("eager median", 6.0, 7.0), ("compiled median", 5.0, 6.0))
    ] + [
        MetricChange(
            name="host probe (CPU speed)",
            unit="ms",
            better="lower",
            before=1.0,
            after=1.2,
            gated=False,
            verdict="host changed",
        ),
        MetricChange(
            name="device time per step",
            unit="ms",
            better="lower",
            before=2.5,
            after=2.5,
            gated=False,
            verdict="within noise",
        ),
    ]
    c = Comparison(name="t", before=_side(), after=_side(), threshold=0.05, metrics=old)
    assert verdict_text(c, "").startswith(
        "Not judged: the host's CPU speed differed between the runs (a fixed CPU workload took +20.0 % as long), "
        "beyond 5 %;"
    )
    page = comparison_page(c, "T")
    assert "## Device figures" in page and "* - device time per step\n" in page  # read by its name
    assert "  - host changed\n" in page
    assert since_previous(c) == "compiled +20.0 %, ok"


def test_an_old_comparison_that_regressed_keeps_its_wall_verdict() -> None:
    compiled = MetricChange(
        name="compiled median", unit="ms", better="lower", before=8.54, after=9.33, before_ci=(8.42, 8.76),
        after_ci=(9.01, 9.73), gated=True, verdict="regressed",
    )  # fmt: skip
    c = Comparison(name="t", before=_side(), after=_side(), threshold=0.05, metrics=[compiled], comparable=True)
    assert verdict_text(c, "") == (
        "Regressed: compiled median +9.3 % (a wall figure, host-dependent: beyond 5 % and outside the 95 % "
        "intervals, 1 run before, 1 run after)."
    )
    assert regression_finding(c.model_copy(update={"comparable": False})) is None
