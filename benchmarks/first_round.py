"""Which fidelity comparisons had a bare loop that compiled in the process it timed, and what they read.

    python benchmarks/first_round.py SITTING.json... [--groups 3] [--warm-json OUT.json] [--by seeded]
        [--cluster REGEX]

Before session 57 a sitting's warm-up was reportgen's run alone. reportgen records provenance, which gives its graphs
another FX-graph-cache key than the bare loop's, so the bare loops of a sitting's first round (its first `--groups`
comparisons in a cache: one machine's, one file's) compiled in their timed process while reportgen read its graphs
from the cache; later rounds' bare loops read theirs. Sittings made since (`timing_fidelity.warm_up_bare`, their
`warmup` holds `bare_cache`) warm both sides up first: none of their comparisons has that asymmetry.

Prints each cache's comparisons (median of reportgen / bare - 1 block by block, %: compiled, eager) split so, and
the mean of each part with its standard error. `--warm-json OUT` writes the comparisons where neither side compiled
in its timed process as one sittings file, for `timing_fidelity.py --report OUT`. `--by seeded` splits instead by
whether the comparison's round had fresh `-p` processes (`--seeds`: a graph of the run measured against one), the
question session 59's rounds raised (reportgen's compiled steps read slower in the rounds with them). Each split
also prints, per figure, its first part less its second within each machine that has both (session 60's registered
reading: the mean over machines with a Student-t interval), and what each side's step windows let the host do in
each part (`timing_fidelity.steps_cpu`). `--cluster REGEX` takes a comparison's machine from its file's name instead
(REGEX's first group): one machine's rounds in turn, paired file by file (`sittings/2026-11-29-cpu-p/cpu-seeded.sh`).
"""

from __future__ import annotations

import argparse
import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from fidelity_records import Bare, Run, Sitting
from fidelity_report import dump_sitting, paired_step_differences
from fidelity_stats import t_interval
from timing_fidelity import STEPS_CPU, reread

from reportgen.escape import one_line

FIGURES = ("compiled_ms", "eager_ms")
"""The step figures split here, as `fidelity_report.paired_step_differences` names them."""


@dataclass
class Comparison:
    """One comparison of a sittings file: where it ran and whether its bare loop compiled while it was timed."""

    index: int
    """Its position among the file's comparisons."""
    machine: str
    bare_compiled: bool
    seeded: bool
    """Its round had fresh `-p` processes (a graph of its run was measured against one)."""
    medians: dict[str, float]
    """Per figure of `FIGURES`: the median of reportgen's block / the bare loop's block - 1, % (as `--report`)."""
    file: Path = field(compare=False)
    run: Run = field(compare=False, repr=False)
    bare: Bare = field(compare=False, repr=False)
    sitting: Sitting = field(compare=False, repr=False)
    """The file as read (its header heads `warm_file`'s)."""


def comparisons(path: Path, groups: int, cluster: re.Pattern[str] | None = None) -> Iterator[Comparison]:
    """The file's comparisons with block pairs; the first `groups` of each machine (with blocks or not) are its first
    round, unless the sitting warmed the bare loop up (`warmup.bare_cache`). `cluster`: the machine is its first
    group in the file's name instead (rounds of one machine paired by file: `pair(\\d+)-`)."""
    sitting = reread([path], 3.0, 3.0, pool=False)
    warmed = "bare_cache" in sitting.warmup
    pairs = paired_step_differences(sitting)
    seen: dict[str, int] = {}
    for number, (run, bare) in enumerate(zip(sitting.runs, sitting.bares, strict=False)):
        named = cluster.search(path.name) if cluster is not None else None
        machine = named.group(1) if named else run.sitting or path.name
        seen[machine] = seen.get(machine, 0) + 1  # its place in the machine's rounds, blocks kept or not
        if all(pairs[f][number] for f in FIGURES):
            medians = {f: statistics.median(pairs[f][number]) for f in FIGURES}
            first = not warmed and seen[machine] <= groups
            seeded = any(g.seed_exit_code is not None or g.more_seeds for g in run.graphs)  # a -p ran, whatever it read
            yield Comparison(number, machine, first, seeded, medians, path, run, bare, sitting)


def summary(found: list[Comparison], figure: str) -> str:
    """Mean and standard error of `figure` over `found` (n, mean, SE)."""
    values = [c.medians[figure] for c in found]
    if len(values) < 2:
        return f"n {len(values)}"
    se = statistics.stdev(values) / len(values) ** 0.5
    return f"n {len(values)}, mean {statistics.mean(values):+.2f} % (SE {se:.2f})"


def within_machines(found: list[Comparison], figure: str, by: str) -> str:
    """Per machine with comparisons in both parts of `by`'s split, the mean of the first part less that of the second
    (each machine's own offset cancels); their mean over machines with a Student-t 95 % interval (machines, n)."""
    differences = []
    for machine in dict.fromkeys(c.machine for c in found):
        parts = [[c.medians[figure] for c in found if c.machine == machine and part(c, by) is f] for f in (True, False)]
        if all(parts):
            differences.append(statistics.mean(parts[0]) - statistics.mean(parts[1]))
    if len(differences) < 2:
        return f"machines {len(differences)}"
    interval = t_interval(differences)
    low, high = interval.low, interval.high
    each = " ".join(f"{d:+.2f}" for d in differences)
    return f"machines {len(differences)} ({each}), mean {statistics.mean(differences):+.2f} % [{low:+.2f}, {high:+.2f}]"


def beside_steps(found: list[Comparison]) -> str:
    """What each side's step windows let the host use (`timing_fidelity.steps_cpu`, kept since session 60), summed
    over `found`, CPU ms per second of window: the others and of them the paused runs' trees, the holder's own
    process (1000: its timed thread alone) and the rest of its line (launcher, workers)."""
    totals: dict[str, dict[str, float]] = {}
    for c in found:
        for role, row in dict(c.run.windows.get("steps_cpu") or {}).items():  # type: ignore[call-overload]
            total = totals.setdefault(str(role), dict.fromkeys(STEPS_CPU, 0.0))
            for key in STEPS_CPU:
                total[key] += float(row.get(key, 0.0))  # holder_s, line_s: kept since session 60's second change
    per_s = {role: {key: 1e3 * v / t["open_s"] for key, v in t.items()} for role, t in totals.items() if t["open_s"]}
    return (
        "; ".join(
            f"{one_line(role)} others {ms['others_s']:.1f} ms/s (runs {ms['runs_s']:.1f}), "
            f"own {ms['holder_s']:.0f} ms/s, line {ms['line_s']:.1f} ms/s"
            for role, ms in sorted(per_s.items())
        )
        or "not kept"
    )


def warm_file(found: list[Comparison], out: Path) -> None:
    """The comparisons where neither side compiled in its timed process, as one sittings file (the first file's
    header; `timing_fidelity.py --report` reads it)."""
    kept = [c for c in found if not c.bare_compiled]
    if not kept:
        raise SystemExit(f"{out}: not written: every comparison's bare loop compiled in its timed process")
    sitting = replace(
        kept[0].sitting, runs=[c.run for c in kept], bares=[c.bare for c in kept], continued_from=[], excluded=[]
    )
    dump_sitting(sitting, out)


SPLITS = {
    "bare-compiled": (
        ("bare compiled:", "bare loop compiled in its timed process"),
        ("neither:", "neither side compiled"),
    ),
    "seeded": (("with -p:", "rounds with fresh -p processes"), ("without:", "rounds without")),
}
"""`--by`: the two parts' labels (per machine, in the summary), True's first."""


def part(comparison: Comparison, by: str) -> bool:
    """Which part of `--by`'s split the comparison falls in (True: the first)."""
    return comparison.seeded if by == "seeded" else comparison.bare_compiled


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--groups", type=int, default=3, help="comparisons a round started at once (default 3)")
    parser.add_argument("--warm-json", type=Path, help="write the comparisons where neither side compiled here")
    parser.add_argument("--by", choices=sorted(SPLITS), default="bare-compiled", help="what splits the comparisons")
    parser.add_argument(
        "--cluster", type=re.compile, help="the machine is this regex's first group in the file name (pair(\\d+)-)"
    )
    args = parser.parse_args()
    found = [c for path in args.files for c in comparisons(path, args.groups, args.cluster)]
    labels = dict(zip((True, False), SPLITS[args.by], strict=True))
    for path, machine in dict.fromkeys((c.file, c.machine) for c in found):
        mine = [c for c in found if (c.file, c.machine) == (path, machine)]
        parts = [
            f"{labels[flag][0]} {' '.join(f'{c.medians[FIGURES[0]]:+.1f}' for c in mine if part(c, args.by) is flag)}"
            for flag in (True, False)
        ]
        where = one_line(f"{machine} ({path.parent.name}/{path.name})")  # a file's tag, bound for a terminal
        print(f"{where}: compiled, {'; '.join(parts)}")
    for figure in FIGURES:
        name = figure.removesuffix("_ms")
        for flag in (True, False):
            print(f"{name}, {labels[flag][1]}: {summary([c for c in found if part(c, args.by) is flag], figure)}")
        less = f"{labels[True][1]} less {labels[False][1]}"
        print(f"{name}, {less}, within machines: {within_machines(found, figure, args.by)}")
    for flag in (True, False):
        beside = beside_steps([c for c in found if part(c, args.by) is flag])
        print(f"beside the step windows, {labels[flag][1]}: {beside}")
    if args.warm_json is not None:
        warm_file(found, args.warm_json)
        print(f"wrote {sum(not c.bare_compiled for c in found)} comparisons to {args.warm_json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
