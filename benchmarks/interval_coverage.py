"""How often timing fidelity's judged interval covers the truth, on data shaped like a real sitting's.

    python benchmarks/interval_coverage.py SITTING.json... [--figure compiled_ms] [--replicates 200]
        [--machine-sd 0 1.5 3.75] [--project 4 8 12]

`fidelity_stats.clustered_pool` judges a paired figure by the median of all its pairs with a percentile interval
from a bootstrap over machines, their comparisons and their pairs. A percentile bootstrap over few clusters is
known to cover less than it claims; a sitting pools 2-5 machines. This script measures it: it takes a sitting's
layout (machines, comparisons per machine, pairs per comparison) and its pairs' spread around their comparison's
median (resampled as they came: heavy tails kept), then draws sittings of that layout whose true offset is 0:
machine offsets N(0, machine SD), comparison offsets N(0, the sitting's between-comparison SD within machines),
pairs from the sitting's residuals. For each it computes `clustered_pool`'s intervals (the bootstrap's, the
Student-t over machines' medians, and the judged one that spans both) and counts how often each holds 0. The rate
at which an interval misses on one side is the rate at which a figure truly at a tolerance edge would read
"inside".

`--project K...` asks the planning question instead: with K more machines like these (each machine's median drawn
from the normal of the machines' medians' mean and SD), how often the Student-t over the machines' medians, the
judged interval's wider part once machines differ, would come inside the tolerance.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from fidelity_report import paired_step_differences
from fidelity_stats import TOLERANCE_PCT, by_machine, clustered_pool, machine_medians, machine_spread, t_interval
from timing_fidelity import reread

__all__: list[str] = []


@dataclass
class Shape:
    """What a sitting's figure looks like: pairs per comparison, grouped by machine; residuals; spreads."""

    layout: list[list[int]]
    """Per machine, per comparison, its number of pairs."""
    residuals: np.ndarray
    """Every pair minus its comparison's median (%)."""
    comparison_sd: float
    """Spread of comparisons' medians around their machine's mean (pooled within machines)."""
    machine_sd: float
    """Spread of the machines' means (what the layout's machine offsets would have to be, comparison noise out)."""


def nested_pairs(paths: list[Path], figure: str) -> list[list[Sequence[float]]]:
    """`figure`'s pairs in the sitting files at `paths`, per machine, per comparison (as `--report` pools them)."""
    sitting = reread(paths, 3.0, 3.0)
    return by_machine(paired_step_differences(sitting)[figure], [run.sitting for run in sitting.runs])


def shape_of(paths: list[Path], figure: str) -> Shape:
    """The layout and spreads of `figure`'s pairs in the sitting files at `paths` (pooled as `--report` pools them)."""
    nested = nested_pairs(paths, figure)
    residuals = np.array([v - statistics.median(c) for m in nested for c in m for v in c])
    spread = machine_spread([[statistics.median(c) for c in m] for m in nested])
    if spread is None:
        raise SystemExit(f"{figure}: the sittings hold one machine, or none with two comparisons: no spread to draw")
    return Shape([[len(c) for c in m] for m in nested], residuals, spread.comparison_sd, spread.machine_sd)


def draw(shape: Shape, machine_sd: float, rng: np.random.Generator) -> list[list[list[float]]]:
    """One sitting of `shape`'s layout, true offset 0: per machine, per comparison, its pairs (%)."""
    machines = []
    for comparisons in shape.layout:
        machine = rng.normal(0.0, machine_sd)
        drawn = []
        for pairs in comparisons:
            offset = machine + rng.normal(0.0, shape.comparison_sd)
            drawn.append(list(offset + rng.choice(shape.residuals, size=pairs)))
        machines.append(drawn)
    return machines


@dataclass
class Tally:
    """Misses below and above 0, of how many intervals."""

    low: int = 0
    high: int = 0
    n: int = 0

    def add(self, low: float | None, high: float | None) -> None:
        self.n += 1
        if low is not None and low > 0:
            self.low += 1
        if high is not None and high < 0:
            self.high += 1

    def text(self) -> str:
        covered = 1 - (self.low + self.high) / self.n
        se = math.sqrt(covered * (1 - covered) / self.n)
        return f"{covered:.1%} ±{se:.1%} (misses {self.low} + {self.high} of {self.n})"


def coverage(shape: Shape, machine_sd: float, replicates: int, seed: int) -> dict[str, Tally]:
    """How often each interval of `clustered_pool` covers 0 over `replicates` drawn sittings: the judged one, the
    bootstrap's and the Student-t over machines' (it spans both)."""
    rng = np.random.default_rng(seed)
    tallies = {"judged": Tally(), "bootstrap": Tally(), "t over machines": Tally()}
    for _ in range(replicates):
        machines = draw(shape, machine_sd, rng)
        groups = [c for m in machines for c in m]
        pooled = clustered_pool(groups, 3.0, [f"m{i}" for i, m in enumerate(machines) for _ in m])
        tallies["judged"].add(pooled.low, pooled.high)
        tallies["bootstrap"].add(pooled.bootstrap_low, pooled.bootstrap_high)
        tallies["t over machines"].add(pooled.machine_low, pooled.machine_high)
    return tallies


def projection(medians: list[float], extra: int, tolerance: float, draws: int, seed: int) -> float:
    """The share of `draws` in which the Student-t over `medians` and `extra` more machines' medians (drawn from the
    normal of `medians`' mean and SD) lies inside ±`tolerance`."""
    rng = np.random.default_rng(seed)
    mean, sd = statistics.fmean(medians), statistics.stdev(medians)
    inside = 0
    for _ in range(draws):
        interval = t_interval(medians + list(rng.normal(mean, sd, extra)))
        inside += -tolerance < interval.low and interval.high < tolerance
    return inside / draws


def _project(paths: list[Path], figure: str, extras: list[int], draws: int, seed: int) -> None:
    medians = machine_medians(nested_pairs(paths, figure))
    if len(medians) < 2:
        raise SystemExit(f"{figure}: fewer than two machines, no spread to draw from")
    print(
        f"{figure}: {len(medians)} machines' medians, mean {statistics.fmean(medians):+.2f} %, "
        f"SD {statistics.stdev(medians):.2f} %"
    )
    for extra in extras:
        share = projection(medians, extra, TOLERANCE_PCT, draws, seed)
        print(
            f"  {extra} more machines: the t over machines inside ±{TOLERANCE_PCT:g} % in {share:.0%} of {draws} draws"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sitting", type=Path, nargs="+")
    parser.add_argument("--figure", default="compiled_ms", choices=("eager_ms", "compiled_ms", "speedup"))
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--machine-sd", type=float, nargs="*", help="machine offsets' SD, %% (default: the sitting's)")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--project", type=int, nargs="+", metavar="K", help="more machines to project (no coverage)")
    args = parser.parse_args()
    if args.project:
        _project(args.sitting, args.figure, args.project, args.replicates * 20, args.seed)
        return 0
    shape = shape_of(args.sitting, args.figure)
    sizes = " | ".join(",".join(str(p) for p in m) for m in shape.layout)
    print(f"{' '.join(map(str, args.sitting))}: {args.figure}; pairs per comparison by machine: {sizes}")
    print(
        f"pairs' residual SD {float(np.std(shape.residuals)):.2f} %, MAD {float(np.median(np.abs(shape.residuals))):.2f} %; "
        f"comparisons' SD within machines {shape.comparison_sd:.2f} %; machines' SD beyond it {shape.machine_sd:.2f} %"
    )
    for machine_sd in args.machine_sd if args.machine_sd is not None else [shape.machine_sd]:
        tallies = coverage(shape, machine_sd, args.replicates, args.seed)
        print(f"machine SD {machine_sd:.2f} %: " + "; ".join(f"{k} {t.text()}" for k, t in tallies.items()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
