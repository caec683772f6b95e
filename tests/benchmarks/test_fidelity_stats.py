"""Tests of benchmarks/fidelity_stats.py: the signed-rank critical values behind every pooled interval, and pairs
pooled by comparison and by sitting."""

from __future__ import annotations

import itertools
import math
import statistics
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from fidelity_stats import MIN_COMPARISONS, by_sitting, clustered_pool, hodges_lehmann, signed_rank_quantile


def _by_enumeration(n: int, alpha: float = 0.05) -> int:
    """k from the definition: every one of the 2^n sign patterns, the largest k with P(T < k) <= alpha/2."""
    totals = [
        sum(r for r, sign in zip(range(1, n + 1), signs, strict=True) if sign)
        for signs in itertools.product((0, 1), repeat=n)
    ]
    k = 0
    while sum(t < k + 1 for t in totals) / len(totals) <= alpha / 2:
        k += 1
    return k


@pytest.mark.parametrize("n", range(1, 15))
def test_critical_values_equal_the_definition(n: int) -> None:
    assert signed_rank_quantile(n) == _by_enumeration(n)


def test_critical_values_of_the_standard_table_and_the_normal_limit() -> None:
    assert [signed_rank_quantile(n) for n in (5, 6, 8, 10, 12, 20)] == [0, 1, 4, 9, 14, 53]
    for n in (162, 720):  # far out, T is normal: mean n(n+1)/4, variance n(n+1)(2n+1)/24
        mean, sd = n * (n + 1) / 4, math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
        assert signed_rank_quantile(n) == pytest.approx(mean - 1.959964 * sd, abs=0.002 * sd)


def test_hodges_lehmann_of_a_constant_shift_is_the_shift_with_a_point_interval() -> None:
    assert hodges_lehmann([2.5] * 8) == (2.5, 2.5, 2.5)
    estimate, low, high = hodges_lehmann([float(v) for v in range(-5, 6)])
    assert estimate == 0.0 and low is not None and high is not None and low < 0 < high


def test_pairs_pooled_by_comparison_give_the_median_and_an_interval_over_comparisons() -> None:
    offsets = [-2.0, -1.0, 0.0, 0.5, 1.0, 2.0]
    groups = [[c] * 20 for c in offsets]  # each comparison's pairs all read its own offset
    pooled = clustered_pool(groups, 3.0)
    assert pooled.estimate == pytest.approx(statistics.median(offsets))
    assert pooled.low is not None and pooled.high is not None
    assert -2.0 <= pooled.low < 0.0 < pooled.high <= 2.0  # the comparisons' spread, not 120 pairs' precision
    assert pooled.verdict == "inside" and len(pooled.values) == 120
    assert clustered_pool(groups, 3.0) == pooled  # a fixed seed: the same pairs, the same interval
    assert clustered_pool(groups, 1.0).verdict == "undecided"
    assert clustered_pool([[5.0] * 20] * MIN_COMPARISONS, 3.0).verdict == "outside"
    assert clustered_pool([*groups[: MIN_COMPARISONS - 1], []], 3.0).verdict == "too few"


def test_comparisons_of_one_sitting_are_resampled_together() -> None:
    """Four sittings of six tight comparisons, one sitting 3.5 % off: counted as 24 independent comparisons the
    median reads inside ±3 %; with their sittings named, a draw of sittings can land on the odd one: undecided."""
    jitter = [0.01 * k for k in range(10)]
    offsets = [3.5] * 6 + [0.0] * 6 + [0.5] * 6 + [0.2] * 6
    groups = [[offset + j for j in jitter] for offset in offsets]
    tags = [tag for tag in "abcd" for _ in range(6)]
    alone = clustered_pool(groups, 3.0)
    assert alone.verdict == "inside" and alone.high is not None and alone.high < 1.0
    together = clustered_pool(groups, 3.0, tags)
    assert together.verdict == "undecided" and together.high is not None and together.high > 3.5
    assert together.estimate == alone.estimate  # the same pairs: only the interval changes
    untagged = clustered_pool(groups, 3.0, [""] * len(groups))  # files from before the tags
    assert (untagged.low, untagged.high) == (alone.low, alone.high)
    assert by_sitting([[1], [2], [3], [4]], ["a", "", "a", ""]) == [[[1], [3]], [[2]], [[4]]]
