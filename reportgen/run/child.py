"""The run's child process: `python -m reportgen.run.child SPEC OUT_DIR`.

The parent has already applied the recipe's env (and a private TORCHINDUCTOR_CACHE_DIR), so torch
is first imported here. Progress is written to OUT_DIR/child-result.json after every stage: a
crash or a kill leaves the last completed stage on disk for the parent to report.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from reportgen.bundle import (
    CAPTURE_FILE,
    EAGER_TRACE_FILE,
    PROVENANCE_FILE,
    SHAPES_TRACE_FILE,
    TRACE_FILE,
    Capture,
    GraphBenchmark,
    ModuleFile,
    StepTimes,
    rank_dir,
)
from reportgen.recipe import Recipe
from reportgen.run import distributed, window
from reportgen.run.graph_process import early_timer, graphs_not_timed
from reportgen.run.host import Measurements, apply_placement
from reportgen.run.protocol import CHILD_RESULT, ChildResult, ChildSpec, exit_now
from reportgen.run.ranks import neutral_digest

if TYPE_CHECKING:
    from reportgen.run.graph_process import GraphTimer
    from reportgen.run.provenance import ProvenanceRecorder
    from reportgen.run.workload import Workload

__all__ = ["main"]

_T = TypeVar("_T")


class _Progress:
    """Keeps the latest ChildResult and writes it to disk on each update."""

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir / CHILD_RESULT
        self.result = ChildResult(stage="started")
        self._since = time.monotonic()
        self.save()

    def update(self, **fields: object) -> None:
        if "stage" in fields and fields["stage"] != self.result.stage:
            self.mark(str(fields["stage"]), save=False)
        self.result = self.result.model_copy(update=fields)
        self.save()

    def mark(self, stage: str, save: bool = True) -> None:
        """Record the seconds since the previous mark as the duration of `stage`."""
        now = time.monotonic()
        stages = {**self.result.metrics.stages_s, stage: round(now - self._since, 3)}
        self._since = now
        self.result = self.result.model_copy(
            update={"metrics": self.result.metrics.model_copy(update={"stages_s": stages})}
        )
        if save:
            self.save()

    def metrics(self, **fields: object) -> None:
        self.update(metrics=self.result.metrics.model_copy(update=fields))

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(self.result.model_dump_json(indent=2), encoding="utf-8")
        tmp.replace(self.path)


def _log(message: str) -> None:
    print(f"[reportgen {time.strftime('%H:%M:%S')}] {message}", flush=True)


def _run(
    spec: ChildSpec, out_dir: Path, progress: _Progress, host: Measurements | None, place: distributed.RankPlace | None
) -> None:
    import torch

    from reportgen.run.probe import probe_environment
    from reportgen.run.workload import build_workload, resolve_device

    device = resolve_device(spec.recipe.device)
    recipe = spec.recipe.for_device(device)
    if place is not None and recipe.distributed is not None:
        distributed.init_group(place, recipe.distributed, device)
    progress.update(stage="environment", environment=probe_environment(device))
    _log(f"device {device}, torch {torch.__version__}")
    work = build_workload(recipe, spec.recipe_dir, device)
    if place is not None and recipe.distributed is not None:
        work = dataclasses.replace(work, model=distributed.wrap_model(work.model, recipe.distributed, place, device))
    progress.update(stage="model")
    _warm_up_eager(work, recipe, progress)
    follower = place is not None and not place.leader
    with early_timer(recipe, device, out_dir, follower) as timer:  # gets ready while the model compiles
        _compile_and_measure(spec, work, recipe, out_dir, progress, host, follower, timer)


def _compile_and_measure(
    spec: ChildSpec,
    work: Workload,
    recipe: Recipe,
    out_dir: Path,
    progress: _Progress,
    host: Measurements | None,
    follower: bool,
    timer: GraphTimer | None,
) -> None:
    """Compile (the first call), then time, profile and capture; write the capture (not on a follower rank)."""
    from reportgen.run import inductor
    from reportgen.run.diagnostics import DiagnosticsRecorder
    from reportgen.run.workload import compile_model

    compiled = compile_model(recipe, work.model)
    recorder = DiagnosticsRecorder(root=spec.recipe_dir).start()
    provenance = _provenance_recorder(recipe)  # every rank: it changes what Inductor writes
    with distributed.recorded_splits() as splits:
        _warm_up_compiled(work, compiled, recipe, out_dir, progress, copy=not follower)
    progress.update(splits=splits)
    launches = inductor.kernel_launches(inductor.loaded_modules())  # each kernel has chosen its config by now
    # Stop recording before anything is timed: its logging hooks would add CPU time to every call.
    diagnostics = recorder.finish()
    if follower and provenance is not None:
        provenance.finish()
    else:
        _write_provenance(provenance, out_dir, progress)
    with host.measuring(_log) if host is not None else contextlib.nullcontext():
        eager_t, compiled_t = _time_steps(work, compiled, recipe, progress)
        capture = _profile_and_capture(work, compiled, recipe, out_dir, progress, follower, timer)
    if capture is None:  # a follower rank: its progress and traces are its record
        progress.update(stage="done", status="ok")
        return
    if host is not None:
        progress.update(isolation=host.isolation)
    capture = capture.model_copy(update={"diagnostics": diagnostics, "launches": launches})
    capture = capture.model_copy(update={"notes": capture.notes + recorder.notes})
    (out_dir / CAPTURE_FILE).write_text(capture.model_dump_json(indent=2), encoding="utf-8")
    progress.update(stage="done", status="ok", capture_file=CAPTURE_FILE)
    _log(f"eager {eager_t.median_ms:.3f} ms, compiled {compiled_t.median_ms:.3f} ms")


def _provenance_recorder(recipe: Recipe) -> ProvenanceRecorder | None:
    """Kernel provenance is recorded while compiling, unless the recipe turns it off."""
    from reportgen.run.provenance import ProvenanceRecorder

    return ProvenanceRecorder().start() if recipe.profile.provenance else None


def _write_provenance(recorder: ProvenanceRecorder | None, out_dir: Path, progress: _Progress) -> None:
    """Resolve the recorded graphs against the copied wrappers into provenance.json; a failure is a log line."""
    if recorder is None:
        return
    from reportgen.run.provenance import STORE_DIR

    recorder.finish()
    started = time.perf_counter()
    try:
        cache = _cache_dir()
        table = recorder.table(progress.result.modules, out_dir, cache / STORE_DIR if cache else None)
    except Exception:  # an optional capture must not sink the run
        traceback.print_exc()
        return
    (out_dir / PROVENANCE_FILE).write_text(table.model_dump_json(), encoding="utf-8")
    sites = sum(len(graph.sites) for graph in table.graphs)
    _log(
        f"provenance ({table.method}): {sites} call sites in {len(table.graphs)} graphs, "
        f"{time.perf_counter() - started:.2f} s; " + "; ".join(table.notes)
    )


def _warm_up_eager(work: Workload, recipe: Recipe, progress: _Progress) -> None:
    """The eager model's first call (timed) and the rest of its warm-up steps."""
    from reportgen.run import measure

    _log("eager warm-up")
    progress.metrics(eager_first_call_s=measure.time_call(work, work.model))
    for _ in range(max(recipe.profile.warmup - 1, 0)):
        measure.time_call(work, work.model)
    progress.update(stage="eager")


def _warm_up_compiled(
    work: Workload, compiled: Callable[..., object], recipe: Recipe, out_dir: Path, progress: _Progress, copy: bool
) -> None:
    """The compiled model's first call (the compile, timed) and warm-up steps; then its modules are copied (`copy`)
    and the wrappers it loaded named."""
    from reportgen.run import inductor, measure
    from reportgen.run.modules import copy_modules

    _log("compiling (first call)")
    with inductor.benchmarks_in(window.compile_benchmark_window):  # its GPU, alone
        progress.metrics(compile_time_s=measure.time_call(work, compiled))
        for _ in range(max(recipe.profile.warmup - 1, 0)):
            measure.time_call(work, compiled)
    loaded = inductor.loaded_modules()
    wrappers = inductor.module_files([m for m in loaded if inductor.is_wrapper(m)])
    graphs, digests = sorted(Path(f).name for f in wrappers), sorted(neutral_digest(f) for f in wrappers)
    modules = copy_modules(inductor.module_files(loaded), out_dir) if copy else []
    progress.update(stage="compile", modules=modules, graphs=graphs, graph_digests=digests)


def _time_steps(
    work: Workload, compiled: Callable[..., object], recipe: Recipe, progress: _Progress
) -> tuple[StepTimes, StepTimes]:
    """Eager and compiled step times (interleaved) and peak memory of each; returns (eager, compiled)."""
    from reportgen.run import measure

    profile = recipe.profile
    _log(f"timing {profile.steps} blocks of {profile.block_steps} eager and compiled steps, alternating")
    from reportgen.run.capture import counted_gc

    with counted_gc() as pauses:  # left on, as in a user's loop; counted, since a pass over a compile-sized heap shows
        eager_t, compiled_t, probe_ms = measure.time_interleaved(
            work, work.model, compiled, recipe.profile.steps, recipe.profile.block_steps
        )
    _log(f"step timing: {pauses.count} GC passes took {pauses.seconds * 1e3:.1f} ms")
    progress.metrics(
        eager=eager_t,
        compiled=compiled_t,
        host_probe_ms=probe_ms,
        peak_memory_eager_bytes=measure.peak_memory(work, work.model),
        peak_memory_compiled_bytes=measure.peak_memory(work, compiled, cudagraphs=recipe.compile.uses_cudagraphs),
    )
    progress.update(stage="timing")
    return eager_t, compiled_t


def _profile_and_capture(
    work: Workload,
    compiled: Callable[..., object],
    recipe: Recipe,
    out_dir: Path,
    progress: _Progress,
    follower: bool = False,
    timer: GraphTimer | None = None,
) -> Capture | None:
    """Graph benchmarks, the profiled steps (the trace), then the optional captures that read them (None for a
    follower rank: it runs the steps the collectives need, and keeps its traces)."""
    from reportgen.run import measure

    captures = _Captures(work.device, out_dir, progress)
    steps = recipe.profile.profiled_steps
    _log(f"profiling {steps} compiled steps, then {steps} eager steps")
    measure.profile_steps(work, compiled, steps, out_dir / TRACE_FILE)
    progress.update(stage="profile", trace_file=TRACE_FILE)
    # Eager's device figures and counts come from its own profiled steps, recorded as compiled's are.
    eager = captures.attempt(
        "eager profile", lambda: measure.profile_steps(work, work.model, steps, out_dir / EAGER_TRACE_FILE)
    )
    if eager is not None:
        progress.update(eager_trace_file=EAGER_TRACE_FILE)
    captures.attempt("shapes", lambda: measure.record_shapes(work, compiled, out_dir / SHAPES_TRACE_FILE))
    if follower:
        (out_dir / SHAPES_TRACE_FILE).unlink(missing_ok=True)  # its steps were needed, not its shapes
        return None
    graphs: list[GraphBenchmark] = []
    if (skipped := graphs_not_timed(recipe)) is not None:
        captures.notes.append(skipped)
    elif timer is not None:
        _log("timing and profiling each compiled graph alone in a fresh process (as `wrapper.py -p` does)")
        graphs = captures.attempt("graph benchmarks", lambda: timer.time(captures.files)) or []
    _log("benchmarking hot kernels with Inductor's own harnesses")
    return captures.finish(graphs)


class _Captures:
    """Optional captures: each one that fails leaves a note, never fails the run."""

    def __init__(self, device: str, out_dir: Path, progress: _Progress) -> None:
        self.device, self.out_dir, self.progress = device, out_dir, progress
        self.files: list[ModuleFile] = progress.result.modules
        self.notes: list[str] = []

    def attempt(self, what: str, job: Callable[[], _T]) -> _T | None:
        started = time.perf_counter()
        try:
            return job()
        except Exception as exc:  # an optional capture must not sink the run
            traceback.print_exc()
            self.notes.append(f"{what} skipped: {type(exc).__name__}: {exc}")
            return None
        finally:
            _log(f"{what}: {time.perf_counter() - started:.1f} s")
            self.progress.mark(what)

    def finish(self, graphs: list[GraphBenchmark]) -> Capture:
        from reportgen.run import capture

        fields: dict[str, object] = {"graph_benchmarks": graphs, **_tf32()}
        if self.device == "cuda":
            fields["copy_bandwidth_gbps"] = self.attempt("copy bandwidth", capture.copy_bandwidth_gbps)
            trace = self.out_dir / TRACE_FILE
            kernels = self.attempt(
                "kernel benchmarks",
                lambda: capture.benchmark_kernels(
                    self.files, self.out_dir, trace, notes=self.notes, cache_dir=_cache_dir()
                ),
            )
            fields["kernel_benchmarks"] = kernels or []
        return Capture(notes=self.notes, **fields)  # type: ignore[arg-type]


def _tf32() -> dict[str, bool]:
    """Whether float32 products could run in TF32, as the model left the settings (the peak they are held to)."""
    import torch

    return {
        "tf32_matmul": torch.get_float32_matmul_precision() != "highest",
        "tf32_cudnn": bool(torch.backends.cudnn.allow_tf32),
    }


def _cache_dir() -> Path | None:
    """The run's private Inductor cache (the launcher sets it), still holding the tuned configs."""
    value = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    return Path(value) if value else None


def _is_oom(exc: BaseException) -> bool:
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()


def _exit_with_parent(interval_s: float = 1.0) -> None:
    """End the run, compile workers included, once the parent is gone: a killed `reportgen run` leaves no orphan."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval_s)
        if os.getpgid(0) == os.getpid():  # the launcher starts the child as its own process group's leader
            os.killpg(0, signal.SIGKILL)
        os._exit(1)

    threading.Thread(target=watch, name="reportgen-parent-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    """Run the spec; exit 0 on success, 1 on a failure recorded in child-result.json."""
    _exit_with_parent()
    spec_path, out_dir = (argv if argv is not None else sys.argv[1:])[:2]
    spec = ChildSpec.model_validate_json(Path(spec_path).read_text(encoding="utf-8"))
    place = distributed.rank_from_env() if spec.recipe.distributed is not None else None
    out = Path(out_dir)
    if place is not None and not place.leader:  # a follower rank writes into its own folder of the bundle
        out = out / rank_dir(place.rank)
        out.mkdir(parents=True, exist_ok=True)
    progress = _Progress(out)
    host = None
    if spec.placement is not None and (place is None or place.leader):  # before torch starts its threads
        if spec.placement.window_socket:  # the matrix's coordinator; the graph-timing process inherits it
            os.environ[window.SOCKET_VARIABLE] = spec.placement.window_socket
            os.environ[window.ROLE_VARIABLE] = spec.placement.name
        host = Measurements(spec.placement, apply_placement(spec.placement))
        progress.update(isolation=host.isolation)
    if place is None or place.leader:
        window.connect()  # a coordinator (if any) pauses this run during the others' timed windows from now on
    try:
        _run(spec, out, progress, host, place)
    except Exception as exc:  # the workload is user code: every failure becomes data
        traceback.print_exc()
        summary = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        status = "oom" if _is_oom(exc) else "failed"
        error = f"{summary} (stage after '{progress.result.stage}')"
        progress.update(status=status, error=error, failed_at=time.time())
        return 1
    finally:
        if place is not None:
            distributed.end_group()
    return 0


if __name__ == "__main__":
    exit_now(main())
