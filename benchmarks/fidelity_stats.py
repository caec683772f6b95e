"""Timing fidelity's statistics: the tolerances, the Hodges-Lehmann shift with its exact signed-rank interval,
Student-t, pairs pooled by comparison (a two-stage bootstrap), the intraclass correlation of a comparison's
pairs, and how comparisons spread within and across machines (`timing_fidelity.py`)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from reportgen.analyze.timing import RESAMPLES, SEED, percentile_interval
from reportgen.bundle import Interval

T = TypeVar("T")
U = TypeVar("U")

__all__: list[str] = []

TOLERANCE_PCT = 3.0
"""Step times and speedup: reportgen within ±3 % of the bare loop (issue 27's "done when")."""


TOLERANCE_PP = 3.0
"""Busy % and category shares: reportgen within ±3 percentage points of a fresh `-p` (issue 27's "done when")."""


MIN_ROUNDS = 2
"""A Student-t interval needs two differences at least (the signed-rank interval at 95 %: six)."""


CONFIDENCE = 0.95
"""The pooled intervals' coverage."""


MIN_COMPARISONS = 6
"""Pairs pooled by comparison (`clustered_pool`) are judged from this many comparisons on (the signed-rank
interval of one value per comparison needs six too)."""


_T_975: tuple[float, ...] = (
    *(12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228),
    *(2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086),
    *(2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042),
)
"""t_{0.975, df} for df = 1..30 (standard tables); beyond, `t_975`'s Cornish-Fisher expansion (error < 0.001)."""


_Z_975 = 1.959964
"""The normal distribution's 97.5 % quantile."""


@dataclass
class Pooled:
    """A figure's per-comparison differences, pooled: the Hodges-Lehmann estimate with its Wilcoxon signed-rank
    interval (`estimate`, `low`, `high`; what the verdict judges), and the mean with a Student-t interval."""

    values: list[float | None]
    estimate: float | None
    low: float | None
    high: float | None
    tolerance: float
    verdict: str
    mean: float | None = None
    mean_low: float | None = None
    mean_high: float | None = None
    machines: int = 0
    """Paired figures pooled over machines that hold several comparisons (`clustered_pool`): how many, the
    bootstrap's interval and the Student-t interval over their medians (`machine_interval`); `low`..`high` spans
    both."""
    bootstrap_low: float | None = None
    bootstrap_high: float | None = None
    machine_low: float | None = None
    machine_high: float | None = None


def t_975(df: int) -> float:
    """Student's t 97.5 % quantile with `df` degrees of freedom."""
    if df <= len(_T_975):
        return _T_975[df - 1]
    z = _Z_975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def signed_rank_quantile(n: int, alpha: float = 1 - CONFIDENCE) -> int:
    """The largest k with P(T < k) <= alpha/2 for Wilcoxon's signed-rank statistic T of n differences (exact:
    the null distribution, each rank in or out with probability 1/2, built rank by rank as probabilities, whole
    arrays at a time: 720 pairs in about a second); 0 when n is too small for the coverage."""
    probability = np.zeros(n * (n + 1) // 2 + 1)
    probability[0] = 1.0
    for rank in range(1, n + 1):
        with_rank = np.zeros_like(probability)
        with_rank[rank:] = probability[:-rank]
        probability = (probability + with_rank) / 2
    return int(np.searchsorted(np.cumsum(probability), alpha / 2, side="right"))


def hodges_lehmann(values: list[float]) -> tuple[float, float | None, float | None]:
    """The median of the Walsh averages, with the exact distribution-free 95 % interval around it.

    The host's bursts make the differences heavy-tailed (a burst slows one side of a pair 1.5-2.7x); a mean and
    its t interval follow the bursts, this pooled shift does not, and its interval needs only a symmetric
    distribution of the differences (which exchangeable sides give, under the null of no difference)."""
    n = len(values)
    walsh = sorted((values[i] + values[j]) / 2 for i in range(n) for j in range(i, n))
    k = signed_rank_quantile(n)
    if k < 1:
        return statistics.median(walsh), None, None
    return statistics.median(walsh), walsh[k - 1], walsh[len(walsh) - k]


def _mean_squares(groups: Sequence[Sequence[float]]) -> tuple[float, float, list[float]]:
    """One-way ANOVA of values in groups: the mean squares between groups (k - 1 degrees of freedom) and within
    them (n - k), and the groups' means."""
    k, n = len(groups), sum(len(g) for g in groups)
    means = [statistics.fmean(g) for g in groups]
    grand = statistics.fmean(v for g in groups for v in g)
    between = sum(len(g) * (mean - grand) ** 2 for g, mean in zip(groups, means, strict=True)) / (k - 1)
    within = sum((v - mean) ** 2 for g, mean in zip(groups, means, strict=True) for v in g) / (n - k)
    return between, within, means


def intraclass_correlation(groups: list[list[float]]) -> float | None:
    """One-way ANOVA's ICC(1) of values in groups (a comparison's paired differences): the share of their variance
    that lies between groups. None with fewer than two groups of two."""
    groups = [g for g in groups if len(g) >= 2]
    if len(groups) < 2:
        return None
    between, within, _ = _mean_squares(groups)
    size = sum(len(g) for g in groups) / len(groups)
    return (between - within) / (between + (size - 1) * within) if between + (size - 1) * within > 0 else None


@dataclass(frozen=True)
class Spread:
    """How comparisons' medians spread within machines, and machines' means beyond that (one-way ANOVA)."""

    comparison_sd: float
    """Comparisons around their machine's mean, pooled within machines."""
    machine_sd: float
    """Machines' means beyond what their comparisons' spread explains (0 when they spread less)."""
    f: float | None
    """Between-machine over within-machine mean square (None when comparisons of a machine agree exactly)."""
    df: tuple[int, int]
    """F's degrees of freedom: machines - 1, comparisons - machines."""


def machine_spread(medians: Sequence[Sequence[float]]) -> Spread | None:
    """`Spread` of comparisons' medians nested by machine; None unless two machines and one with two comparisons."""
    dof = sum(len(m) - 1 for m in medians)
    if len(medians) < 2 or dof < 1:
        return None
    between, within, means = _mean_squares(medians)
    excess = statistics.variance(means) - statistics.fmean(within / len(m) for m in medians)
    return Spread(
        math.sqrt(within),
        math.sqrt(max(excess, 0.0)),
        between / within if within > 0 else None,
        (len(medians) - 1, dof),
    )


def pool(values: list[float | None], tolerance: float) -> Pooled:
    """Pooled differences, judged on the Hodges-Lehmann interval: whether it lies inside ±tolerance."""
    measured = [v for v in values if v is not None]
    if len(measured) < MIN_ROUNDS:
        mean = statistics.fmean(measured) if measured else None
        return Pooled(values, mean, None, None, tolerance, "too few", mean)
    mean, t = statistics.fmean(measured), t_interval(measured)
    estimate, low, high = hodges_lehmann(measured)
    return Pooled(values, estimate, low, high, tolerance, _verdict(low, high, tolerance), mean, t.low, t.high)


def _verdict(low: float | None, high: float | None, tolerance: float) -> str:
    if low is None or high is None:
        return "too few"
    if -tolerance <= low and high <= tolerance:
        return "inside"
    if high < -tolerance or low > tolerance:
        return "outside"
    return "undecided"


def clustered_pool(groups: list[list[float]], tolerance: float, sittings: Sequence[str] | None = None) -> Pooled:
    """Pairs grouped by comparison: the median of every pair, with the central 95 % percentile interval of a
    two-stage bootstrap (whole comparisons with replacement, then each drawn comparison's pairs; fixed seed).

    A process's own offset moves all of its pairs, and a comparison's pairs are many: so the interval must count
    comparisons, not pairs. Two identical bare loops (an A/A sitting on a 2-core CPU, 4 comparisons of 30 block
    pairs) read compiled -3.80 % [-6.96, -0.50] with every pair pooled as independent, though the pairs'
    intraclass correlation was only +0.04: 30 pairs a comparison made even that a design effect of 2.2. Fewer
    than `MIN_COMPARISONS` comparisons with pairs: "too few".

    `sittings` names each group's machine (`Run.sitting`, its boot id): one machine's comparisons share its host
    and a warm-up, and resnet50's compiled moved with the machine (-3.5..-2.9 % on one, -7.3 and -5.3 % on
    another); where any two comparisons share one, the bootstrap has three stages (`three_stage_interval`):
    machines, their comparisons, their pairs. An empty name stands alone (files from before the tags).

    A percentile bootstrap over a few machines covers less than it says: on sittings drawn like resnet50's 24
    comparisons on 5 machines (`benchmarks/interval_coverage.py`), 99.5 % with no machine offsets but 89.5 % with
    the 3.7 % spread its compiled figure shows. So over machines the judged interval spans both the bootstrap's
    and a Student-t interval over the machines' medians (`machine_interval`: 95.5-98 % in the same draws); two
    machines cannot bound a machine offset, and with one the interval speaks of that machine only."""
    kept = [pairs for pairs in groups if pairs]
    values: list[float | None] = [v for pairs in kept for v in pairs]
    if not kept:
        return Pooled(values, None, None, None, tolerance, "too few")
    estimate, mean = float(np.median(values)), statistics.fmean(v for pairs in kept for v in pairs)
    if len(kept) < MIN_COMPARISONS:
        return Pooled(values, estimate, None, None, tolerance, "too few", mean)
    nested = by_machine(groups, sittings)

    def median(drawn: list[float]) -> float:
        return float(np.median(drawn))

    if all(len(comparisons) == 1 for comparisons in nested):  # each comparison a machine of its own
        boot, machines = two_stage_interval(kept, median), None
    else:
        boot, machines = three_stage_interval(nested, median), machine_interval(nested)
    low, high = boot.low, boot.high
    if machines is not None:
        low, high = min(low, machines.low), max(high, machines.high)
    pooled = Pooled(values, estimate, low, high, tolerance, _verdict(low, high, tolerance), mean)
    if machines is not None:
        pooled.machines, pooled.machine_low, pooled.machine_high = len(nested), machines.low, machines.high
        pooled.bootstrap_low, pooled.bootstrap_high = boot.low, boot.high
    return pooled


def machine_interval(nested: Sequence[Sequence[Sequence[float]]]) -> Interval | None:
    """Student-t 95 % interval over machines, each one value (`machine_medians`) and each alike whatever its number
    of comparisons; None with fewer than two machines."""
    medians = machine_medians(nested)
    return t_interval(medians) if len(medians) >= 2 else None


def machine_medians(nested: Sequence[Sequence[Sequence[float]]]) -> list[float]:
    """Each machine's one value: the median of its comparisons' medians."""
    return [statistics.median(statistics.median(c) for c in machine) for machine in nested]


def t_interval(values: Sequence[float]) -> Interval:
    """Student-t 95 % interval of the mean of `values` (at least two)."""
    half = t_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    mean = statistics.fmean(values)
    return Interval(low=mean - half, high=mean + half, level=CONFIDENCE)


def two_stage_interval(groups: Sequence[Sequence[T]], statistic: Callable[[list[T]], float]) -> Interval:
    """The central 95 % percentile interval of `statistic` under a two-stage bootstrap: whole groups with
    replacement (a comparison, a round: what shares a process or a host state), then each drawn group's members.
    Fixed seed: the same groups always give the same interval."""
    rng = np.random.default_rng(SEED)
    replicates = np.empty(RESAMPLES, dtype=np.float64)
    for n in range(RESAMPLES):
        replicates[n] = statistic([m for g in _resample(rng, groups) for m in _resample(rng, g)])
    return percentile_interval(replicates)


def _resample(rng: np.random.Generator, items: Sequence[U]) -> list[U]:
    """`items` drawn with replacement, as many as there are."""
    return [items[i] for i in rng.integers(0, len(items), size=len(items))]


def by_sitting(items: Sequence[U], tags: Sequence[str]) -> list[list[U]]:
    """`items` (a comparison's pairs, or its median) nested by their sitting's tag, in order of first appearance; an
    empty tag is a sitting alone."""
    nested: dict[object, list[U]] = {}
    for n, (item, tag) in enumerate(zip(items, tags, strict=True)):
        nested.setdefault(tag or n, []).append(item)
    return list(nested.values())


def by_machine(groups: Sequence[Sequence[T]], sittings: Sequence[str] | None = None) -> list[list[Sequence[T]]]:
    """The groups that hold pairs, nested by their machine's tag (`by_sitting`; None or an empty tag: alone)."""
    tags = sittings or [""] * len(groups)
    kept = [(group, tag) for group, tag in zip(groups, tags, strict=True) if group]
    return by_sitting([group for group, _ in kept], [tag for _, tag in kept])


def three_stage_interval(sittings: Sequence[Sequence[Sequence[T]]], statistic: Callable[[list[T]], float]) -> Interval:
    """`two_stage_interval` with a stage above: whole sittings with replacement, then each drawn sitting's
    comparisons, then each drawn comparison's members. Fixed seed."""
    rng = np.random.default_rng(SEED)
    replicates = np.empty(RESAMPLES, dtype=np.float64)
    for n in range(RESAMPLES):
        groups = [c for s in _resample(rng, sittings) for c in _resample(rng, s)]
        replicates[n] = statistic([m for g in groups for m in _resample(rng, g)])
    return percentile_interval(replicates)


def interval_text(p: Pooled) -> str:
    """A pooled figure's 95 % interval as "[low, high]" (— when there is none)."""
    return "—" if p.low is None or p.high is None else f"[{p.low:+.2f}, {p.high:+.2f}]"
