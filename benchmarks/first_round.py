"""Which fidelity comparisons had a bare loop that compiled in the process it timed, and what they read.

    python benchmarks/first_round.py SITTING.json... [--groups 3] [--warm-json OUT.json]

Before session 57 a sitting's warm-up was reportgen's run alone. reportgen records provenance, which gives its graphs
another FX-graph-cache key than the bare loop's, so the bare loops of a sitting's first round (its first `--groups`
comparisons in a cache: one machine's, one file's) compiled in their timed process while reportgen read its graphs
from the cache; later rounds' bare loops read theirs. Sittings made since (`timing_fidelity.warm_up_bare`, their
`warmup` holds `bare_cache`) warm both sides up first: none of their comparisons has that asymmetry.

Prints each cache's comparisons (median of reportgen / bare - 1 block by block, %: compiled, eager) split so, and
the mean of each part with its standard error. `--warm-json OUT` writes the comparisons where neither side compiled
in its timed process as one sittings file, for `timing_fidelity.py --report OUT`.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

FIGURES = ("compiled_samples_ms", "eager_samples_ms")


@dataclass
class Comparison:
    """One comparison of a sittings file: where it ran and whether its bare loop compiled while it was timed."""

    file: Path
    index: int
    """Its position among the file's `runs` (and `bares`)."""
    machine: str
    bare_compiled: bool
    medians: dict[str, float]
    """Per figure of `FIGURES`: the median of reportgen's block / the bare loop's block - 1, %."""


def block_median(ours: list[float], theirs: list[float]) -> float:
    """Median over the block pairs of ours / theirs - 1, in %."""
    return statistics.median(a / b - 1 for a, b in zip(ours, theirs, strict=False)) * 100


def comparisons(path: Path, groups: int) -> Iterator[Comparison]:
    """The file's comparisons with block samples on both sides; the first `groups` of each machine (with blocks or
    not) are its first round, unless the sitting warmed the bare loop up (`warmup.bare_cache`)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    warmed = "bare_cache" in data.get("warmup", {})
    seen: dict[str, int] = {}
    for index, (run, bare) in enumerate(zip(data["runs"], data["bares"], strict=False)):
        machine = run.get("sitting") or path.name
        seen[machine] = seen.get(machine, 0) + 1  # its place in the machine's rounds, blocks kept or not
        if not all(run.get(f) and bare.get(f) for f in FIGURES):
            continue
        medians = {f: block_median(run[f], bare[f]) for f in FIGURES}
        yield Comparison(path, index, machine, not warmed and seen[machine] <= groups, medians)


def summary(found: list[Comparison], figure: str) -> str:
    """Mean and standard error of `figure` over `found` (n, mean, SE)."""
    values = [c.medians[figure] for c in found]
    if len(values) < 2:
        return f"n {len(values)}"
    se = statistics.stdev(values) / len(values) ** 0.5
    return f"n {len(values)}, mean {statistics.mean(values):+.2f} % (SE {se:.2f})"


def warm_file(found: list[Comparison], out: Path) -> None:
    """The comparisons where neither side compiled in its timed process, as one sittings file (the first file's
    header; `timing_fidelity.py --report` reads it)."""
    kept = [c for c in found if not c.bare_compiled]
    if not kept:
        raise SystemExit(f"{out}: not written: every comparison's bare loop compiled in its timed process")
    first = json.loads(kept[0].file.read_text(encoding="utf-8"))
    runs, bares = [], []
    for path in dict.fromkeys(c.file for c in kept):
        data = json.loads(path.read_text(encoding="utf-8"))
        for c in (c for c in kept if c.file == path):
            runs.append(data["runs"][c.index])
            bares.append(data["bares"][c.index])
    first.update(runs=runs, bares=bares, continued_from=[], excluded=[])
    out.write_text(json.dumps(first), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--groups", type=int, default=3, help="comparisons a round started at once (default 3)")
    parser.add_argument("--warm-json", type=Path, help="write the comparisons where neither side compiled here")
    args = parser.parse_args()
    found = [c for path in args.files for c in comparisons(path, args.groups)]
    for path, machine in dict.fromkeys((c.file, c.machine) for c in found):
        mine = [c for c in found if (c.file, c.machine) == (path, machine)]
        parts = [
            f"{label} {' '.join(f'{c.medians[FIGURES[0]]:+.1f}' for c in mine if c.bare_compiled is flag)}"
            for label, flag in (("bare compiled:", True), ("neither:", False))
        ]
        print(f"{machine} ({path.parent.name}/{path.name}): compiled, {'; '.join(parts)}")
    for figure in FIGURES:
        name = figure.removesuffix("_samples_ms")
        for label, flag in (("bare loop compiled in its timed process", True), ("neither side compiled", False)):
            print(f"{name}, {label}: {summary([c for c in found if c.bare_compiled is flag], figure)}")
    if args.warm_json is not None:
        warm_file(found, args.warm_json)
        print(f"wrote {sum(not c.bare_compiled for c in found)} comparisons to {args.warm_json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
