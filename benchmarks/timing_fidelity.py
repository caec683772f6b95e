"""Timing fidelity: reportgen's numbers against a bare timing loop and `python <wrapper>.py -p`, interleaved.

    python benchmarks/timing_fidelity.py RECIPE [--variant NAME] [--rounds 5] [--groups K] [--steps N]
        [--until-decided MAX] [--tolerance-pct 3] [--tolerance-pp 3] [--work DIR] [--json OUT] [--warm-up-only]
        [--max-host-probe-ms MS] [--continue-from JSON] [--window-cpu K] [--seeds N]
    python benchmarks/timing_fidelity.py --report JSON... [--json OUT] (earlier sittings pooled; runs nothing)

A lent VM's CPU speed moves within a fraction of a second (a 1 ms probe reads 0.9 ms, then 2.6 ms 0.3 s later),
so one sitting's single pair proves nothing, and neither process may measure while another works:

0. one untimed `reportgen run` (`DIR/warmup`) fills the kept Inductor cache `DIR/cache` (skipped when that
   bundle is there: `--warm-up-only` makes it alone, e.g. beside another recipe's warm-up);
1. each round starts `--groups` comparisons at once; a comparison is a `reportgen run` (into `DIR/results/<n>`),
   a bare loop and one fresh `python <wrapper>.py -p` per compiled graph of the warm-up's bundle. Every
   measurement of every process runs in a timed window of the round's coordinator (`reportgen.run.window_host`:
   one window at a time, every other process stopped with SIGSTOP meanwhile); within a comparison the bare
   loop's and reportgen's step blocks take strict turns, and each `-p`'s timing and profile go back to back with
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
is printed beside it. A graph's busy is judged timing by timing (`GraphSide.paired_busy_pp`: the `-p`'s k-th
timing and reportgen's first round's k-th took turns, so their difference cancels the host's state; every pair of
every comparison pooled). `--seeds N` starts N fresh `-p` processes per graph and comparison (roles `seed`,
`seed#1`, …), the r-th paired timing by timing with reportgen's r-th timing round (it makes 3): N times the pairs
for a few seconds of windows each, where a comparison costs minutes (mixnet_l's forward: 9 pairs a comparison).
`--until-decided MAX` adds rounds up to MAX comparisons while a step figure or a graph's
busy is undecided. `--json OUT` holds every number, rewritten after each comparison; `--continue-from JSON`
puts an earlier sitting's comparisons first (a lent machine goes back after 30 min held). With
`--max-host-probe-ms MS` a sitting stops when the host is slower than normal: before the warm-up when a 3 s probe
here reads over MS (a slow lent machine cost 4 min of warm-up to find out), after it when the warm-up's probe
does, and after a round where a comparison's bare loop did (that comparison is left out of the pools).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import runpy
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tabulate import tabulate

from reportgen.bundle import MANIFEST_FILE, SEED_BUCKETS, load_bundle
from reportgen.escape import one_line
from reportgen.formats import parse_seed_output
from reportgen.pipeline import select_variant, variant_recipe
from reportgen.recipe import load_recipe
from reportgen.run import child_env, inductor, window
from reportgen.run.window_host import Coordinator, Grouped, Turns
from reportgen.run.window_policy import Window

__all__: list[str] = []

DEFAULT_ROUNDS = 5
"""Rounds by default: issue 27 asks for at least 5 interleaved rounds."""

MIN_ROUNDS = 2
"""A Student-t interval needs two differences at least (the signed-rank interval at 95 %: six)."""

TOLERANCE_PCT = 3.0
"""Step times and speedup: reportgen within ±3 % of the bare loop (issue 27's "done when")."""

TOLERANCE_PP = 3.0
"""Busy % and category shares: reportgen within ±3 percentage points of a fresh `-p` (issue 27's "done when")."""

CONFIDENCE = 0.95
"""The pooled intervals' coverage."""

_T_975: tuple[float, ...] = (
    *(12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228),
    *(2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086),
    *(2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042),
)
"""t_{0.975, df} for df = 1..30 (standard tables); beyond, `t_975`'s Cornish-Fisher expansion (error < 0.001)."""

_Z_975 = 1.959964
"""The normal distribution's 97.5 % quantile."""

LOG_TAIL_CHARS = 3000
"""How much of a failed child's output to show."""

PARTNER_WAIT_S = 3600.0
"""How long a paired window waits for its partner before going alone (a run's own timeout is shorter)."""

SEED_REPS_PREFIX = "fidelity-seed-reps: "
"""A `-p` process prints its timings (JSON, ms per call) after this, for `_seed_result`."""

STEP_FIGURES = ("eager_ms", "compiled_ms", "speedup")

PAIRED_FROM = 1
"""The first timing pair compared timing by timing (a `-p`'s first timing holds its cold first call: 394-565 ms
against 13-22 for mixnet_l's forward on an H200)."""

ICC_INDEPENDENT = 0.1
"""Below this intraclass correlation a comparison's paired differences count as independent draws (the host's
state, the noise they share, flips every second or so; a process's own offset would raise it)."""

PAIRED = " busy paired"
"""Suffix of a graph's pooled busy difference timing by timing (`GraphSide.paired_busy_pp`, every pair pooled)."""

# --- the bare loop (a fresh process) -------------------------------------------------------------------------------


def bare_loop(recipe_path: Path, variant: str | None) -> dict[str, object]:
    """In this (fresh) process: time eager and compiled like a user's script. Medians and samples in ms."""
    import torch

    from reportgen.run.host import host_probe
    from reportgen.run.workload import build_workload, compile_model, resolve_device

    window.connect()  # the coordinator pauses this process during reportgen's windows from now on
    recipe = variant_recipe(recipe_path, variant)
    device = resolve_device(recipe.device)
    recipe = recipe.for_device(device)
    work = build_workload(recipe, str(recipe_path.parent), device)
    compiled = compile_model(recipe, work.model)  # the recipe's compile options, nothing else

    def sync() -> None:
        if device == "cuda":
            torch.cuda.synchronize()

    def block(fn: Callable[..., object], steps: int) -> float:
        sync()
        start = time.perf_counter()
        for _ in range(steps):
            work.step(fn)
        sync()
        return (time.perf_counter() - start) / steps * 1e3

    profile = recipe.profile
    for fn in (work.model, compiled):  # first call (the compile, from the warm cache), then warm-up steps
        for _ in range(max(profile.warmup, 1)):
            block(fn, 1)
    eager, comp, probe = [], [], []
    for _ in range(profile.steps):
        with window.timed_window(
            window.STEPS_WINDOW
        ):  # takes turns with reportgen's pairs of blocks, as the run's are held
            probe.append(host_probe() * 1e3)  # the host's CPU speed, outside the timed blocks (as the run does)
            eager.append(block(work.model, profile.block_steps))
            comp.append(block(compiled, profile.block_steps))
    return {
        "device": device,
        "eager_ms": statistics.median(eager),
        "compiled_ms": statistics.median(comp),
        "eager_samples_ms": eager,
        "compiled_samples_ms": comp,
        "host_probe_ms": probe,
    }


# --- records -------------------------------------------------------------------------------------------------------


@dataclass
class Bare:
    """One bare-loop process: medians (ms), their samples and the host probe before each block pair."""

    index: int
    wall_s: float
    device: str
    eager_ms: float
    compiled_ms: float
    eager_samples_ms: list[float]
    compiled_samples_ms: list[float]
    host_probe_ms: list[float]

    @property
    def speedup(self) -> float:
        return self.eager_ms / self.compiled_ms


@dataclass
class Seed:
    """One more fresh `-p` of a graph (`--seeds N`): its timings took turns with reportgen's round `round`'s."""

    round: int
    wall_s: float | None = None
    exit_code: int | None = None
    busy_percent: float | None = None
    wall_ms: float | None = None
    reps_ms: list[float] = field(default_factory=list)
    error: str | None = None
    """The end of its output when it exited non-zero (the lent machine's logs go back with it)."""

    def device_pp(self) -> float | None:
        """Device time per call x 100 (busy % x wall ms), or None when it measured nothing."""
        return self.busy_percent * self.wall_ms if self.busy_percent is not None and self.wall_ms else None


@dataclass
class GraphSide:
    """One compiled graph as a bundle reports it (`-p` definition) and as a fresh `-p` that round measured it."""

    graph: int
    label: str = ""
    busy_percent: float | None = None
    categories_percent: dict[str, float] = field(default_factory=dict)
    unprofiled_wall_ms: float | None = None
    unprofiled_rounds_ms: list[float] = field(default_factory=list)
    """Every timing round of the graph (the first one is paired with the `-p`'s timing)."""
    unprofiled_reps_ms: list[list[float]] = field(default_factory=list)
    """Each round's `repeat` timings, ms per call (the first round's k-th took turns with the `-p`'s k-th)."""
    first_wall_ms: float | None = None
    seed_module: str | None = None
    seed_wall_s: float | None = None
    seed_exit_code: int | None = None
    seed_busy_percent: float | None = None
    seed_categories_percent: dict[str, float] = field(default_factory=dict)
    seed_wall_ms: float | None = None
    seed_reps_ms: list[float] = field(default_factory=list)
    """The `-p`'s `repeat` timings, ms per call (its `seed_wall_ms` is their torch.median)."""
    seed_error: str | None = None
    """The end of the `-p`'s output when it exited non-zero."""
    more_seeds: list[Seed] = field(default_factory=list)
    """`--seeds N`: the graph's other `-p` processes, one per later round of reportgen's (round 1, 2, ...)."""

    @property
    def paired_reps_percent(self) -> float | None:
        """Median over k of reportgen's first-round k-th timing / the `-p`'s k-th - 1 (%): the two harnesses on
        the same moments of the host (each pair took turns), so a gap here is the method's, not the host's."""
        ours = self.unprofiled_reps_ms[0] if self.unprofiled_reps_ms else []
        pairs = [100 * (a / b - 1) for a, b in zip(ours, self.seed_reps_ms, strict=False) if b > 0]
        return statistics.median(pairs) if pairs else None

    @property
    def seeds(self) -> list[Seed]:
        """Every `-p` of the graph in this comparison: the first (its fields above, round 0), then `more_seeds`."""
        first = Seed(0, self.seed_wall_s, self.seed_exit_code, self.seed_busy_percent, self.seed_wall_ms)
        return [dataclasses.replace(first, reps_ms=self.seed_reps_ms, error=self.seed_error), *self.more_seeds]

    @property
    def paired_busy_pp(self) -> list[float]:
        """Busy % from reportgen's round-r k-th timing minus busy % from its `-p`'s k-th, for k >= 1 (the `-p`,
        round 0; `more_seeds`, their rounds: each pair took turns, on one CPU when the windows are pinned; a
        `-p`'s first timing holds its cold first call). Each side divides its own device time per call (busy x
        wall) by that timing."""
        if self.busy_percent is None or not self.unprofiled_wall_ms:
            return []
        device = self.busy_percent * self.unprofiled_wall_ms  # device ms per call x 100
        out: list[float] = []
        for seed in self.seeds:
            seed_device = seed.device_pp()
            if seed_device is None or seed.round >= len(self.unprofiled_reps_ms):
                continue
            pairs = list(zip(self.unprofiled_reps_ms[seed.round], seed.reps_ms, strict=False))[PAIRED_FROM:]
            out += [device / a - seed_device / b for a, b in pairs if a > 0 and b > 0]
        return out


@dataclass
class Run:
    """One timed `reportgen run`: where its bundle was read, where it was kept, its figures and its graphs'."""

    round: int
    path: str
    wall_s: float
    eager_ms: float
    compiled_ms: float
    host_probe_ms: list[float]
    compile_s: float | None
    inductor_cache: str
    graphs: list[GraphSide] = field(default_factory=list)
    windows: dict[str, object] = field(default_factory=dict)

    @property
    def speedup(self) -> float:
        return self.eager_ms / self.compiled_ms


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


@dataclass
class Sitting:
    """Everything measured, in the order it was measured (the `--json` file)."""

    recipe: str
    variant: str | None
    work: str
    tolerance_pct: float
    tolerance_pp: float
    bundle: str = ""
    device: str = ""
    warmup: dict[str, object] = field(default_factory=dict)
    bares: list[Bare] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    pooled: dict[str, Pooled] = field(default_factory=dict)
    bare_drift_percent: dict[str, float] = field(default_factory=dict)
    continued_from: list[dict[str, object]] = field(default_factory=list)
    """Earlier sittings whose comparisons come first in `runs`/`bares` (`--continue-from`): path, device, count."""
    excluded: list[dict[str, object]] = field(default_factory=list)
    """Comparisons left out of the pools: the host was not normal while they ran (`--max-host-probe-ms`)."""
    window_cpu: int | None = None
    """The CPU every window ran on (None: not pinned)."""


# --- statistics ----------------------------------------------------------------------------------------------------


def t_975(df: int) -> float:
    """Student's t 97.5 % quantile with `df` degrees of freedom."""
    if df <= len(_T_975):
        return _T_975[df - 1]
    z = _Z_975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def signed_rank_quantile(n: int, alpha: float = 1 - CONFIDENCE) -> int:
    """The largest k with P(T < k) <= alpha/2 for Wilcoxon's signed-rank statistic T of n differences (exact:
    the null distribution by counting subsets of ranks); 0 when n is too small for the coverage."""
    counts = [1] + [0] * (n * (n + 1) // 2)
    for rank in range(1, n + 1):
        for total in range(len(counts) - 1, rank - 1, -1):
            counts[total] += counts[total - rank]
    k, below = 0, 0
    for total, count in enumerate(counts):
        below += count
        if below / 2**n > alpha / 2:
            break
        k = total + 1
    return k


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


def intraclass_correlation(groups: list[list[float]]) -> float | None:
    """One-way ANOVA's ICC(1) of values in groups (a comparison's paired differences): the share of their variance
    that lies between groups. None with fewer than two groups of two."""
    groups = [g for g in groups if len(g) >= 2]
    k, n = len(groups), sum(len(g) for g in groups)
    if k < 2:
        return None
    grand = statistics.fmean(v for g in groups for v in g)
    between = sum(len(g) * (statistics.fmean(g) - grand) ** 2 for g in groups) / (k - 1)
    within = sum((v - statistics.fmean(g)) ** 2 for g in groups for v in g) / (n - k)
    size = n / k
    return (between - within) / (between + (size - 1) * within) if between + (size - 1) * within > 0 else None


def pool(values: list[float | None], tolerance: float) -> Pooled:
    """Pooled differences, judged on the Hodges-Lehmann interval: whether it lies inside ±tolerance."""
    measured = [v for v in values if v is not None]
    if len(measured) < MIN_ROUNDS:
        mean = statistics.fmean(measured) if measured else None
        return Pooled(values, mean, None, None, tolerance, "too few", mean)
    mean = statistics.fmean(measured)
    half = t_975(len(measured) - 1) * statistics.stdev(measured) / math.sqrt(len(measured))
    estimate, low, high = hodges_lehmann(measured)
    if low is None or high is None:
        verdict = "too few"
    elif -tolerance <= low and high <= tolerance:
        verdict = "inside"
    elif high < -tolerance or low > tolerance:
        verdict = "outside"
    else:
        verdict = "undecided"
    return Pooled(values, estimate, low, high, tolerance, verdict, mean, mean - half, mean + half)


# --- processes -----------------------------------------------------------------------------------------------------


@dataclass
class _Started:
    """A child started in this round, its output going to `log`."""

    what: str
    proc: subprocess.Popen[bytes]
    log: Path
    started: float

    def result(self) -> tuple[int, str, float]:
        """(exit code, its output, wall seconds) of the ended child."""
        code = self.proc.wait()
        return code, self.log.read_text(encoding="utf-8", errors="replace"), self.ended - self.started

    ended: float = 0.0


def _wait_all(children: list[_Started], timeout_s: float) -> None:
    """Wait for every child, noting when each ends; those still running after `timeout_s` are killed."""
    deadline = time.perf_counter() + timeout_s
    running = list(children)
    while running:
        for child in list(running):
            if child.proc.poll() is not None:
                child.ended = time.perf_counter()
                running.remove(child)
        if running and time.perf_counter() > deadline:
            for child in running:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.proc.pid, signal.SIGKILL)
        time.sleep(0.05)


def _start(what: str, command: list[str], env: dict[str, str], log: Path) -> _Started:
    """Start `command` in a session of its own (so that it can be killed whole), its output into `log`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        out.write(f"$ {' '.join(command)}\n".encode())
        out.flush()
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return _Started(what, proc, log, time.perf_counter())


def _failed(what: str, code: int, output: str, log: Path) -> SystemExit:
    return SystemExit(f"{what} failed (exit {code}; log {log}):\n{output[-LOG_TAIL_CHARS:]}")


def _reportgen_command(plan: Plan, results: Path) -> list[str]:
    command = [sys.executable, "-m", "reportgen", "run", str(plan.recipe), "-o", str(results)]
    command += ["--isolation", "cores"]  # one GPU: a plain run; the benchmark's coordinator stands in for the lock
    return (
        command + ["--inductor-cache", str(plan.work / "cache")] + (["--variant", plan.variant] if plan.variant else [])
    )


def _bundle_dir(plan: Plan, results: Path) -> Path:
    recipe = load_recipe(plan.recipe)
    return results / recipe.bundle_name(select_variant(recipe, plan.variant, plan.recipe))


def _seed_result(side: GraphSide, round_: int, code: int, output: str, wall_s: float) -> None:
    """A `-p`'s output into `side`: its own fields for round 0's, a `Seed` of `more_seeds` for a later round's."""
    seed = Seed(round_, wall_s=wall_s, exit_code=code, error=output[-LOG_TAIL_CHARS:] if code != 0 else None)
    for line in output.splitlines():
        if line.startswith(SEED_REPS_PREFIX):
            seed.reps_ms = [float(ms) for ms in json.loads(line.removeprefix(SEED_REPS_PREFIX))]
    profiles = parse_seed_output(output)
    if profiles:
        seed.busy_percent, seed.wall_ms = profiles[-1].busy_percent, profiles[-1].wall_ms
    if round_ > 0:
        side.more_seeds.append(seed)
        return
    side.seed_wall_s, side.seed_exit_code, side.seed_reps_ms = wall_s, code, seed.reps_ms
    side.seed_error = seed.error
    side.seed_busy_percent, side.seed_wall_ms = seed.busy_percent, seed.wall_ms
    if profiles:
        side.seed_categories_percent = dict(profiles[-1].categories_percent)


def _report_failed_seeds(number: int, graphs: list[GraphSide], logs: dict[str, Path]) -> None:
    """A line per `-p` of comparison `number` that exited non-zero: its exit, wall time and last line of output
    (the whole end is kept in the JSON: `Seed.error`), so that a sitting's missing pairs have a stated cause."""
    for side in graphs:
        for seed in side.seeds:
            if seed.exit_code not in (0, None):
                name = seed_process_name(side.graph, seed.round)
                last = next((line for line in reversed((seed.error or "").splitlines()) if line.strip()), "")
                print(
                    f"comparison {number}: -p {name!r} exited {seed.exit_code} after {seed.wall_s or 0:.0f} s "
                    f"({len(seed.reps_ms)} timings; log {logs.get(name)}): {last.strip()[:300]}",
                    flush=True,
                )


def seed_role(round_: int) -> str:
    """The role of the `-p` paired with reportgen's round `round_` (a role of its own: its pairs retire with it)."""
    return "seed" if round_ == 0 else f"seed#{round_}"


def seed_timing_window(graph: int, k: int | None) -> str:
    """A fresh `-p`'s k-th timing's window, paired with reportgen's `graph_timing_window` (None: all its timings in
    one, where the harness cannot be wrapped)."""
    return f"seed {graph} timing" if k is None else f"seed {graph} timing {k}"


def seed_profile_window(graph: int) -> str:
    """A fresh `-p`'s profile's window, paired with reportgen's `graph_profile_window`."""
    return f"seed {graph}"


def seed_process_name(graph: int, round_: int) -> str:
    """What a round's `-p` of `graph` is called among a comparison's processes (`_Started.what`, its log)."""
    return f"seed {graph}" if round_ == 0 else f"seed {graph}#{round_}"


def seed_process(wrapper: Path, graph: int) -> None:
    """In this (fresh) process: exactly `python <wrapper> -p`, its two measurements in windows.

    `-p` times `times` x `repeat` calls (a window per timing, `seed_timing_window`), then profiles as many (window
    `seed <graph>`); its import, the kernels' loading and the profile's tables stay outside the windows.
    """
    window.connect()
    import torch._inductor.wrapper_benchmark as wrapper_benchmark

    main = wrapper_benchmark.compiled_module_main
    calls = iter(("timing", "profile"))

    def in_windows(name: str, benchmark: Callable[..., float]) -> None:
        def measured(*args: object, **kwargs: object) -> float:
            if next(calls, "more") != "timing":
                with window.timed_window(seed_profile_window(graph)):
                    return benchmark(*args, **kwargs)
            with contextlib.ExitStack() as stack:
                each = stack.enter_context(
                    inductor.each_timing(lambda k: window.timed_window(seed_timing_window(graph, k)))
                )
                if each is None:
                    stack.enter_context(window.timed_window(seed_timing_window(graph, None)))
                taken = benchmark(*args, **kwargs)
            if each:  # every timing in ms per call, as reportgen's bundle keeps its own
                times = int(str(kwargs.get("times", 10)))
                print(SEED_REPS_PREFIX + json.dumps([seconds / times * 1e3 for seconds in each]), flush=True)
            return taken

        main(name, measured)

    wrapper_benchmark.compiled_module_main = in_windows  # the wrapper imports it late, in its __main__ block
    sys.argv = [str(wrapper), "-p"]
    runpy.run_path(str(wrapper), run_name="__main__")


def _read_run(bundle_dir: Path, round_: int, wall_s: float) -> Run:
    """The figures of the bundle just written, read before the next run moves it into the history."""
    bundle = load_bundle(bundle_dir)
    metrics = bundle.manifest.metrics
    if metrics.eager is None or metrics.compiled is None:
        raise SystemExit(f"{bundle_dir}: no eager or compiled step times")
    run = Run(
        round=round_,
        path=str(bundle_dir),
        wall_s=wall_s,
        eager_ms=metrics.eager.median_ms,
        compiled_ms=metrics.compiled.median_ms,
        host_probe_ms=list(metrics.host_probe_ms),
        compile_s=metrics.compile_time_s,
        inductor_cache=str(bundle.manifest.inductor_cache),
    )
    graphs = {g.graph: g for g in bundle.analysis.graphs if g.graph is not None} if bundle.analysis else {}
    benches = {b.graph: b for b in bundle.capture.graph_benchmarks} if bundle.capture else {}
    wrappers = sorted((m for m in bundle.manifest.modules if m.kind == "wrapper"), key=lambda m: m.order)
    for number, module in enumerate(wrappers):
        side = GraphSide(graph=number, seed_module=module.path)
        if (graph := graphs.get(number)) is not None:
            side.label = graph.label
            side.busy_percent = graph.busy_seed_percent
            side.categories_percent = dict(graph.seed_categories_percent)
            side.unprofiled_wall_ms = graph.unprofiled_wall_ms
            side.unprofiled_rounds_ms = list(graph.unprofiled_rounds_ms)
        if (bench := benches.get(number)) is not None:
            side.first_wall_ms = bench.first_wall_ms
            side.unprofiled_reps_ms = [list(reps) for reps in bench.reps_ms]
        run.graphs.append(side)
    return run


# --- figures -------------------------------------------------------------------------------------------------------


def _pct(new: float, ref: float) -> float:
    return 100 * (new / ref - 1)


def step_differences(sitting: Sitting) -> dict[str, list[float | None]]:
    """d_i (%) per step figure: run i against the bare loop whose blocks took turns with its own."""
    out: dict[str, list[float | None]] = {key: [] for key in STEP_FIGURES}
    for run, bare in zip(sitting.runs, sitting.bares, strict=False):
        for key in STEP_FIGURES:
            out[key].append(_pct(getattr(run, key), getattr(bare, key)))
    return out


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


def paired_busy_differences(sitting: Sitting) -> dict[int, list[float]]:
    """Per graph: every comparison's timing-by-timing busy differences (pp), pooled together. A comparison's two
    medians are each a draw between the host's fast and slow states (a vCPU flips every second or so, a side's
    timings last one to two); a pair, back to back, shares the state, so its difference cancels it."""
    out: dict[int, list[float]] = {}
    for run in sitting.runs:
        for side in run.graphs:
            if pairs := side.paired_busy_pp:
                out.setdefault(side.graph, []).extend(pairs)
    return out


def _graph_name(sitting: Sitting, number: int) -> str:
    labels = [g.label for run in sitting.runs for g in run.graphs if g.graph == number and g.label]
    return one_line(labels[0]) if labels else f"graph {number}"  # (a bundle's text, bound for a terminal)


def update_pooled(sitting: Sitting, tolerance_pct: float, tolerance_pp: float) -> None:
    """Pool every figure's differences so far."""
    sitting.pooled = {key: pool(v, tolerance_pct) for key, v in step_differences(sitting).items()}
    for (number, what), values in graph_differences(sitting).items():
        sitting.pooled[f"graph {number} {what}"] = pool(values, tolerance_pp)
    for number, pairs in paired_busy_differences(sitting).items():
        sitting.pooled[f"graph {number}{PAIRED}"] = pool(list(pairs), tolerance_pp)
    if len(sitting.bares) >= 2:
        for key in (*STEP_FIGURES, "host_probe_ms"):
            figures = [_bare_figure(b, key) for b in sitting.bares]
            sitting.bare_drift_percent[key] = _pct(max(figures), min(figures))


def _bare_figure(bare: Bare, key: str) -> float:
    return statistics.median(bare.host_probe_ms) if key == "host_probe_ms" else float(getattr(bare, key))


def undecided(sitting: Sitting) -> list[str]:
    """The figures whose interval straddles a tolerance edge: the step figures and every graph's busy (timing by
    timing where the pairs were kept, else comparison by comparison)."""

    def judged(key: str) -> bool:
        paired = key.removesuffix(" busy") + PAIRED
        return key in STEP_FIGURES or key.endswith(PAIRED) or (key.endswith(" busy") and paired not in pooled)

    pooled = sitting.pooled
    return [key for key, p in pooled.items() if p.verdict in ("undecided", "too few") and judged(key)]


# --- output --------------------------------------------------------------------------------------------------------


def interval_text(p: Pooled) -> str:
    """A pooled figure's 95 % interval as "[low, high]" (— when there is none)."""
    return "—" if p.low is None or p.high is None else f"[{p.low:+.2f}, {p.high:+.2f}]"


def _fmt(value: float | None, digits: int = 1) -> str:
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
        rows.append([name, *(_fmt(v) for v in p.values), _fmt(p.estimate, 2), interval, verdict, mean])
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
    numbers = sorted({int(k.split()[1]) for k in sitting.pooled if k.startswith("graph ")})
    for number in numbers:
        keys = [(f"graph {number} busy", "busy")] + [(f"graph {number} {b}", f"  {b}") for b in SEED_BUCKETS]
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
            f"wall per call, {name} - 1, %: {', '.join(_fmt(v, 2) for v in values)}; HL {_fmt(p.estimate, 2)} {interval}"
        )
    if (paired := sitting.pooled.get(f"graph {number}{PAIRED}")) and paired.values:
        per_side = [g.paired_busy_pp for g in sides]  # (a property that computes: once each)
        medians = [statistics.median(pairs) if pairs else None for pairs in per_side]
        print(
            f"busy - -p timing by timing (what is judged), pp: {len(paired.values)} pairs of {len(sides)} "
            f"comparisons; HL {_fmt(paired.estimate, 2)} {interval_text(paired)}, {paired.verdict} ±{paired.tolerance:g} pp; "
            f"mean {_fmt(paired.mean, 2)}"
        )
        # a process's own offset would make its pairs move together: the comparisons' medians pooled as units
        by_process = pool(list(medians), paired.tolerance)
        icc = intraclass_correlation([pairs for pairs in per_side if pairs])
        print(
            f"  the same, one median per comparison ({', '.join(_fmt(m) for m in medians)}): HL "
            f"{_fmt(by_process.estimate, 2)} {interval_text(by_process)}, {by_process.verdict}; intraclass correlation of the pairs "
            f"{_fmt(icc, 3)} ({_icc_reading(icc)})"
        )


def _icc_reading(icc: float | None) -> str:
    if icc is None:
        return "too few comparisons to tell whether a comparison's pairs move together"
    if icc < ICC_INDEPENDENT:
        return "a comparison's pairs do not move together: pooling every pair is fair"
    return "a comparison's pairs move together: trust the line of medians, not the pooled pairs"


def _costs(sitting: Sitting) -> None:
    warm = sitting.warmup
    print(f"\nwarm-up run (cache {warm.get('inductor_cache')}): {warm.get('wall_s', 0):.1f} s, ", end="")
    print(f"first-call compile {warm.get('compile_s') or 0:.1f} s")
    if not sitting.runs:
        return
    run = sitting.runs[0]
    walls = [g.seed_wall_s or 0.0 for g in run.graphs]
    manual_s = (run.compile_s or 0.0) + sum(walls)
    print(
        f"round 1: reportgen run {run.wall_s:.1f} s; first-call compile {run.compile_s or 0:.1f} s + -p runs "
        f"{' + '.join(f'{w:.1f}' for w in walls) or '0'} s = {manual_s:.1f} s; "
        f"ratio {run.wall_s / manual_s if manual_s else math.nan:.2f}"
    )


def _dump(sitting: Sitting, out: Path | None) -> None:
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


# --- the sitting ---------------------------------------------------------------------------------------------------


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


def continue_from(sitting: Sitting, path: Path) -> None:
    """Put the comparisons of an earlier sitting's `--json` file first (the same recipe and variant, its pools
    judged with the new ones): a sitting cut short by the machine's 30 min goes on where it stopped."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if (Path(data["recipe"]).name, data["variant"]) != (Path(sitting.recipe).name, sitting.variant):
        raise SystemExit(f"{path}: a sitting of {data['recipe']} ({data['variant']}), not of this recipe and variant")
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


def reread(paths: list[Path], tolerance_pct: float, tolerance_pp: float) -> Sitting:
    """Earlier sittings' `--json` files (one recipe and variant), their comparisons in order, pooled anew: today's
    statistics on yesterday's device time."""
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
    return max(1, min(asked, rounds))


def _group_policy(warm: Run, swapped: bool, seeds: int = 1) -> Turns:
    """One comparison's turns: step pairs alternate bare/reportgen; each of a graph's `-p` timings goes back to back
    with the timing of the same number in reportgen's round of that `-p` (`seed_role`), and the first `-p`'s
    profile with reportgen's profile."""
    pairs: list[tuple[Window, Window]] = []
    for g in warm.graphs:
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
        policy.swap()  # reportgen's measurement first, the fresh -p second
    return policy


def _start_group(
    plan: Plan, coordinator: Coordinator, group: str, number: int, warm: Run, env: dict[str, str], seeds: int
) -> list[_Started]:
    """Comparison `number`'s processes: reportgen (or bare loop A), its bare loop and a `-p` per graph."""
    logs, results = plan.work / "logs", plan.work / "results" / group

    def role(name: str, base: dict[str, str]) -> dict[str, str]:
        return {**base, window.SOCKET_VARIABLE: coordinator.path, window.ROLE_VARIABLE: Grouped.role(name, group)}

    bare_command = [sys.executable, __file__, str(plan.recipe), "--bare"]
    bare_command += ["--variant", plan.variant] if plan.variant else []
    first = (
        _start("reportgen", bare_command, role("reportgen", env), logs / f"bare-a-{number}.log")
        if plan.aa  # A/A: a second bare loop in reportgen's place, the floor of what rounds can show
        else _start(
            "reportgen",
            _reportgen_command(plan, results),
            role("reportgen", dict(os.environ)),
            logs / f"reportgen-{number}.log",
        )
    )
    started = [first, _start("bare", bare_command, role("bare", env), logs / f"bare-{number}.log")]
    for side in warm.graphs if seeds else []:
        assert side.seed_module is not None
        command = [sys.executable, __file__, str(plan.recipe), "--seed", str(Path(warm.path) / side.seed_module)]
        for round_ in range(seeds):
            what = seed_process_name(side.graph, round_)
            log = logs / f"{what.replace(' ', f'-{number}-')}.log"  # seed-<comparison>-<graph>[#<round>].log
            started.append(_start(what, [*command, str(side.graph)], role(seed_role(round_), env), log))
    for child in started:
        coordinator.register(child.proc.pid, f"{child.what}@{group}")
    return started


def _round(plan: Plan, sitting: Sitting, warm: Run, env: dict[str, str]) -> None:
    """One round: `plan.groups` comparisons at once (each reportgen, its bare loop and a `-p` per graph), every
    measurement in a window of its own (the others paused), each comparison's windows in turns."""
    first = len(sitting.runs) + len(sitting.excluded) + 1
    numbers = list(range(first, first + plan.groups))
    seeds = 0 if plan.aa else seeds_per_graph(warm, plan.seeds)
    groups = {str(n): _group_policy(warm, swapped=n % 2 == 0, seeds=seeds) for n in numbers}
    log = plan.work / "logs" / f"windows-{first}.log"
    with Coordinator(Grouped(groups), settle_s=plan.settle_s, log_path=log, cpu=plan.window_cpu) as coordinator:
        started = {n: _start_group(plan, coordinator, str(n), n, warm, env, seeds) for n in numbers}
        _wait_all([child for children in started.values() for child in children], plan.round_timeout_s)
        windows = list(coordinator.granted)
    for number in numbers:
        _collect(plan, sitting, number, started[number], windows, seeds)


def _collect(
    plan: Plan,
    sitting: Sitting,
    number: int,
    started: list[_Started],
    windows: list[tuple[str, str, float, float]],
    seeds: int,
) -> None:
    """Comparison `number`'s figures into the sitting (its reportgen run and bare loop, its `-p` runs)."""
    finished = {child.what: child.result() for child in started}
    code, output, wall_s = finished["reportgen"]
    if code != 0:
        raise _failed(f"reportgen run (comparison {number})", code, output, started[0].log)
    suffix = Grouped.SEPARATOR + str(number)
    mine = [(r[: -len(suffix)], w, o, c) for r, w, o, c in windows if r.endswith(suffix)]
    if plan.aa:
        other: dict[str, object] = json.loads(output.strip().splitlines()[-1])
        run = Run(
            round=number,
            path="(bare loop A)",
            wall_s=wall_s,
            eager_ms=float(other["eager_ms"]),  # type: ignore[arg-type]
            compiled_ms=float(other["compiled_ms"]),  # type: ignore[arg-type]
            host_probe_ms=list(other["host_probe_ms"]),  # type: ignore[call-overload]
            compile_s=None,
            inductor_cache="kept-warm",
        )
    else:
        run = _read_run(_bundle_dir(plan, plan.work / "results" / str(number)), number, wall_s)
    run.windows = _window_summary(mine)
    code, output, bare_wall_s = finished["bare"]
    if code != 0:
        raise _failed(f"bare loop (comparison {number})", code, output, started[1].log)
    found: dict[str, object] = json.loads(output.strip().splitlines()[-1])
    bare = Bare(index=number, wall_s=bare_wall_s, **found)  # type: ignore[arg-type]
    for side in run.graphs:
        for round_ in range(seeds):  # the `-p` processes `_start_group` started
            if (seed := finished.get(seed_process_name(side.graph, round_))) is not None:
                _seed_result(side, round_, *seed)
    _report_failed_seeds(number, run.graphs, {child.what: child.log for child in started})
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
        + "; ".join(
            f"graph {g.graph} busy {_fmt(g.busy_percent)} / -p {_fmt(g.seed_busy_percent)} %" for g in run.graphs
        )
        + f"; windows {run.windows}",
        flush=True,
    )
    update_pooled(sitting, plan.tolerance_pct, plan.tolerance_pp)
    _dump(sitting, plan.json_out)


def _window_summary(windows: list[tuple[str, str, float, float]]) -> dict[str, object]:
    """How the round's windows went: count per role, the steps' order, the gap inside each -p/graph pair."""
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
    return {"count": counts, "steps_order": steps, "pair_gaps_s": gaps}


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
        warming = _start("warm-up", _reportgen_command(plan, plan.work / "warmup"), dict(os.environ), warm_log)
        _wait_all([warming], plan.round_timeout_s)
        code, output, warm_s = warming.result()
        if code != 0:
            raise _failed("warm-up reportgen run", code, output, warm_log)
    else:
        warm_s = 0.0  # `--warm-up-only` made it earlier (e.g. beside another recipe's warm-up)
    warm = _read_run(warm_dir, 0, warm_s)
    sitting.bundle = warm_dir.name
    sitting.warmup = {"path": warm.path, "wall_s": warm_s, "compile_s": warm.compile_s}
    sitting.warmup["inductor_cache"] = warm.inductor_cache
    probe = statistics.median(warm.host_probe_ms) if warm.host_probe_ms else None
    sitting.warmup["host_probe_ms"] = probe
    shown = "no host probe" if probe is None else f"host probe {probe:.2f} ms"
    print(f"warm-up reportgen run: {warm_s:.1f} s (cache {warm.inductor_cache}, {shown})", flush=True)
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
    env = child_env(variant_recipe(plan.recipe, plan.variant), plan.work / "cache" / warm_dir.name)
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
    while (
        not plan.deadline.passed()
        and plan.until_decided is not None
        and len(sitting.runs) < plan.until_decided
        and undecided(sitting)
        and len(sitting.excluded) == excluded
    ):
        print(f"undecided: {', '.join(undecided(sitting))}; comparison {len(sitting.runs) + 1} on", flush=True)
        _round(plan, sitting, warm, env)
    if len(sitting.excluded) > excluded:
        print("the host slowed down during the sitting: it stops here (left-out comparisons are in --json)")
    if sitting.runs:
        report(sitting)
    return sitting


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
        "(default 1; at most its rounds, 3)",
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
        print(json.dumps(bare_loop(args.recipe.resolve(), args.variant)))
        return 0
    if args.report:
        sitting = reread(args.report, args.tolerance_pct, args.tolerance_pp)
        report(sitting)
        _dump(sitting, args.json)  # one file to `--continue-from`
        return 0
    if args.recipe is None:
        parser.error("a recipe is needed (or --report JSON...)")
    if args.groups < 1 or args.seeds < 1:
        parser.error("--groups and --seeds must be at least 1")
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
    """`recipe`, or a copy beside it (its relative references unchanged) whose `profile.steps` is `steps`."""
    if steps is None:
        yield recipe
        return
    import yaml

    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    data.setdefault("profile", {})["steps"] = steps
    copy = recipe.with_name(f".fidelity-{recipe.stem}-{steps}-steps{recipe.suffix}")
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
