"""Tests of reportgen.analyze.timing: bootstrap intervals and noise of recorded step times."""

from __future__ import annotations

import json
import statistics

import pytest

from reportgen.analyze.timing import LEVEL, RESAMPLES, timing_summary
from reportgen.bundle import Interval, Manifest, Metrics, StepTimes, TimingSummary, load_bundle
from tests.data import BUNDLES_DIR, H100_HOST_PROBE

__all__: list[str] = []


def _recorded() -> Manifest:
    """fused_add_mul on an H200: 20 eager and 20 compiled blocks, one outlier (the first block) on each side."""
    return load_bundle(BUNDLES_DIR / "fused_add_mul").manifest


def _times(samples: list[float]) -> StepTimes:
    ordered = sorted(samples)
    q1, median, q3 = statistics.quantiles(ordered, n=4)
    return StepTimes(samples_ms=samples, median_ms=median, q1_ms=q1, q3_ms=q3, min_ms=ordered[0], max_ms=ordered[-1])


def _summary(metrics: Metrics) -> TimingSummary:
    summary = timing_summary(metrics)
    assert summary is not None
    return summary


def _width(interval: Interval | None) -> float:
    assert interval is not None
    return interval.high - interval.low


def test_recorded_intervals_contain_the_medians_and_the_speedup() -> None:
    metrics = _recorded().metrics
    assert metrics.eager is not None and metrics.compiled is not None and metrics.speedup is not None
    summary = _summary(metrics)
    assert summary.eager_median_ci_ms is not None and summary.compiled_median_ci_ms is not None
    assert summary.speedup_ci is not None
    assert summary.eager_median_ci_ms.contains(metrics.eager.median_ms)
    assert summary.compiled_median_ci_ms.contains(metrics.compiled.median_ms)
    assert summary.speedup_ci.contains(metrics.speedup)
    # The outlier (0.193 ms) pulls the mean, not the median: an interval of the mean would miss the median.
    assert summary.eager_median_ci_ms.high < statistics.fmean(metrics.eager.samples_ms)
    assert summary.speedup_ci.high < 1.0  # compiled 0.94x: slower beyond the noise
    assert (summary.resamples, summary.paired, summary.speedup_ci.level) == (RESAMPLES, True, LEVEL)


def test_recorded_cv_is_stdev_over_mean_with_outliers_kept() -> None:
    metrics = _recorded().metrics
    assert metrics.eager is not None and metrics.compiled is not None
    summary = _summary(metrics)
    eager, compiled = metrics.eager.samples_ms, metrics.compiled.samples_ms
    assert summary.eager_cv == pytest.approx(statistics.stdev(eager) / statistics.fmean(eager))
    assert summary.compiled_cv == pytest.approx(statistics.stdev(compiled) / statistics.fmean(compiled))
    without_outlier = eager[1:]
    assert summary.eager_cv > statistics.stdev(without_outlier) / statistics.fmean(without_outlier)


def test_intervals_widen_with_noise() -> None:
    metrics = _recorded().metrics
    assert metrics.eager is not None and metrics.compiled is not None
    median = metrics.eager.median_ms
    louder = [median + 4 * (x - median) for x in metrics.eager.samples_ms]  # the same shape, 4x the spread
    quiet, noisy = _summary(metrics), _summary(metrics.model_copy(update={"eager": _times(louder)}))
    assert _width(noisy.eager_median_ci_ms) > 3 * _width(quiet.eager_median_ci_ms)
    assert _width(noisy.speedup_ci) > _width(quiet.speedup_ci)
    assert quiet.eager_cv is not None and noisy.eager_cv is not None and noisy.eager_cv > 3 * quiet.eager_cv
    assert noisy.compiled_median_ci_ms == quiet.compiled_median_ci_ms


def test_speedup_resamples_pairs_so_shared_drift_cancels() -> None:
    eager = _recorded().metrics.eager
    assert eager is not None
    # Compiled 1.25x faster in every pair: the machine's drift from block to block slows both sides alike.
    compiled = [x * 0.8 for x in eager.samples_ms]
    paired = _summary(Metrics(eager=eager, compiled=_times(compiled)))
    assert paired.paired and paired.speedup_ci is not None
    assert paired.speedup_ci.low == pytest.approx(1.25) and paired.speedup_ci.high == pytest.approx(1.25)
    # With one compiled block fewer, the pairs are lost and each side is resampled on its own: wider.
    unpaired = _summary(Metrics(eager=eager, compiled=_times(compiled[:-1])))
    assert not unpaired.paired and unpaired.speedup_ci is not None
    assert _width(unpaired.speedup_ci) > 0.02
    assert unpaired.speedup_ci.contains(1.25)


def test_shuffled_pairs_give_an_interval_around_one() -> None:
    eager = _recorded().metrics.eager
    assert eager is not None
    rotated = eager.samples_ms[7:] + eager.samples_ms[:7]  # the same blocks, taken at other times
    summary = _summary(Metrics(eager=eager, compiled=_times(rotated)))
    assert summary.speedup_ci is not None and summary.speedup_ci.contains(1.0)
    assert summary.speedup_ci.low < 0.99 and summary.speedup_ci.high > 1.01


def test_none_without_either_side_or_samples() -> None:
    times = _times([1.0, 2.0, 3.0])
    empty = times.model_copy(update={"samples_ms": []})
    assert timing_summary(Metrics()) is None
    assert timing_summary(Metrics(eager=times)) is None
    assert timing_summary(Metrics(compiled=times)) is None
    assert timing_summary(Metrics(eager=times, compiled=empty)) is None
    assert timing_summary(Metrics(eager=times, compiled=times)) is not None


def test_one_sample_gives_a_point_interval_and_no_cv() -> None:
    one = StepTimes(samples_ms=[2.0], median_ms=2.0, q1_ms=2.0, q3_ms=2.0, min_ms=2.0, max_ms=2.0)
    summary = _summary(Metrics(eager=one, compiled=one.model_copy(update={"samples_ms": [1.0], "median_ms": 1.0})))
    assert summary.eager_median_ci_ms == Interval(low=2.0, high=2.0)
    assert summary.speedup_ci == Interval(low=2.0, high=2.0)
    assert (summary.eager_cv, summary.compiled_cv) == (None, None)


def test_deterministic() -> None:
    metrics = _recorded().metrics
    first, second = timing_summary(metrics), timing_summary(metrics)
    assert first == second
    assert TimingSummary.model_validate_json(_summary(metrics).model_dump_json()) == first


def _probed(recipe: str, loop: int) -> Metrics:
    """A bare loop recorded on a noisy H100 host, with the host probe before each pair of blocks."""
    run = json.loads(H100_HOST_PROBE.read_text())["runs"][recipe][loop]
    return Metrics(
        eager=_times(run["eager_samples_ms"]),
        compiled=_times(run["compiled_samples_ms"]),
        host_probe_ms=run["host_probe_ms"],
    )


@pytest.mark.parametrize(("recipe", "loop"), [("mixnet_l", 0), ("mixnet_l", 1), ("resnet50", 0), ("resnet50", 1)])
def test_recorded_host_probe_gives_the_hosts_noise_and_its_pull_on_the_steps(recipe: str, loop: int) -> None:
    metrics = _probed(recipe, loop)
    summary = _summary(metrics)
    probe = metrics.host_probe_ms
    assert summary.host_cv == pytest.approx(statistics.stdev(probe) / statistics.fmean(probe))
    assert 0.2 < summary.host_cv < 0.3  # the H100 host's CPU wandered in every loop
    assert summary.host_correlation is not None and 0.1 < summary.host_correlation < 0.7  # the steps moved with it


def test_host_correlation_is_the_rank_correlation_with_each_pair() -> None:
    steps = [10.0, 11.0, 12.0, 13.0, 14.0]
    same_order = Metrics(eager=_times(steps), compiled=_times(steps), host_probe_ms=[1.0, 1.1, 1.5, 2.0, 9.0])
    reversed_order = same_order.model_copy(update={"host_probe_ms": [9.0, 2.0, 1.5, 1.1, 1.0]})
    assert _summary(same_order).host_correlation == pytest.approx(1.0)
    assert _summary(reversed_order).host_correlation == pytest.approx(-1.0)


def test_no_host_probe_no_host_noise() -> None:
    """Bundles made before the probe existed, and probes that do not pair with the blocks, give no host numbers."""
    metrics = _recorded().metrics
    assert metrics.host_probe_ms == []
    summary = _summary(metrics)
    assert (summary.host_cv, summary.host_correlation) == (None, None)
    unpaired = _summary(metrics.model_copy(update={"host_probe_ms": [1.0, 1.2, 1.1]}))
    assert unpaired.host_cv is not None and unpaired.host_correlation is None
