"""Timing fidelity's figures and report: per comparison differences, their pools and verdicts, the printed tables
and the `--json` file (`timing_fidelity.py`)."""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from fidelity_records import Bare, Sitting, other_configs, tuned_count
from fidelity_stats import (
    CONFIDENCE,
    MIN_COMPARISONS,
    TOLERANCE_PCT,
    Pooled,
    by_sitting,
    clustered_pool,
    interval_text,
    intraclass_correlation,
    machine_spread,
    pool,
)
from tabulate import tabulate

from reportgen.bundle import SEED_BUCKETS, Figures
from reportgen.compare.judge import count_changes
from reportgen.escape import one_line

__all__: list[str] = []

STEP_FIGURES = ("eager_ms", "compiled_ms", "speedup")


PAIRED = " paired"
"""Suffix of a figure's pairs pooled by comparison (`clustered_pool`): a step figure's block by block (reportgen's
block k against the bare loop's block k, which took turns with it), a graph's busy timing by timing
(`GraphSide.paired_busy_pp`)."""


BY_COMPARISON = " paired medians"
"""Suffix of the same pairs as one median per comparison (each comparison a unit: fair whatever its pairs share)."""


def busy_key(graph: int) -> str:
    """The judged busy figure of graph `graph` (`judged_figures`)."""
    return f"graph {graph} busy"


def _pct(new: float, ref: float) -> float:
    return 100 * (new / ref - 1)


def step_differences(sitting: Sitting) -> dict[str, list[float | None]]:
    """d_i (%) per step figure: run i against the bare loop whose blocks took turns with its own."""
    out: dict[str, list[float | None]] = {key: [] for key in STEP_FIGURES}
    for run, bare in zip(sitting.runs, sitting.bares, strict=False):
        for key in STEP_FIGURES:
            out[key].append(_pct(getattr(run, key), getattr(bare, key)))
    return out


def paired_step_differences(sitting: Sitting) -> dict[str, list[list[float]]]:
    """Per step figure, each comparison's block-by-block differences (%): reportgen's block k against the bare
    loop's block k, granted back to back (empty for a comparison from before reportgen's blocks were kept, or
    whose sides kept different numbers of blocks). A median per process is a draw between the host's fast
    and slow states; two blocks side by side mostly share the state, and their ratio cancels it. Speedup: each
    side's eager/compiled of that block pair (eager and compiled blocks alternate inside it)."""
    out: dict[str, list[list[float]]] = {key: [] for key in STEP_FIGURES}
    for run, bare in zip(sitting.runs, sitting.bares, strict=False):
        sides = (run.eager_samples_ms, run.compiled_samples_ms, bare.eager_samples_ms, bare.compiled_samples_ms)
        if len({len(samples) for samples in sides}) != 1:  # a file from elsewhere may disagree with itself
            sides = ([], [], [], [])
        blocks = [((e, c), (be, bc)) for e, c, be, bc in zip(*sides, strict=True) if min(e, c, be, bc) > 0]
        out["eager_ms"].append([_pct(a[0], b[0]) for a, b in blocks])
        out["compiled_ms"].append([_pct(a[1], b[1]) for a, b in blocks])
        out["speedup"].append([_pct(a[0] / a[1], b[0] / b[1]) for a, b in blocks])
    return out


def paired_groups(sitting: Sitting) -> dict[str, list[list[float]]]:
    """Every figure judged pair by pair, each comparison's pairs in a group of their own: the step figures block
    by block, and each graph's busy timing by timing."""
    groups = paired_step_differences(sitting)
    for number, per_run in paired_busy_differences(sitting).items():
        groups[busy_key(number)] = per_run
    return {key: per_run for key, per_run in groups.items() if any(per_run)}


def _graph_keys(sitting: Sitting) -> Iterator[tuple[int, str]]:
    """(graph, "busy" or a seed bucket) of every graph any run captured."""
    numbers = sorted({g.graph for run in sitting.runs for g in run.graphs})
    for number in numbers:
        yield number, "busy"
        for bucket in SEED_BUCKETS:
            yield number, bucket


def graph_differences(sitting: Sitting) -> dict[tuple[int, str], list[float | None]]:
    """Per graph and round: bundle minus that round's fresh `-p`, in pp (None: one side measured nothing)."""
    out: dict[tuple[int, str], list[float | None]] = {}
    for number, what in _graph_keys(sitting):
        values: list[float | None] = []
        for run in sitting.runs:
            side = next((g for g in run.graphs if g.graph == number), None)
            if side is None or side.busy_percent is None or side.seed_busy_percent is None:
                values.append(None)
            elif what == "busy":
                values.append(side.busy_percent - side.seed_busy_percent)
            else:
                ours = side.categories_percent.get(what, 0.0)
                values.append(ours - side.seed_categories_percent.get(what, 0.0))
        out[number, what] = values
    return out


def paired_busy_differences(sitting: Sitting) -> dict[int, list[list[float]]]:
    """Per graph, each comparison's timing-by-timing busy differences (pp; empty where it kept none). A
    comparison's two medians are each a draw between the host's fast and slow states (a vCPU flips every second
    or so, a side's timings last one to two); a pair, back to back, shares the state, so its difference cancels
    it."""
    numbers = sorted({g.graph for run in sitting.runs for g in run.graphs})
    out: dict[int, list[list[float]]] = {number: [] for number in numbers}
    for run in sitting.runs:
        sides = {side.graph: side for side in run.graphs}
        for number in numbers:
            side = sides.get(number)
            out[number].append(side.paired_busy_pp if side is not None else [])
    return out


def _graph_name(sitting: Sitting, number: int) -> str:
    labels = [g.label for run in sitting.runs for g in run.graphs if g.graph == number and g.label]
    return one_line(labels[0]) if labels else f"graph {number}"  # (a bundle's text, bound for a terminal)


def update_pooled(sitting: Sitting, tolerance_pct: float, tolerance_pp: float) -> None:
    """Pool every figure's differences so far: per comparison, and pair by pair where pairs were kept (all pairs
    pooled, the comparisons' medians pooled, and how much the pairs of one comparison move together)."""
    sitting.pooled = {key: pool(v, tolerance_pct) for key, v in step_differences(sitting).items()}
    for (number, what), values in graph_differences(sitting).items():
        sitting.pooled[f"graph {number} {what}"] = pool(values, tolerance_pp)
    sitting.paired_icc = {}
    for key, per_run in paired_groups(sitting).items():
        tolerance = tolerance_pct if key in STEP_FIGURES else tolerance_pp
        sitting.pooled[key + PAIRED] = clustered_pool(per_run, tolerance, [run.sitting for run in sitting.runs])
        medians: list[float | None] = [statistics.median(pairs) if pairs else None for pairs in per_run]
        sitting.pooled[key + BY_COMPARISON] = pool(medians, tolerance)
        sitting.paired_icc[key] = intraclass_correlation([pairs for pairs in per_run if pairs])
    if len(sitting.bares) >= 2:
        for key in (*STEP_FIGURES, "host_probe_ms"):
            figures = [_bare_figure(b, key) for b in sitting.bares]
            sitting.bare_drift_percent[key] = _pct(max(figures), min(figures))


def _bare_figure(bare: Bare, key: str) -> float:
    return statistics.median(bare.host_probe_ms) if key == "host_probe_ms" else float(getattr(bare, key))


def judged(sitting: Sitting, key: str) -> Pooled:
    """What decides figure `key` (a step figure, or "graph N busy"): its pairs pooled by comparison where pairs
    were kept, else the comparisons' figures."""
    return sitting.pooled.get(key + PAIRED) or sitting.pooled[key]


def judged_figures(sitting: Sitting) -> list[str]:
    """The figures the criterion bounds: the step figures and every graph's busy."""
    busy = [key for key in sitting.pooled if key.startswith("graph ") and key.endswith(" busy")]
    return [*STEP_FIGURES, *busy]


def decided(sitting: Sitting, key: str) -> bool:
    """Figure `key` has a verdict the tolerance settles (inside or outside): more rounds need not measure it."""
    return key in sitting.pooled and judged(sitting, key).verdict in ("inside", "outside")


def undecided(sitting: Sitting, busy: bool = True) -> list[str]:
    """The judged figures (`judged`) whose interval straddles a tolerance edge, or that have too few values;
    step figures only unless `busy` (a sitting without `-p` cannot decide a busy figure)."""
    figures = judged_figures(sitting) if busy else list(STEP_FIGURES)
    return [key for key in figures if not decided(sitting, key)]


def fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:+.{digits}f}"


def _pooled_rows(sitting: Sitting, keys: list[tuple[str, str]], unit: str) -> list[list[str]]:
    rows = []
    for key, name in keys:
        p = sitting.pooled[key]
        interval = interval_text(p)
        mean = (
            "—"
            if p.mean_low is None or p.mean_high is None
            else f"{p.mean:+.2f} [{p.mean_low:+.2f}, {p.mean_high:+.2f}]"
        )
        verdict = f"{p.verdict} ±{p.tolerance:g} {unit}"
        rows.append([name, *(fmt(v) for v in p.values), fmt(p.estimate, 2), interval, verdict, mean])
    return rows


def _headers(sitting: Sitting, first: str) -> list[str]:
    rounds = len(sitting.pooled[STEP_FIGURES[0]].values)
    return [first, *(f"#{i + 1}" for i in range(rounds)), "HL", f"{CONFIDENCE:.0%} CI", "verdict", "mean [t CI]"]


def _process_rows(sitting: Sitting) -> list[list[object]]:
    """Every timed process in the order it ran: medians, speedup, host probe median, wall time."""
    rows: list[list[object]] = []
    for run, bare in zip(sitting.runs, sitting.bares, strict=False):
        probe = statistics.median(run.host_probe_ms) if run.host_probe_ms else None
        rows.append([f"reportgen {run.round}", run.eager_ms, run.compiled_ms, run.speedup, probe, run.wall_s])
        probe = statistics.median(bare.host_probe_ms)
        rows.append([f"bare {bare.index}", bare.eager_ms, bare.compiled_ms, bare.speedup, probe, bare.wall_s])
    return rows


def _kernels_line(sitting: Sitting) -> None:
    """Whether reportgen and the bare loop ran the same kernels (`Run.kernel_modules`, `Bare.kernel_modules`)."""
    listed = [
        (r, b) for r, b in zip(sitting.runs, sitting.bares, strict=False) if r.kernel_modules and b.kernel_modules
    ]
    if not listed:
        return
    differ = []
    for run, bare in listed:
        ours, theirs = set(run.kernel_modules), set(bare.kernel_modules)
        if ours != theirs:
            differ.append(
                f"comparison {run.round}: {len(ours - theirs)} only reportgen's, {len(theirs - ours)} only the bare loop's"
            )
    same = len(listed) - len(differ)
    print(
        f"kernels (file names: their source's hash), reportgen's against the bare loop's: the same in {same} of "
        f"{len(listed)} comparisons" + (f"; {'; '.join(differ)}" if differ else "")
    )


def _launches_line(sitting: Sitting) -> None:
    """Whether reportgen and the bare loop launched each Triton kernel with the same config (`Run.launches`,
    `Bare.launches`), and the compiled medians' ratio where they did and where they did not (shown, not judged)."""
    pairs = enumerate(zip(sitting.runs, sitting.bares, strict=False), 1)
    listed = [(n, r, b) for n, (r, b) in pairs if r.launches and b.launches]  # (#n: the tables' column)
    if not listed:
        return
    parts: dict[bool, list[float]] = {True: [], False: []}
    differ = []
    for number, run, bare in listed:
        shared, other = other_configs(run.launches, bare.launches)
        parts[not other].append((run.compiled_ms / bare.compiled_ms - 1) * 100)
        if other:
            differ.append(f"#{number}: {len(other)} of {shared} ({one_line(', '.join(c.kernel for c in other))})")
    tuned = sorted({tuned_count(side.launches) for _, run, bare in listed for side in (run, bare)})
    means = "; ".join(
        f"{label}: compiled medians' ratio - 1 {statistics.mean(v):+.2f} % over {len(v)}"
        for label, v in (("the same configs", parts[True]), ("other configs", parts[False]))
        if v
    )
    print(
        f"launch configs, reportgen's against the bare loop's: the same in {len(parts[True])} of {len(listed)} "
        f"comparisons (kernels tuned in their own process: {'-'.join(map(str, (tuned[0], tuned[-1])))})"
        + (f"; other configs in {'; '.join(differ)}" if differ else "")
        + f"; {means}"
    )


def _device_lines(sitting: Sitting) -> None:
    """Per side (compiled, eager): device time per profiled step, reportgen's bundle against the bare loop's own
    profile (`Run.figures`, `Bare.figures`), and the kernels whose count per step differs (`count_changes`, the
    largest change first): whether a step-time offset is on the device or on the host. Shown, not judged."""
    pairs = enumerate(zip(sitting.runs, sitting.bares, strict=False), 1)
    listed = [
        (n, Figures.model_validate(r.figures), Figures.model_validate(b.figures))
        for n, (r, b) in pairs
        if r.figures and b.figures
    ]
    for side in ("compiled", "eager"):
        ratios: list[tuple[int, float]] = []
        differ: list[str] = []
        for number, ours, theirs in listed:
            one, other = getattr(ours, side), getattr(theirs, side)
            if one is None or other is None or not one.device_ms or not other.device_ms:
                continue
            ratios.append((number, (one.device_ms / other.device_ms - 1) * 100))
            changes = [c for c in count_changes(theirs, ours, limit=None) if c.side == side and c.what == "kernel"]
            if names := [c.name for c in changes]:
                differ.append(f"#{number}: {len(names)} ({one_line(', '.join(n[:80] for n in names[:3]))})")
        if ratios:
            median = statistics.median(value for _, value in ratios)
            each = ", ".join(f"#{number} {value:+.2f}" for number, value in ratios)
            print(
                f"device time per {side} step, reportgen's profiled steps against the bare loop's - 1 (shown, not "
                f"judged): median {median:+.2f} % over {len(ratios)} ({each}); kernels per step the "
                f"same by name in {len(ratios) - len(differ)} of {len(ratios)}"
                + (f"; other in {'; '.join(differ)}" if differ else "")
            )


def report(sitting: Sitting) -> None:
    """Print the processes, the pooled tables and round 1's costs."""
    print(f"\n{one_line(sitting.bundle)} on {one_line(sitting.device)}: every process, in order")
    headers = ["process", "eager ms", "compiled ms", "speedup", "host probe ms (median)", "wall s"]
    print(tabulate(_process_rows(sitting), headers=headers, floatfmt=".3f", missingval="—"))
    drift = ", ".join(f"{k} {v:.1f} %" for k, v in sitting.bare_drift_percent.items())
    print(f"bare loops' own drift (max/min - 1 over {len(sitting.bares)}): {drift}")
    print("\nreportgen / bare loop of the same round (their step blocks took turns) - 1, %")
    keys = [(k, k) for k in STEP_FIGURES]
    print(tabulate(_pooled_rows(sitting, keys, "%"), headers=_headers(sitting, "step figure"), disable_numparse=True))
    for key in STEP_FIGURES:
        _paired_lines(sitting, key, f"{key}, reportgen / bare loop block by block - 1", "%")
    _kernels_line(sitting)
    _launches_line(sitting)
    _device_lines(sitting)
    numbers = sorted({int(k.split()[1]) for k in sitting.pooled if k.startswith("graph ")})
    for number in numbers:
        keys = [(busy_key(number), "busy")] + [(f"graph {number} {b}", f"  {b}") for b in SEED_BUCKETS]
        print(f"\n{_graph_name(sitting, number)}: bundle - fresh -p, pp")
        print(tabulate(_pooled_rows(sitting, keys, "pp"), headers=_headers(sitting, "share"), disable_numparse=True))
        _paired_reps(sitting, number)
    missing = [
        f"r{run.round} graph {g.graph} ({'no -p report' if g.seed_busy_percent is None else 'no busy in bundle'})"
        for run in sitting.runs
        for g in run.graphs
        if g.seed_busy_percent is None or g.busy_percent is None
    ]
    if missing:
        print(f"\nnot compared (one side measured nothing): {', '.join(missing)}")
    _costs(sitting)
    if left := undecided(sitting):
        print(f"\nnot decided (too few comparisons, or the interval straddles a tolerance edge): {', '.join(left)}")


def _paired_reps(sitting: Sitting, number: int) -> None:
    """The graph's wall per call against the `-p`'s, two ways: reportgen's first round timing by timing (each
    pair took turns: what the method adds on the same moments of the host), and the round the bundle keeps (the
    busy % divides by it). (Reportgen's first 10x10 calls are made outside windows, beside the round's other
    processes: no measure of anything here.)"""
    sides = [g for run in sitting.runs for g in run.graphs if g.graph == number]

    def ratio(ours: float | None, theirs: float | None) -> float | None:
        return None if ours is None or not theirs else _pct(ours, theirs)

    rows = {
        "reportgen's first round / the -p, timing by timing (median)": [g.paired_reps_percent for g in sides],
        "reportgen's kept round / the -p": [ratio(g.unprofiled_wall_ms, g.seed_wall_ms) for g in sides],
    }
    for name, values in rows.items():
        if not any(v is not None for v in values):
            continue
        p = pool(values, TOLERANCE_PCT)
        interval = interval_text(p)
        print(
            f"wall per call, {name} - 1, %: {', '.join(fmt(v, 2) for v in values)}; HL {fmt(p.estimate, 2)} {interval}"
        )
    _paired_lines(sitting, busy_key(number), "busy - -p timing by timing", "pp")


def _paired_lines(sitting: Sitting, key: str, title: str, unit: str) -> None:
    """Figure `key` pair by pair, pooled by comparison (what is judged); then one median per comparison, and how
    much a comparison's pairs move together (their intraclass correlation: a process's own offset)."""
    if (paired := sitting.pooled.get(key + PAIRED)) is None or not paired.values:
        return
    medians = sitting.pooled[key + BY_COMPARISON]
    print(
        f"{title} (what is judged), {unit}: median of {len(paired.values)} pairs of "
        f"{sum(v is not None for v in medians.values)} comparisons {fmt(paired.estimate, 2)} {interval_text(paired)} "
        f"({_interval_source(sitting, paired)}), {paired.verdict} ±{paired.tolerance:g} {unit}; "
        f"mean {fmt(paired.mean, 2)}"
    )
    print(
        f"  one median per comparison ({', '.join(fmt(m) for m in medians.values)}): HL {fmt(medians.estimate, 2)} "
        f"{interval_text(medians)}; intraclass correlation of the pairs {fmt(sitting.paired_icc.get(key), 3)}"
    )
    tags = [run.sitting or "untagged" for run in sitting.runs]
    if len(tags) == len(medians.values) and len(set(tags)) > 1:  # comparisons of one sitting share its machine
        _grouped("by sitting", tags, medians.values)
        _spread_line([run.sitting for run in sitting.runs], medians.values)
    places = [run.placement or "unplaced" for run in sitting.runs]
    if len(places) == len(medians.values) and len(set(places)) > 1:  # which GPU and CPUs, across machines
        _grouped("by placement", places, medians.values)


def _spread_line(tags: list[str], values: list[float | None]) -> None:
    """How the comparisons' medians spread within machines and machines beyond that (`machine_spread`), where they
    can: what only more machines narrow."""
    kept = [(value, tag) for value, tag in zip(values, tags, strict=True) if value is not None]
    spread = machine_spread(by_sitting([value for value, _ in kept], [tag for _, tag in kept]))
    if spread is not None:
        f = "—" if spread.f is None else f"{spread.f:.2f}"
        print(
            f"  comparisons' SD within machines {spread.comparison_sd:.2f}, machines' SD beyond it "
            f"{spread.machine_sd:.2f} (F {f} on {spread.df[0]} and {spread.df[1]} df)"
        )


def _grouped(title: str, keys: list[str], values: list[float | None]) -> None:
    """One line: each key's values, in order of first appearance."""
    groups: dict[str, list[str]] = {}
    for key, value in zip(keys, values, strict=True):
        groups.setdefault(key, []).append(fmt(value))
    print(f"  {title}: " + "; ".join(f"{one_line(key)} ({', '.join(v)})" for key, v in groups.items()))


def _interval_source(sitting: Sitting, paired: Pooled) -> str:
    """Where a paired figure's judged interval comes from (`clustered_pool`)."""
    if paired.low is None:
        return f"no interval under {MIN_COMPARISONS} comparisons"
    named = [run.sitting for run in sitting.runs if run.sitting]
    if len(named) == len(set(named)):
        return "bootstrap: comparisons, then their pairs"
    if paired.machine_low is None or paired.machine_high is None:
        return "bootstrap: comparisons, then their pairs; one machine: says nothing of others"
    boot = f"[{fmt(paired.bootstrap_low, 2)}, {fmt(paired.bootstrap_high, 2)}]"
    t = f"[{paired.machine_low:+.2f}, {paired.machine_high:+.2f}]"
    return (
        f"spans both the bootstrap over machines, their comparisons, then pairs {boot} and Student-t over "
        f"{paired.machines} machines' medians {t}"
    )


def _costs(sitting: Sitting) -> None:
    warm = sitting.warmup
    print(f"\nwarm-up run (cache {warm.get('inductor_cache')}): {warm.get('wall_s', 0):.1f} s, ", end="")
    print(f"first-call compile {warm.get('compile_s') or 0:.1f} s")
    if not sitting.runs:
        return
    run = sitting.runs[0]
    walls = [g.seed_wall_s or 0.0 for g in run.graphs]
    if not any(walls):  # `--seeds 0` (or --aa): no `-p` to weigh against
        print(f"round 1: reportgen run {run.wall_s:.1f} s; no -p")
        return
    manual_s = (run.compile_s or 0.0) + sum(walls)
    print(
        f"round 1: reportgen run {run.wall_s:.1f} s; first-call compile {run.compile_s or 0:.1f} s + -p runs "
        f"{' + '.join(f'{w:.1f}' for w in walls) or '0'} s = {manual_s:.1f} s; "
        f"ratio {run.wall_s / manual_s if manual_s else math.nan:.2f}"
    )


def dump_sitting(sitting: Sitting, out: Path | None) -> None:
    """Write every number to `out` (atomically: a killed run leaves the previous complete file)."""
    if out is None:
        return
    data = asdict(sitting)
    for bare, kept in zip(data["bares"], sitting.bares, strict=True):
        bare["speedup"] = kept.speedup
    for run, kept_run in zip(data["runs"], sitting.runs, strict=True):
        run["speedup"] = kept_run.speedup
    data["step_differences_percent"] = step_differences(sitting)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    tmp.replace(out)
