"""Timing fidelity's child processes: the bare loop and a fresh `python <wrapper>.py -p`, each measuring in the
coordinator's windows, and how a round starts, waits for and reads them (`timing_fidelity.py`)."""

from __future__ import annotations

import contextlib
import json
import os
import runpy
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fidelity_records import GraphSide, Seed, launch_records

from reportgen.escape import one_line
from reportgen.formats import parse_seed_output
from reportgen.pipeline import variant_recipe
from reportgen.run import inductor, window
from reportgen.run.scrub import Scrubber

if TYPE_CHECKING:
    from reportgen.recipe import Recipe
    from reportgen.run.workload import Workload

__all__: list[str] = []

LOG_TAIL_CHARS = 3000
"""How much of a failed child's output to show."""


SEED_REPS_PREFIX = "fidelity-seed-reps: "
"""A `-p` process prints its timings (JSON, ms per call) after this, for `seed_result`."""


def warmed_workload(recipe_path: Path, variant: str | None) -> tuple[Recipe, Workload, Callable[..., object]]:
    """The recipe's workload as a user's script has it: built, compiled with the recipe's options and nothing else,
    then each of eager and compiled called `profile.warmup` times (at least once: the compile, from a warm cache).
    Inductor's own benchmarks in those calls (a kernel tuned on its first call) each take a GPU-only timed window,
    as the run's child holds them (`child._warm_up_compiled`): what they pick is measured alone, and they slow no
    window of the other side (from session 63's sitting on; a no-op outside a sitting)."""
    from reportgen.run import inductor
    from reportgen.run.workload import build_workload, compile_model, resolve_device

    recipe = variant_recipe(recipe_path, variant)
    device = resolve_device(recipe.device)
    recipe = recipe.for_device(device)
    work = build_workload(recipe, str(recipe_path.parent), device)
    compiled = compile_model(recipe, work.model)
    with inductor.benchmarks_in(window.compile_benchmark_window):
        for fn in (work.model, compiled):
            for _ in range(max(recipe.profile.warmup, 1)):
                work.synchronize()
                work.step(fn)
                work.synchronize()
    return recipe, work, compiled


def profiled_figures(work: Workload, compiled: Callable[..., object], recipe: Recipe) -> dict[str, object]:
    """The bare loop's device figures and counts got as the run gets its own: `profile.profiled_steps` compiled
    steps, then as many eager ones, under torch.profiler (`measure.profile_steps`, each in a `profile` window),
    read by reportgen's analysis (`analyze_trace`). Run after the timed blocks: nothing timed sees it. A
    `Figures` dump (`Bare.figures`)."""
    import tempfile

    from reportgen.analyze import analyze_trace
    from reportgen.bundle import Figures
    from reportgen.run import measure

    device = "cuda" if str(work.device).startswith("cuda") else "cpu"
    steps = recipe.profile.profiled_steps
    sides = {}
    with tempfile.TemporaryDirectory(prefix="bare-profile-") as scratch:
        for name, fn in (("compiled", compiled), ("eager", work.model)):
            trace = measure.profile_steps(work, fn, steps, Path(scratch) / f"{name}.json.gz")
            sides[name] = analyze_trace(trace, device, steps)[3]
    return Figures(device=device, **sides).model_dump(mode="json")


def bare_loop(recipe_path: Path, variant: str | None, warm_up_only: bool = False) -> dict[str, object]:
    """In this (fresh) process: time eager and compiled like a user's script. Medians and samples in ms.

    `warm_up_only`: stop after the warm-ups, returning the Inductor cache's counters (`cache`): the sitting's bare
    warm-up, which fills the cache entries of the bare loop's own compile (`timing_fidelity.warm_up_bare`)."""
    from reportgen.run import inductor
    from reportgen.run.diagnostics import cache_counts
    from reportgen.run.diagnostics_sources import dynamo_counters
    from reportgen.run.host import host_probe
    from reportgen.run.modules import named_kernels

    window.connect()  # the coordinator pauses this process during reportgen's windows from now on
    recipe, work, compiled = warmed_workload(recipe_path, variant)
    launches = launch_records(inductor.kernel_launches(inductor.loaded_modules()))  # as the run reads them
    device = work.device

    def block(fn: Callable[..., object], steps: int) -> float:
        work.synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            work.step(fn)
        work.synchronize()
        return (time.perf_counter() - start) / steps * 1e3

    profile = recipe.profile
    if warm_up_only:
        return {"device": device, "cache": cache_counts(dynamo_counters() or {})}
    eager, comp, probe = [], [], []
    for _ in range(profile.steps):
        with window.timed_window(
            window.STEPS_WINDOW
        ):  # takes turns with reportgen's pairs of blocks, as the run's are held
            probe.append(host_probe() * 1e3)  # the host's CPU speed, outside the timed blocks (as the run does)
            eager.append(block(work.model, profile.block_steps))
            comp.append(block(compiled, profile.block_steps))
    loaded = inductor.loaded_modules()
    try:
        figures = profiled_figures(work, compiled, recipe)
    except Exception as error:  # a diagnostic: the timed medians stand without it, and its log says why
        print(f"bare loop's profile not read: {type(error).__name__}: {one_line(str(error))[:300]}", file=sys.stderr)
        figures = {}
    return {
        "device": device,
        "figures": figures,
        "kernel_modules": named_kernels(inductor.module_files([m for m in loaded if inductor.is_wrapper(m)])),
        "eager_ms": statistics.median(eager),
        "compiled_ms": statistics.median(comp),
        "eager_samples_ms": eager,
        "compiled_samples_ms": comp,
        "host_probe_ms": probe,
        "launches": launches,
    }


def bare_result(output: str) -> dict[str, object]:
    """What a bare-loop process (`bare_loop`, through `timing_fidelity.py --bare`) found: the JSON on its last line."""
    found: dict[str, object] = json.loads(output.strip().splitlines()[-1])
    return found


@dataclass
class Started:
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


def wait_all(children: list[Started], timeout_s: float) -> None:
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


def start_child(what: str, command: list[str], env: dict[str, str], log: Path) -> Started:
    """Start `command` in a session of its own (so that it can be killed whole), its output into `log`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        out.write(f"$ {' '.join(command)}\n".encode())
        out.flush()
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return Started(what, proc, log, time.perf_counter())


def failed(what: str, code: int, output: str, log: Path) -> SystemExit:
    return SystemExit(f"{what} failed (exit {code}; log {log}):\n{output[-LOG_TAIL_CHARS:]}")


def seed_result(side: GraphSide, round_: int, code: int, output: str, wall_s: float) -> None:
    """A `-p`'s output into `side`: its own fields for round 0's, a `Seed` of `more_seeds` for a later round's."""
    error = Scrubber.from_environ(os.environ).scrub(output[-LOG_TAIL_CHARS:]) if code != 0 else None  # kept: no secret
    seed = Seed(round_, wall_s=wall_s, exit_code=code, error=error)
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


def report_failed_seeds(number: int, graphs: list[GraphSide], logs: dict[str, Path]) -> None:
    """A line per `-p` of comparison `number` that exited non-zero: its exit, wall time and last line of output
    (the whole end is kept in the JSON: `Seed.error`), so that a sitting's missing pairs have a stated cause."""
    for side in graphs:
        for seed in side.seeds:
            if seed.exit_code not in (0, None):
                name = seed_process_name(side.graph, seed.round)
                last = next((line for line in reversed((seed.error or "").splitlines()) if line.strip()), "")
                print(
                    f"comparison {number}: -p {name!r} exited {seed.exit_code} after {seed.wall_s or 0:.0f} s "
                    f"({len(seed.reps_ms)} timings; log {logs.get(name)}): {one_line(last)[:300]}",
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
    """What a round's `-p` of `graph` is called among a comparison's processes (`Started.what`, its log)."""
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
