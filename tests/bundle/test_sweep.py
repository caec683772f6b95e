"""A sweep's points side by side (reportgen.bundle.sweep): series along an axis, order, and the findings."""

from __future__ import annotations

from reportgen.bundle import Interval, PointFigures, RunStatus, ordered, series, sweep_axes, sweep_findings

__all__: list[str] = []


def _point(batch: int, mode: str, speedup: float, low: float, status: RunStatus = RunStatus.ok) -> PointFigures:
    return PointFigures(
        name=f"r--bs{batch}-{mode}",
        point={"batch_size": str(batch), "mode": mode},
        status=status,
        batch=batch,
        eager_ms=10.0 * speedup,
        compiled_ms=10.0,
        speedup=speedup,
        speedup_ci=Interval(low=low, high=speedup + 0.1),
    )


POINTS = [
    _point(64, "default", 1.5, 1.3),
    _point(8, "default", 0.9, 0.8),
    _point(128, "default", 1.8, 1.6),
    _point(8, "reduce-overhead", 1.4, 1.2),
    _point(64, "reduce-overhead", 1.6, 1.4),
    _point(128, "reduce-overhead", 1.7, 1.5, RunStatus.oom),
]


def test_series_are_one_line_per_other_value_in_numeric_order() -> None:
    assert sweep_axes(POINTS) == ["batch_size", "mode"]
    lines = series(POINTS, "batch_size")
    assert [line.label for line in lines] == ["mode default", "mode reduce-overhead"]
    assert lines[0].values == ["8", "64", "128"]  # numbers numerically, not as text
    assert [p.name for p in ordered(POINTS)][:3] == ["r--bs8-default", "r--bs8-reduce-overhead", "r--bs64-default"]


def test_throughput_is_the_batch_over_the_median_step() -> None:
    eager, compiled = POINTS[0].throughput
    assert compiled == 64 / 0.010 and eager == 64 / 0.015


def test_the_findings_say_where_compiled_stops_paying_off_which_mode_wins_and_what_failed() -> None:
    found = {f.rule: f for f in sweep_findings(POINTS)}
    payoff = found["sweep-payoff"]
    assert payoff.title == "Compiled stops paying off below batch 64"
    assert "mode default: pays off from batch 64, not at 8" in payoff.evidence
    assert "reduce-overhead" not in payoff.evidence  # it pays off at every batch
    best = found["sweep-best-mode"].evidence.splitlines()
    assert best == [
        "- batch 8: reduce-overhead (1.40x)",
        "- batch 64: reduce-overhead (1.60x)",
        "- batch 128: default (1.80x)",
    ]
    assert found["sweep-failed-points"].title == "1 of 6 points did not finish"


def test_no_payoff_finding_when_compiled_always_wins_or_batch_is_not_swept() -> None:
    winning = [p for p in POINTS if p.point["mode"] == "reduce-overhead"]
    assert "sweep-payoff" not in {f.rule for f in sweep_findings(winning)}
    one_batch = [p for p in POINTS if p.batch == 64]
    assert {f.rule for f in sweep_findings(one_batch)} == set()


def test_a_bundle_from_elsewhere_names_only_sweep_axes_in_its_point() -> None:
    import pytest
    from pydantic import ValidationError

    from tests.analyze.test_findings import _manifest

    data = _manifest().model_dump(mode="json")
    good = {"batch_size": "8", "env.TORCHINDUCTOR_MAX_AUTOTUNE": "1"}
    assert type(_manifest()).model_validate({**data, "point": good}).point == good
    for hostile in ({"```{raw} html": "x"}, {"mode": "a\n:alt: b"}, {"env.x y": "1"}, {"batch_size": "8" * 201}):
        with pytest.raises(ValidationError, match="is not a sweep axis"):
            type(_manifest()).model_validate({**data, "point": hostile})
