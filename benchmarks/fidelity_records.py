"""Timing fidelity's records: a bare loop's, a reportgen run's (its graphs, each against its fresh `-p` processes)
and a sitting's, as `--json` keeps them (`timing_fidelity.py`)."""

from __future__ import annotations

import dataclasses
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from fidelity_stats import Pooled

from reportgen.bundle import KernelLaunch, LaunchChange, load_bundle
from reportgen.compare.judge import launch_changes

__all__: list[str] = []

Launches = dict[str, dict[str, object]]
"""A process's Triton kernels as a sittings file keeps them: `KernelLaunch` dumps by `launch_key`."""


def launch_key(launch: KernelLaunch | LaunchChange) -> str:
    """A Triton kernel as two processes name it alike: `kernel@source` (its name and its source's hash)."""
    return f"{launch.kernel}@{launch.source}"


def launch_records(launches: list[KernelLaunch]) -> Launches:
    """`launches` as a sittings file keeps them."""
    return {launch_key(k): k.model_dump() for k in launches}


def other_configs(ours: Launches, theirs: Launches) -> tuple[int, list[LaunchChange]]:
    """How many kernels both processes launched, and those `ours` launched with another config than `theirs`
    (`reportgen.compare.judge.launch_changes`, `theirs` as before)."""
    changes = launch_changes(*([KernelLaunch.model_validate(k) for k in side.values()] for side in (theirs, ours)))
    return len(set(ours) & set(theirs)), changes


def tuned_count(launches: Launches) -> int:
    """The kernels the process tuned itself on their first call (an autotune cache miss)."""
    return sum(1 for k in launches.values() if k.get("tuning") == "tuned")


PAIRED_FROM = 1
"""The first timing pair compared timing by timing (a `-p`'s first timing holds its cold first call: 394-565 ms
against 13-22 for mixnet_l's forward on an H200)."""


class StepMedians:
    """A process's eager and compiled step-time medians (ms; fields of the dataclasses below), and their ratio."""

    eager_ms: float
    compiled_ms: float

    @property
    def speedup(self) -> float:
        return self.eager_ms / self.compiled_ms


@dataclass
class Bare(StepMedians):
    """One bare-loop process: medians (ms), their samples and the host probe before each block pair."""

    index: int
    wall_s: float
    device: str
    eager_ms: float
    compiled_ms: float
    eager_samples_ms: list[float]
    compiled_samples_ms: list[float]
    host_probe_ms: list[float]
    kernel_modules: list[str] = field(default_factory=list)
    """File names of the kernels its compiled graphs' wrappers name (`reportgen.run.modules.named_kernels`: their
    source's hash; empty in files from before): the same as reportgen's bundle keeps, or the two ran other code."""
    launches: Launches = field(default_factory=dict)
    """Each Triton kernel's launch config after the warm-ups and how it was chosen (`launch_records`; empty on a CPU
    and in files from before): a kernel tuned in its process on its first call may launch another config in each."""
    figures: dict[str, object] = field(default_factory=dict)
    """Its device figures and counts per profiled step, eager and compiled, profiled and read as the run's are
    (`fidelity_children.profiled_figures`: a `Figures` dump; empty in files from before): whether a step-time
    offset is on the device or the host."""


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
class Run(StepMedians):
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
    eager_samples_ms: list[float] = field(default_factory=list)
    """Each timed block's ms per step, in order: block k took turns with the bare loop's block k (empty in
    sittings from before they were kept)."""
    compiled_samples_ms: list[float] = field(default_factory=list)
    kernel_modules: list[str] = field(default_factory=list)
    """File names of the kernel modules the bundle keeps (`Bare.kernel_modules`)."""
    launches: Launches = field(default_factory=dict)
    """The bundle's launch configs (`Capture.launches`, as `Bare.launches`)."""
    figures: dict[str, object] = field(default_factory=dict)
    """The bundle's device figures and counts (`Analysis.figures`, as `Bare.figures`)."""
    placement: str = ""
    """The GPU its processes saw and the CPUs they could use (`placement`; empty in files from before): on
    2xH200, resnet50's compiled read -2.9 to -7.3 % in the comparisons on GPU 0 and CPUs 16-31 (two machines),
    -3.5 to +4.3 % in those on GPU 1 and CPUs 0-15 (three)."""
    stages_s: dict[str, float] = field(default_factory=dict)
    """The run child's seconds per stage (`Metrics.stages_s`; empty in files from before): where a run's wall
    went, e.g. how much of a warm-up a warm cache leaves to timing, profiles and benchmarks."""
    sitting: str = ""
    """The machine that measured it (`sitting_tag`; empty in files from before): one machine's comparisons share
    its host and a warm-up, and on 2xH200 they moved together (resnet50's compiled: -3.5 to -2.9 % in one
    sitting, -7.3 and -5.3 % in another, +0.7 to +4.3 % in the first ones)."""


def placement() -> str:
    """The GPU this process's children see (`CUDA_VISIBLE_DEVICES`) and the CPUs they may use, e.g.
    "GPU 1, CPUs 0-15"."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    runs: list[list[int]] = []
    for cpu in cpus:
        if runs and cpu == runs[-1][-1] + 1:
            runs[-1].append(cpu)
        else:
            runs.append([cpu])
    text = ",".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs) or "?"
    return f"GPU {os.environ.get('CUDA_VISIBLE_DEVICES', 'all')}, CPUs {text}"


def sitting_tag() -> str:
    """This sitting's tag: the machine's boot id (not a secret: it changes at each boot), so that two sittings
    of one machine (one per GPU) are one cluster; without one, the start time."""
    try:
        return "boot-" + Path("/proc/sys/kernel/random/boot_id").read_text(encoding="utf-8").strip()[:8]
    except OSError:
        return "start-" + time.strftime("%Y%m%dT%H%M%S", time.gmtime())


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
    paired_icc: dict[str, float | None] = field(default_factory=dict)
    """Per figure judged pair by pair: the intraclass correlation of its pairs, comparison by comparison."""


def read_run(bundle_dir: Path, round_: int, wall_s: float) -> Run:
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
        eager_samples_ms=list(metrics.eager.samples_ms),
        compiled_samples_ms=list(metrics.compiled.samples_ms),
        kernel_modules=sorted(Path(m.path).name for m in bundle.manifest.modules if m.kind == "kernel"),
        stages_s=dict(metrics.stages_s),
    )
    run.launches = launch_records(bundle.capture.launches if bundle.capture else [])
    if bundle.analysis is not None and bundle.analysis.figures is not None:
        run.figures = bundle.analysis.figures.model_dump(mode="json")
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
