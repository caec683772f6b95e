"""The comparison's words on the site: the verdict sentence and the report's `regressions` finding."""

from __future__ import annotations

from reportgen.bundle import Comparison, MetricChange, Side
from reportgen.render.comparison import regression_finding, verdict_text

__all__: list[str] = []


def _metric(name: str, before: float, after: float, verdict: str, gated: bool = True) -> MetricChange:
    ci = (lambda v: (0.98 * v, 1.02 * v)) if gated else (lambda v: None)
    return MetricChange(
        name=name,
        unit="ms",
        better="lower",
        before=before,
        after=after,
        before_ci=ci(before),
        after_ci=ci(after),
        gated=gated,
        verdict=verdict,  # type: ignore[arg-type]
    )


def _comparison(device_after: float, pooled: tuple[int, int] = (0, 0), comparable: bool = True) -> Comparison:
    def side(n: int) -> Side:
        return Side(bundle="b", status="ok", torch="2.11", started_at="2026-11-25", pooled=[f"r{i}" for i in range(n)])

    return Comparison(
        name="transformer",
        before=side(pooled[0]),
        after=side(pooled[1]),
        threshold=0.05,
        comparable=comparable,
        metrics=[
            _metric("compiled median", 8.54, 9.33, "regressed"),
            _metric("device time per step", 2.52, device_after, "within noise", gated=False),
        ],
    )


def test_a_regression_without_device_time_asks_for_another_run() -> None:
    """The H100 case: two single runs, compiled +9.3 %, device time -0.9 %."""
    c = _comparison(2.4973)
    text = verdict_text(c, "")
    assert text.startswith(
        "Regressed: compiled median +9.3 % (beyond 5 % and outside the 95 % intervals; 1 run before, 1 run after). "
        "Device time per step moved -0.9 %: the change is on the host side (Python, launches) or variation between "
        "processes, which one run's intervals do not cover; run the recipe again"
    )
    finding = regression_finding(c)
    assert finding is not None and finding.rule == "regressions" and finding.severity == "problem"
    assert finding.evidence.startswith(
        "Compared with the run of 2026-11-25 (torch 2.11): compiled median +9.3 %, beyond 5 % and outside the 95 % "
        "intervals (1 run before, 1 run after). Device time per step moved -0.9 %"
    )


def test_pooled_sides_and_a_device_side_change() -> None:
    pooled = verdict_text(_comparison(2.4973, pooled=(2, 1)), "")
    assert "3 runs before, 2 runs after)" in pooled and "the pooled runs did not show." in pooled
    device_moved = _comparison(2.9)  # +15 %: the GPU did more work, so no host-side caution
    assert verdict_text(device_moved, "").endswith("; 1 run before, 1 run after).")
    finding = regression_finding(device_moved)
    assert finding is not None and "Device time" not in finding.evidence


def test_no_finding_against_a_run_that_is_not_comparable() -> None:
    assert regression_finding(_comparison(2.5, comparable=False)) is None
