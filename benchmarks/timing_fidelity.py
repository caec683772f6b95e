"""Timing fidelity: reportgen's numbers against a bare timing loop and `python <wrapper>.py -p`, interleaved.

    python benchmarks/timing_fidelity.py RECIPE [--variant NAME] [--rounds 5] [--groups K] [--steps N]
        [--until-decided MAX] [--tolerance-pct 3] [--tolerance-pp 3] [--work DIR] [--json OUT] [--warm-up-only]
        [--max-host-probe-ms MS] [--continue-from JSON] [--window-cpu K] [--seeds N]
    python benchmarks/timing_fidelity.py --report JSON... [--json OUT] (earlier sittings pooled; runs nothing)

A lent VM's CPU speed moves within a fraction of a second (a 1 ms probe reads 0.9 ms, then 2.6 ms 0.3 s later),
so one sitting's single pair proves nothing, and neither process may measure while another works:

0. one untimed `reportgen run` (`DIR/warmup`) fills the kept Inductor cache `DIR/cache` (skipped when that
   bundle is there: `--warm-up-only` makes it alone, e.g. beside another recipe's warm-up), then one untimed bare
   loop fills the bare loop's own entries (`warm_up_bare`: reportgen's graphs have another cache key), so that no
   timed process compiles;
1. each round starts `--groups` comparisons at once; a comparison is a `reportgen run` (into `DIR/results/<n>`),
   a bare loop and one fresh `python <wrapper>.py -p` per compiled graph of the warm-up's bundle. Every
   measurement of every process runs in a timed window of the round's coordinator (`reportgen.run.window_host`:
   one window at a time, every other process stopped with SIGSTOP meanwhile); within a comparison the bare
   loop's and reportgen's step blocks take strict turns (the bare loop's first in odd comparisons, reportgen's in
   even ones), and each `-p`'s timing and profile go back to back with
   reportgen's first timing round and its profile of that graph (the `-p` first in odd comparisons).
   Every window's thread runs on one CPU (`--window-cpu K`; default the last this process may use, -1 none): a
   lent VM's vCPUs flip between a fast and a slow state every second or so, each on its own, so two windows a
   few ms apart on different vCPUs read up to 50 % apart (median 11 % over 144 pairs of a 16 ms launch-bound
   loop on a 16-vCPU H200 host, two processes taking turns by a pipe), on the same vCPU a few % (median 2 %,
   `Coordinator(cpu=K)`). Processes the coordinator wakes in turn mostly share one already
   (`benchmarks/window_pairing.py`: 2.5 % either way); the pin makes it sure.

The bare loop is plain code in a fresh process, on the warm cache and in the run's own environment
(`reportgen.run.child_env`): the same model and input (the run stage's workload builder), the same warm-ups,
then eager and compiled timed in alternating blocks of `profile.block_steps` steps, `profile.steps` blocks each
(`--steps N` sets it on both sides, through a copy of the recipe beside it), as the run times them; medians.

Per comparison, d = reportgen / bare - 1 (%) for the eager and compiled medians and the speedup, and for each
graph the bundle's busy % (`-p` definition) and category shares minus that comparison's fresh `-p` (pp). Each
figure's d are pooled as the Hodges-Lehmann shift with its exact Wilcoxon signed-rank 95 % interval (the host's
bursts make them heavy-tailed; at least 6 comparisons), judged against the tolerance: "inside" (the whole
interval within ±tolerance), "outside" (entirely beyond it) or "undecided"; the mean with a Student-t interval
is printed beside it. The criterion's figures are judged pair by pair where pairs were kept: a step figure block by
block (reportgen's block k against the bare loop's block k, granted back to back; speedup from each side's
eager/compiled of that block pair), a graph's busy timing by timing (`GraphSide.paired_busy_pp`: the `-p`'s k-th
timing and reportgen's first round's k-th took turns); either pair's difference cancels the host's state. The
pairs are pooled by comparison (`fidelity_stats.clustered_pool`: their median, with a two-stage bootstrap interval
over comparisons, then their pairs; at least 6 comparisons), since a process's own offset moves all its pairs
(`fidelity_report.judged`); each comparison carries its machine's boot id, and comparisons of one machine are
drawn together (machines, then their comparisons, then pairs: a machine moved them together too), the interval
spanning a Student-t over the machines' medians as well (a bootstrap over few machines covers less than it says:
`interval_coverage.py`). Each comparison also records its placement (the GPU and CPUs it ran on).
`--seeds N` starts N fresh `-p` processes per graph and comparison (roles `seed`,
`seed#1`, …), the r-th paired timing by timing with reportgen's r-th timing round (it makes 3): N times the pairs
for a few seconds of windows each, where a comparison costs minutes (mixnet_l's forward: 9 pairs a comparison);
`--seeds 0` starts none (busy figures unmeasured, step figures only, for shorter rounds once busy is decided).
`--until-decided MAX` adds rounds up to MAX comparisons while a judged figure is undecided, and starts `-p` only for
the graphs whose busy is still undecided (`graphs_to_seed`: mixnet_l's backward alone once its forward is decided,
half the `-p` processes). `--json OUT` holds every number, rewritten after each comparison; `--continue-from JSON`
puts an earlier sitting's comparisons first (a lent machine goes back after 30 min held). With
`--max-host-probe-ms MS` a sitting stops when the host is slower than normal: before the warm-up when a 3 s probe
here reads over MS (a slow lent machine cost 4 min of warm-up to find out), after it when the warm-up's probe
does, and after a round where a comparison's bare loop did (that comparison is left out of the pools).

This module runs the sitting (plan, rounds, command line); beside it `fidelity_children` (the bare loop and the
`-p` processes), `fidelity_records` (what `--json` keeps), `fidelity_report` (figures, pools, tables) and
`fidelity_stats` (tolerances, Hodges-Lehmann, Student-t, pairs pooled by comparison, intraclass correlation).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Collection, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fidelity_children import (
    Started,
    bare_loop,
    bare_result,
    failed,
    report_failed_seeds,
    seed_process,
    seed_process_name,
    seed_profile_window,
    seed_result,
    seed_role,
    seed_timing_window,
    start_child,
    wait_all,
)
from fidelity_records import Bare, GraphSide, Run, Seed, Sitting, placement, read_run, sitting_tag
from fidelity_report import busy_key, decided, dump_sitting, fmt, report, undecided, update_pooled
from fidelity_stats import MIN_ROUNDS, TOLERANCE_PCT, TOLERANCE_PP

from reportgen.bundle import MANIFEST_FILE, MAX_MODULE_BYTES, bundle_file
from reportgen.escape import one_line
from reportgen.pipeline import select_variant, variant_recipe
from reportgen.recipe import load_recipe
from reportgen.run import child_env, window
from reportgen.run.pause import WindowCpu
from reportgen.run.window_host import Coordinator, Grouped, Turns
from reportgen.run.window_policy import Window

__all__: list[str] = []

DEFAULT_ROUNDS = 5
"""Rounds by default: issue 27 asks for at least 5 interleaved rounds."""

PARTNER_WAIT_S = 3600.0
"""How long a paired window waits for its partner before going alone (a run's own timeout is shorter)."""


def _reportgen_command(plan: Plan, results: Path) -> list[str]:
    command = [sys.executable, "-m", "reportgen", "run", str(plan.recipe), "-o", str(results)]
    command += ["--isolation", "cores"]  # one GPU: a plain run; the benchmark's coordinator stands in for the lock
    return (
        command + ["--inductor-cache", str(plan.work / "cache")] + (["--variant", plan.variant] if plan.variant else [])
    )


def _bundle_dir(plan: Plan, results: Path) -> Path:
    recipe = load_recipe(plan.recipe)
    return results / recipe.bundle_name(select_variant(recipe, plan.variant, plan.recipe))


@dataclass
class Deadline:
    """`--stop-after-s`: start no round after this many seconds from the sitting's start (a lent machine's time is
    counted); None: no limit."""

    limit_s: float | None
    started: float = field(default_factory=time.monotonic)
    said: bool = False

    def passed(self) -> bool:
        """Whether the next round may not start (said once)."""
        spent = time.monotonic() - self.started
        if self.limit_s is None or spent <= self.limit_s:
            return False
        if not self.said:
            print(f"no more rounds: {spent:.0f} s spent, --stop-after-s {self.limit_s:g}", flush=True)
        self.said = True
        return True


@dataclass
class Plan:
    """What to run and where."""

    recipe: Path
    variant: str | None
    work: Path
    rounds: int
    until_decided: int | None
    tolerance_pct: float
    tolerance_pp: float
    json_out: Path | None
    settle_s: float = 0.05
    round_timeout_s: float = 1800.0
    aa: bool = False
    window_cpu: int | None = None
    """Every window's thread runs on this CPU (`Coordinator(cpu=...)`): a pair's two sides see the same vCPU."""
    groups: int = 1
    seeds: int = 1
    """Fresh `-p` processes per graph and comparison, each paired with one of reportgen's timing rounds."""
    steps: int | None = None
    max_host_probe_ms: float | None = None
    continue_from: Path | None = None
    deadline: Deadline = field(default_factory=lambda: Deadline(None))
    """No round starts after it (`--stop-after-s`)."""
    tag: str = field(default_factory=sitting_tag)
    """Every comparison of this sitting carries it (`Run.sitting`)."""
    placement: str = field(default_factory=placement)
    """And this (`Run.placement`)."""


def recipe_key(recipe: str | Path) -> str:
    """A sitting's recipe file name without the process id of its steps copy (`recipe_with_steps`): sittings of
    one recipe and step count continue each other whichever process made the copy."""
    return re.sub(r"^(\.fidelity-.+-\d+-steps)-\d+(\.\w+)$", r"\1\2", Path(recipe).name)


def continue_from(sitting: Sitting, path: Path) -> None:
    """Put the comparisons of an earlier sitting's `--json` file first (the same recipe and variant, its pools
    judged with the new ones): a sitting cut short by the machine's 30 min goes on where it stopped."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if (recipe_key(data["recipe"]), data["variant"]) != (recipe_key(sitting.recipe), sitting.variant):
        raise SystemExit(f"{path}: a sitting of {data['recipe']} ({data['variant']}), not of this recipe and variant")
    seen = {(run.path, run.wall_s) for run in sitting.runs}
    for run in data["runs"]:
        if (run["path"], run["wall_s"]) in seen:  # the same process's record: a file that continued another
            raise SystemExit(
                f"{path}: comparison {run['round']} ({one_line(run['path'])}) is pooled already; a sitting's file "
                "holds those it continued from: pass the last file of such a chain alone"
            )
    for bare in data["bares"]:
        bare.pop("speedup", None)
        sitting.bares.append(Bare(**bare))
    for run in data["runs"]:
        run.pop("speedup", None)
        graphs = [
            GraphSide(**{**g, "more_seeds": [Seed(**seed) for seed in g.get("more_seeds", [])]})
            for g in run.pop("graphs")
        ]
        sitting.runs.append(Run(**run, graphs=graphs))
    this = {"path": str(path), "device": data["device"], "comparisons": len(data["runs"])}
    sitting.continued_from += [*data.get("continued_from", []), this]
    sitting.excluded += data.get("excluded", [])


def reread(paths: list[Path], tolerance_pct: float, tolerance_pp: float, pool: bool = True) -> Sitting:
    """Earlier sittings' `--json` files (one recipe and variant), their comparisons in order, pooled anew: today's
    statistics on yesterday's device time (`pool=False`: read only, as `first_round.py` does)."""
    first = json.loads(paths[0].read_text(encoding="utf-8"))
    sitting = Sitting(
        recipe=first["recipe"],
        variant=first["variant"],
        work=first["work"],
        tolerance_pct=tolerance_pct,
        tolerance_pp=tolerance_pp,
        bundle=first.get("bundle", ""),
        device=first.get("device", ""),
        warmup=first.get("warmup", {}),
        window_cpu=first.get("window_cpu"),
    )
    for path in paths:
        continue_from(sitting, path)
    if pool:
        update_pooled(sitting, tolerance_pct, tolerance_pp)
    return sitting


def _slow_host(plan: Plan, bare: Bare) -> float | None:
    """The bare loop's median host probe when it reads over `--max-host-probe-ms` (the comparison ran on a host
    slower than normal: left out of the pools, and the sitting stops), else None."""
    probe = statistics.median(bare.host_probe_ms) if bare.host_probe_ms else None
    return (
        probe if plan.max_host_probe_ms is not None and probe is not None and probe > plan.max_host_probe_ms else None
    )


def seeds_per_graph(warm: Run, asked: int) -> int:
    """`--seeds`, at most one per timing round of reportgen's (the warm-up's bundle tells how many it makes)."""
    rounds = min((len(g.unprofiled_reps_ms) for g in warm.graphs), default=0)
    return 0 if asked == 0 else max(1, min(asked, rounds))


def _group_policy(warm: Run, swapped: bool, seeds: int = 1, seeded: Collection[int] | None = None) -> Turns:
    """One comparison's turns: step pairs alternate bare/reportgen (reportgen first when `swapped`); each of a graph's `-p` timings goes back to back
    with the timing of the same number in reportgen's round of that `-p` (`seed_role`), and the first `-p`'s
    profile with reportgen's profile. Only the graphs in `seeded` (default: all) have a `-p`."""
    pairs: list[tuple[Window, Window]] = []
    for g in _seeded(warm, seeds, seeded):  # no `-p`: nothing to pair (a pair waits for its partner)
        # each of the `-p`'s timings with reportgen's round's timing of the same number (both harnesses
        # time `repeat` x `times` calls; a bundle from before the per-timing windows had one window a round)
        repeat = len(g.unprofiled_reps_ms[0]) if g.unprofiled_reps_ms else 0
        for k in range(repeat):
            for round_ in range(seeds):  # the rounds' k-th timings come in order: so do their pairs
                seed = (seed_role(round_), seed_timing_window(g.graph, k))
                pairs.append((seed, ("reportgen", window.graph_timing_window(g.graph, k))))
        if not repeat:
            pairs.append(
                (("seed", seed_timing_window(g.graph, None)), ("reportgen", window.graph_timing_window(g.graph, None)))
            )
        pairs.append((("seed", seed_profile_window(g.graph)), ("reportgen", window.graph_profile_window(g.graph))))
    # A -p asks for its windows long before reportgen reaches that graph (its compile comes first, and a round's
    # runs start together): a partner that ends unseen retires, so waiting as long as a run may take is safe.
    policy = Turns(("bare", "reportgen"), alternate=(window.STEPS_WINDOW,), pairs=pairs, partner_wait_s=PARTNER_WAIT_S)
    if swapped:
        policy.swap()  # reportgen's measurements first: its step blocks, and its timings before the fresh -p's
    return policy


def _seeded(warm: Run, seeds: int, graphs: Collection[int] | None) -> list[GraphSide]:
    """The warm-up's graphs that get `seeds` fresh `-p` processes a comparison: `graphs` (None: all)."""
    return [g for g in warm.graphs if seeds and (graphs is None or g.graph in graphs)]


def graphs_to_seed(plan: Plan, sitting: Sitting, warm: Run) -> list[int] | None:
    """With `--until-decided`, the graphs whose busy figure the pool has not decided yet (a decided one's `-p`
    would cost a round minutes and GPU memory for nothing the verdict needs); else None: every graph."""
    if plan.until_decided is None:
        return None
    return [g.graph for g in warm.graphs if not decided(sitting, busy_key(g.graph))]


def _start_group(
    plan: Plan,
    coordinator: Coordinator,
    group: str,
    number: int,
    warm: Run,
    env: dict[str, str],
    seeds: int,
    seeded: Collection[int] | None = None,
) -> list[Started]:
    """Comparison `number`'s processes: reportgen (or bare loop A), its bare loop and a `-p` per graph."""
    logs, results = plan.work / "logs", plan.work / "results" / group

    def role(name: str, base: dict[str, str]) -> dict[str, str]:
        return {**base, window.SOCKET_VARIABLE: coordinator.path, window.ROLE_VARIABLE: Grouped.role(name, group)}

    bare_command = [sys.executable, __file__, str(plan.recipe), "--bare"]
    bare_command += ["--variant", plan.variant] if plan.variant else []
    first = (
        start_child("reportgen", bare_command, role("reportgen", env), logs / f"bare-a-{number}.log")
        if plan.aa  # A/A: a second bare loop in reportgen's place, the floor of what rounds can show
        else start_child(
            "reportgen",
            _reportgen_command(plan, results),
            role("reportgen", dict(os.environ)),
            logs / f"reportgen-{number}.log",
        )
    )
    started = [first, start_child("bare", bare_command, role("bare", env), logs / f"bare-{number}.log")]
    for side in _seeded(warm, seeds, seeded):
        assert side.seed_module is not None
        wrapper = bundle_file(Path(warm.path), side.seed_module, MAX_MODULE_BYTES)  # inside the bundle, a plain file
        command = [sys.executable, __file__, str(plan.recipe), "--seed", str(wrapper)]
        for round_ in range(seeds):
            what = seed_process_name(side.graph, round_)
            log = logs / f"{what.replace(' ', f'-{number}-')}.log"  # seed-<comparison>-<graph>[#<round>].log
            started.append(start_child(what, [*command, str(side.graph)], role(seed_role(round_), env), log))
    for child in started:
        coordinator.register(child.proc.pid, f"{child.what}@{group}")
    return started


def _round(plan: Plan, sitting: Sitting, warm: Run, env: dict[str, str]) -> None:
    """One round: `plan.groups` comparisons at once (each reportgen, its bare loop and a `-p` per graph), every
    measurement in a window of its own (the others paused), each comparison's windows in turns."""
    first = len(sitting.runs) + len(sitting.excluded) + 1
    numbers = list(range(first, first + plan.groups))
    seeds = 0 if plan.aa else seeds_per_graph(warm, plan.seeds)
    seeded = graphs_to_seed(plan, sitting, warm)
    if seeds and seeded is not None and len(seeded) < len(warm.graphs):
        print(f"this round's -p: graphs {seeded} (the others' busy is decided)", flush=True)
    groups = {str(n): _group_policy(warm, swapped=n % 2 == 0, seeds=seeds, seeded=seeded) for n in numbers}
    log = plan.work / "logs" / f"windows-{first}.log"
    with Coordinator(Grouped(groups), settle_s=plan.settle_s, log_path=log, cpu=plan.window_cpu) as coordinator:
        started = {n: _start_group(plan, coordinator, str(n), n, warm, env, seeds, seeded) for n in numbers}
        wait_all([child for children in started.values() for child in children], plan.round_timeout_s)
        windows, cpus = list(coordinator.granted), list(coordinator.foreign)
    for number in numbers:
        _collect(plan, sitting, number, started[number], windows, seeds, cpus)


def _collect(
    plan: Plan,
    sitting: Sitting,
    number: int,
    started: list[Started],
    windows: list[tuple[str, str, float, float]],
    seeds: int,
    cpus: list[WindowCpu],
) -> None:
    """Comparison `number`'s figures into the sitting (its reportgen run and bare loop, its `-p` runs); `cpus`:
    what each of `windows` let others have (the coordinator's `foreign`, in the same order)."""
    finished = {child.what: child.result() for child in started}
    code, output, wall_s = finished["reportgen"]
    if code != 0:
        raise failed(f"reportgen run (comparison {number})", code, output, started[0].log)
    suffix = Grouped.SEPARATOR + str(number)
    mine = [(r[: -len(suffix)], w, o, c) for r, w, o, c in windows if r.endswith(suffix)]
    mine_cpus = [cpu for (r, _, _, _), cpu in zip(windows, cpus, strict=False) if r.endswith(suffix)]
    if plan.aa:
        other = bare_result(output)
        run = Run(
            round=number,
            path="(bare loop A)",
            wall_s=wall_s,
            eager_ms=float(other["eager_ms"]),  # type: ignore[arg-type]
            compiled_ms=float(other["compiled_ms"]),  # type: ignore[arg-type]
            host_probe_ms=list(other["host_probe_ms"]),  # type: ignore[call-overload]
            compile_s=None,
            inductor_cache="kept-warm",
            eager_samples_ms=list(other["eager_samples_ms"]),  # type: ignore[call-overload]
            compiled_samples_ms=list(other["compiled_samples_ms"]),  # type: ignore[call-overload]
        )
    else:
        run = read_run(_bundle_dir(plan, plan.work / "results" / str(number)), number, wall_s)
    run.windows, run.sitting, run.placement = _window_summary(mine, mine_cpus), plan.tag, plan.placement
    code, output, bare_wall_s = finished["bare"]
    if code != 0:
        raise failed(f"bare loop (comparison {number})", code, output, started[1].log)
    bare = Bare(index=number, wall_s=bare_wall_s, **bare_result(output))  # type: ignore[arg-type]
    for side in run.graphs:
        for round_ in range(seeds):  # the `-p` processes `_start_group` started
            if (seed := finished.get(seed_process_name(side.graph, round_))) is not None:
                seed_result(side, round_, *seed)
    report_failed_seeds(number, run.graphs, {child.what: child.log for child in started})
    sitting.device = sitting.device or bare.device
    if (probe := _slow_host(plan, bare)) is not None:
        sitting.excluded.append({"comparison": number, "bare_host_probe_ms": probe, "run": asdict(run)})
        print(f"comparison {number} left out: its bare loop's host probe read {probe:.2f} ms", flush=True)
        return
    sitting.runs.append(run)
    sitting.bares.append(bare)
    print(
        f"comparison {number}: reportgen {wall_s:.1f} s, eager {run.eager_ms:.3f} / bare {bare.eager_ms:.3f} ms, "
        f"compiled {run.compiled_ms:.3f} / bare {bare.compiled_ms:.3f} ms; "
        + "; ".join(f"graph {g.graph} busy {fmt(g.busy_percent)} / -p {fmt(g.seed_busy_percent)} %" for g in run.graphs)
        + f"; windows {run.windows}",
        flush=True,
    )
    update_pooled(sitting, plan.tolerance_pct, plan.tolerance_pp)
    dump_sitting(sitting, plan.json_out)


def _window_summary(
    windows: list[tuple[str, str, float, float]], cpus: list[WindowCpu] | None = None
) -> dict[str, object]:
    """How the round's windows went: count per role, the steps' order, the gap inside each -p/graph pair, and per
    role what its step windows let others have (`steps_cpu`; `cpus` in the order of `windows`)."""
    counts: dict[str, int] = {}
    for role_, _, _, _ in windows:
        counts[role_] = counts.get(role_, 0) + 1
    steps = "".join("b" if r == "bare" else "r" for r, what, _, _ in windows if what == window.STEPS_WINDOW)

    def measured(what: str) -> tuple[str, ...] | None:  # a `-p`'s or reportgen's graph window: (graph, what, k)
        words = what.split()
        if words[0] == "seed" and len(words) > 1:
            return words[1], *(words[2:] or ["profile"])
        return tuple(words[1:]) if words[0] == "graph" and len(words) >= 3 else None

    gaps = {}
    for i in range(1, len(windows)):
        (r0, w0, _, closed), (r1, w1, opened, _) = windows[i - 1], windows[i]
        if r0 != r1 and measured(w0) is not None and measured(w0) == measured(w1):
            gaps[f"{r0}: {w0} -> {r1}: {w1}"] = round(opened - closed, 3)  # (a -p of each round: a role each)
    summary: dict[str, object] = {"count": counts, "steps_order": steps, "pair_gaps_s": gaps}
    return summary | ({"steps_cpu": steps_cpu(windows, cpus)} if cpus else {})


STEPS_CPU = ("open_s", "others_s", "runs_s", "stolen_s", "holder_s", "line_s")
"""The `WindowCpu` fields `steps_cpu` sums."""


def steps_cpu(windows: list[tuple[str, str, float, float]], cpus: list[WindowCpu]) -> dict[str, dict[str, float]]:
    """Per role, its step windows summed: how many, seconds open, and the CPU seconds the rest of the host used
    meanwhile (`others_s`), of which the coordinator's paused runs' trees (`runs_s`: 0 when pausing held), the
    seconds stolen, the holder's own process (`holder_s`, all threads) and the rest of its line (`line_s`: its
    launcher, compile workers, graph process). A `-p` that kept running beside reportgen's steps would show in
    `runs_s`, a worker of reportgen's own in `line_s`, a thread beside its timed one as `holder_s` over `open_s`."""
    out: dict[str, dict[str, float]] = {}
    for (role_, what, _, _), cpu in zip(windows, cpus, strict=False):
        if what != window.STEPS_WINDOW:
            continue
        row = out.setdefault(role_, {"windows": 0} | dict.fromkeys(STEPS_CPU, 0.0))
        row["windows"] += 1
        for key in STEPS_CPU:
            row[key] = round(row[key] + getattr(cpu, key), 3)
    return out


def _check_host_first(max_ms: float | None, seconds: float = 3.0) -> None:
    """Stop before the warm-up (4 min of mixnet_l on an H200) when this host is already slow: the run's host probe
    (`host.host_probe`, no torch), here, every 10 ms for `seconds`; its median over `max_ms` ends the sitting."""
    if max_ms is None:
        return
    from reportgen.run.host import host_probe

    probes: list[float] = []
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        probes.append(host_probe() * 1e3)
        time.sleep(0.01)
    median = statistics.median(probes)
    print(
        f"host probe before the warm-up: median {median:.2f} ms over {len(probes)} ({min(probes):.2f}-{max(probes):.2f})"
    )
    if median > max_ms:
        raise SystemExit(
            f"this host is too slow for a sitting: its host probe read {median:.2f} ms before the warm-up, over "
            f"--max-host-probe-ms {max_ms:g}; nothing was run."
        )


def compare(plan: Plan) -> Sitting:
    """Warm-up, then rounds until done; prints as it goes."""
    sitting = Sitting(
        recipe=str(plan.recipe),
        variant=plan.variant,
        work=str(plan.work),
        tolerance_pct=plan.tolerance_pct,
        tolerance_pp=plan.tolerance_pp,
        window_cpu=plan.window_cpu,
    )
    logs = plan.work / "logs"
    pinned = "not pinned" if plan.window_cpu is None else f"on CPU {plan.window_cpu}"
    print(f"work directory {plan.work}; logs in {logs}; windows {pinned}", flush=True)
    warm_dir = _bundle_dir(plan, plan.work / "warmup")
    if not (warm_dir / MANIFEST_FILE).is_file():
        _check_host_first(plan.max_host_probe_ms)
        warm_log = logs / "warmup.log"
        warming = start_child("warm-up", _reportgen_command(plan, plan.work / "warmup"), dict(os.environ), warm_log)
        wait_all([warming], plan.round_timeout_s)
        code, output, warm_s = warming.result()
        if code != 0:
            raise failed("warm-up reportgen run", code, output, warm_log)
    else:
        warm_s = 0.0  # `--warm-up-only` made it earlier (e.g. beside another recipe's warm-up)
    warm = read_run(warm_dir, 0, warm_s)
    sitting.bundle = warm_dir.name
    sitting.warmup = {"path": warm.path, "wall_s": warm_s, "compile_s": warm.compile_s}
    sitting.warmup["inductor_cache"] = warm.inductor_cache
    probe = statistics.median(warm.host_probe_ms) if warm.host_probe_ms else None
    sitting.warmup["host_probe_ms"] = probe
    shown = "no host probe" if probe is None else f"host probe {probe:.2f} ms"
    sitting.warmup["stages_s"] = warm.stages_s
    print(f"warm-up reportgen run: {warm_s:.1f} s (cache {warm.inductor_cache}, {shown})", flush=True)
    print(f"warm-up reportgen run's stages: {stages_line(warm.stages_s)}", flush=True)
    env = child_env(variant_recipe(plan.recipe, plan.variant), plan.work / "cache" / warm_dir.name)
    warm_up_bare(plan, sitting, env)  # `--warm-up-only` too: a cache carried elsewhere holds both sides' graphs
    if plan.rounds == 0:
        return sitting
    made_here = warm_s > 0  # (one made by `--warm-up-only` may have run beside another warm-up: not alone)
    if made_here and plan.max_host_probe_ms is not None and probe is not None and probe > plan.max_host_probe_ms:
        raise SystemExit(
            f"this host is too slow for a sitting: the warm-up's host probe read {probe:.2f} ms, over "
            f"--max-host-probe-ms {plan.max_host_probe_ms:g}; nothing more was run. (On the lent H200s: 0.78-0.97 "
            "ms on a normal host; 1.74-1.88 ms on one where mixnet_l's steps took twice as long and 6 comparisons "
            "decided no figure.)"
        )
    if plan.continue_from is not None:
        continue_from(sitting, plan.continue_from)
        update_pooled(sitting, plan.tolerance_pct, plan.tolerance_pp)
        print(f"continuing {plan.continue_from}: {len(sitting.runs)} comparisons", flush=True)
    excluded = len(sitting.excluded)
    for _ in range(plan.rounds):
        if plan.deadline.passed():
            break
        _round(plan, sitting, warm, env)
        if len(sitting.excluded) > excluded:
            break
    busy = plan.seeds > 0 and not plan.aa  # without a `-p`, no round can decide a busy figure
    while (
        not plan.deadline.passed()
        and plan.until_decided is not None
        and len(sitting.runs) < plan.until_decided
        and (pending := undecided(sitting, busy=busy))
        and len(sitting.excluded) == excluded
    ):
        print(f"undecided: {', '.join(pending)}; comparison {len(sitting.runs) + 1} on", flush=True)
        _round(plan, sitting, warm, env)
    if len(sitting.excluded) > excluded:
        print("the host slowed down during the sitting: it stops here (left-out comparisons are in --json)")
    if sitting.runs:
        report(sitting)
    return sitting


def stages_line(stages_s: dict[str, float]) -> str:
    """A run child's seconds per stage on one line, e.g. "compile 6.4 s, timing 21.0 s" (or why there are none)."""
    return ", ".join(f"{one_line(stage)} {seconds:.1f} s" for stage, seconds in stages_s.items()) or "not recorded"


def warm_up_bare(plan: Plan, sitting: Sitting, env: dict[str, str]) -> None:
    """One untimed bare loop, alone, before the rounds: its compile fills the cache entries of the bare loop's own
    graphs. reportgen's run records provenance, which changes Inductor's FX-graph-cache key, so its warm-up leaves
    them empty, and every first round's bare loops compiled in the process they then timed while reportgen read its
    graphs from the cache: resnet50's 57 first-round comparisons (H200) read compiled -2.00 % (SE 0.40), the 30
    later ones +0.64 % (SE 0.37). A fresh compile leaves its process a larger heap (quickstart on a CPU: 499k
    objects the collector tracks against 407k after a cache hit)."""
    command = [sys.executable, __file__, str(plan.recipe), "--bare", "--warm-up-only"]
    command += ["--variant", plan.variant] if plan.variant else []
    log = plan.work / "logs" / "bare-warm-up.log"
    child = start_child("bare warm-up", command, env, log)
    wait_all([child], plan.round_timeout_s)
    code, output, wall_s = child.result()
    if code != 0:
        raise failed("bare loop warm-up", code, output, log)
    cache = bare_result(output).get("cache", {})
    sitting.warmup.update(bare_wall_s=wall_s, bare_cache=cache)
    shown = ", ".join(f"{key} {n}" for key, n in cache.items() if n) or "no counters"
    print(f"warm-up bare loop: {wall_s:.1f} s ({shown})", flush=True)


def _window_cpu(asked: int | None) -> int | None:
    """`--window-cpu`: unset, the last CPU this process may use; -1, none; else that CPU (one it may use)."""
    if asked == -1 or not hasattr(os, "sched_getaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    if asked is None:
        return allowed[-1]
    if asked not in allowed:
        raise SystemExit(f"--window-cpu {asked}: this process may use CPUs {allowed} only")
    return asked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipe", type=Path, nargs="?")
    parser.add_argument("--variant")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, help=f"reportgen runs (default {DEFAULT_ROUNDS})")
    parser.add_argument(
        "--until-decided", type=int, metavar="MAX", help="add rounds, up to MAX in all, while a figure is undecided"
    )
    parser.add_argument("--tolerance-pct", type=float, default=TOLERANCE_PCT, help="step times and speedup, ±%%")
    parser.add_argument("--tolerance-pp", type=float, default=TOLERANCE_PP, help="busy %% and shares, ±pp")
    parser.add_argument("--work", type=Path, help="work directory (default: a new temporary one)")
    parser.add_argument("--json", type=Path, help="write every number here (rewritten after each process)")
    parser.add_argument("--settle-s", type=float, default=0.05, help="after pausing the others, wait this long")
    parser.add_argument("--aa", action="store_true", help="A/A: a second bare loop in reportgen's place")
    parser.add_argument(
        "--window-cpu",
        type=int,
        metavar="K",
        help="every process's windows run on CPU K (default: the last one this process may use; -1: not pinned)",
    )
    parser.add_argument("--groups", type=int, default=1, help="comparisons started together in a round (default 1)")
    parser.add_argument(
        "--seeds",
        type=int,
        default=1,
        help="fresh -p processes per graph, each paired timing by timing with one of reportgen's timing rounds "
        "(default 1; at most its rounds, 3; 0: no -p, step figures only)",
    )
    parser.add_argument("--steps", type=int, help="both sides time this many block pairs (default: the recipe's)")
    parser.add_argument("--warm-up-only", action="store_true", help="fill the cache with the warm-up run, then stop")
    parser.add_argument(
        "--max-host-probe-ms",
        type=float,
        help="a slow host: stop after the warm-up when its host probe reads more, and when a comparison's bare loop "
        "does (that comparison is left out of the pools)",
    )
    parser.add_argument(
        "--continue-from", type=Path, metavar="JSON", help="an earlier sitting's --json: its comparisons come first"
    )
    parser.add_argument("--stop-after-s", type=float, help="start no round after this many seconds (warm-up included)")
    parser.add_argument(
        "--report",
        type=Path,
        nargs="+",
        metavar="JSON",
        help="no run: pool these sittings' --json and print the tables",
    )
    parser.add_argument("--bare", action="store_true", help=argparse.SUPPRESS)  # the fresh bare-loop process
    parser.add_argument("--seed", nargs=2, metavar=("WRAPPER", "GRAPH"), help=argparse.SUPPRESS)  # a fresh -p
    args = parser.parse_args()
    if args.seed:
        seed_process(Path(args.seed[0]), int(args.seed[1]))
        return 0
    if args.bare:
        print(json.dumps(bare_loop(args.recipe.resolve(), args.variant, args.warm_up_only)))
        return 0
    if args.report:
        sitting = reread(args.report, args.tolerance_pct, args.tolerance_pp)
        report(sitting)
        dump_sitting(sitting, args.json)  # one file to `--continue-from`
        return 0
    if args.recipe is None:
        parser.error("a recipe is needed (or --report JSON...)")
    if args.groups < 1 or args.seeds < 0:
        parser.error("--groups must be at least 1 and --seeds at least 0")
    if args.rounds * args.groups < MIN_ROUNDS and not args.warm_up_only:
        parser.error(f"--rounds x --groups must be at least {MIN_ROUNDS} (an interval needs two differences)")
    if args.until_decided is not None and args.until_decided < args.rounds * args.groups:
        parser.error("--until-decided MAX (comparisons) must be at least --rounds x --groups")
    work = (args.work or Path(tempfile.mkdtemp(prefix="fidelity-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    with recipe_with_steps(args.recipe.resolve(), args.steps) as recipe:
        return _sitting(args, recipe, work)


@contextlib.contextmanager
def recipe_with_steps(recipe: Path, steps: int | None) -> Iterator[Path]:
    """`recipe`, or a copy beside it (its relative references unchanged) whose `profile.steps` is `steps`.

    The copy's name holds this process's id: two sittings in one tree (one per GPU) each remove only their own
    (session 53 lost a round when one sitting's exit removed the copy the other still read).
    """
    if steps is None:
        yield recipe
        return
    import yaml

    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    data.setdefault("profile", {})["steps"] = steps
    copy = recipe.with_name(f".fidelity-{recipe.stem}-{steps}-steps-{os.getpid()}{recipe.suffix}")
    copy.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    try:
        yield copy
    finally:
        copy.unlink(missing_ok=True)


def _sitting(args: argparse.Namespace, recipe: Path, work: Path) -> int:
    plan = Plan(
        recipe=recipe,
        variant=args.variant,
        work=work,
        rounds=args.rounds,
        until_decided=args.until_decided,
        tolerance_pct=args.tolerance_pct,
        tolerance_pp=args.tolerance_pp,
        json_out=args.json.resolve() if args.json else None,
        settle_s=args.settle_s,
        aa=args.aa,
        window_cpu=_window_cpu(args.window_cpu),
        groups=args.groups,
        seeds=args.seeds,
        steps=args.steps,
        max_host_probe_ms=args.max_host_probe_ms,
        continue_from=args.continue_from.resolve() if args.continue_from else None,
        deadline=Deadline(args.stop_after_s),
    )
    if args.warm_up_only:
        plan.rounds = 0
    compare(plan)
    return 0


if __name__ == "__main__":
    sys.exit(main())
