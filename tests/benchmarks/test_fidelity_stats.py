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

from fidelity_stats import (
    MIN_COMPARISONS,
    by_sitting,
    clustered_pool,
    hodges_lehmann,
    machine_spread,
    signed_rank_quantile,
)


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


def test_over_a_few_machines_the_judged_interval_spans_a_student_t_over_their_medians() -> None:
    """A percentile bootstrap over 5 machines covered 89.5 % where machines moved by 3.7 % (interval_coverage.py):
    the judged interval also spans Student-t over the machines' medians, each machine one value."""
    jitter = [0.01 * k for k in range(10)]
    by_machine = {"c": [0.4] * 6, "d": [4.3], "e": [-3.5] * 3, "f": [-6.3] * 2, "g": [-0.4] * 12}
    groups = [[offset + j for j in jitter] for offsets in by_machine.values() for offset in offsets]
    tags = [tag for tag, offsets in by_machine.items() for _ in offsets]
    pooled = clustered_pool(groups, 3.0, tags)
    medians = [offsets[0] + 0.045 for offsets in by_machine.values()]  # each comparison's median: offset + 0.045
    mean = sum(medians) / 5
    sd = math.sqrt(sum((m - mean) ** 2 for m in medians) / 4)
    half = 2.776 * sd / math.sqrt(5)  # t(0.975, 4 df), from the table
    assert (pooled.machines, pooled.machine_low, pooled.machine_high) == (
        5,
        pytest.approx(mean - half),
        pytest.approx(mean + half),
    )
    assert pooled.bootstrap_low is not None and pooled.bootstrap_high is not None
    assert pooled.low == min(pooled.bootstrap_low, mean - half) and pooled.high == max(
        pooled.bootstrap_high, mean + half
    )
    assert pooled.verdict == "undecided"
    two = clustered_pool([[1.5 + j for j in jitter]] * 3 + [list(jitter)] * 3, 3.0, list("aaabbb"))
    assert two.bootstrap_low is not None and two.bootstrap_high is not None and two.bootstrap_high < 1.6
    assert (two.machine_low, two.machine_high) == (
        pytest.approx(0.795 - 12.706 * 0.75),
        pytest.approx(0.795 + 12.706 * 0.75),
    )
    assert two.verdict == "undecided"  # t(1) = 12.7: two machines bound no machine offset
    one = clustered_pool([[0.5 + j for j in jitter]] * 6, 3.0, list("aaaaaa"))
    assert one.machines == 0 and one.machine_low is None and one.verdict == "inside"  # that machine only


def test_machine_spread_is_the_one_way_anova_of_comparisons_by_machine() -> None:
    """Worked by hand: machines (1, 3) and (5, 7, 9). Within: (2 + 8) / 3 degrees of freedom = 10/3. Means 2 and 7,
    variance 12.5, less the comparisons' share (10/3 / 2 + 10/3 / 3) / 2 = 25/18: machine variance 100/9.
    Between mean square: 2 x 3^2 + 3 x 2^2 = 30 on 1 degree of freedom; F = 30 / (10/3) = 9."""
    spread = machine_spread([[1.0, 3.0], [5.0, 7.0, 9.0]])
    assert spread is not None
    assert spread.comparison_sd == pytest.approx(math.sqrt(10 / 3))
    assert spread.machine_sd == pytest.approx(10 / 3)
    assert spread.f == pytest.approx(9.0) and spread.df == (1, 3)
    agreeing = machine_spread([[1.0, 1.0], [2.0]])  # a machine's comparisons agree exactly: no F
    assert agreeing is not None and agreeing.f is None and agreeing.comparison_sd == 0
    close = machine_spread([[0.0, 4.0], [1.0, 3.0]])  # means 2 and 2: machines spread less than comparisons do
    assert close is not None and close.machine_sd == 0 and close.f == 0
    assert machine_spread([[1.0, 2.0, 3.0]]) is None  # one machine
    assert machine_spread([[1.0], [2.0], [3.0]]) is None  # no machine with two comparisons
