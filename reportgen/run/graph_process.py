"""Each compiled graph timed and profiled alone, in a fresh process, as `python wrapper.py -p` does.

The run's child starts `python -m reportgen.run.graph_process <bundle dir>` after its own steps, with its
environment (the run's warm Inductor cache: the wrappers load their compiled kernels, nothing is compiled
again). Timing a launch-bound graph in the run's own process measured its CPU time under that process's
state (a heap of compile-sized objects, compile workers, hooks): mixnet_l's forward graph took 15.4 ms
per call there against 12.2 ms in a fresh `-p` process on an H100. A fresh process is what `-p` measures.

The run starts it early (`GraphTimer`, before its compile): the process imports torch and Inductor and opens the GPU
while the run compiles, which needs neither the GPU nor more than a core of its own, then waits on its stdin. On a
lent H200 (torch 2.11) a graph-timing process spent 3.0 s importing torch and 11.6 s more loading Inductor and the
wrappers' kernels, all of it on the run's critical path when it started after the run's own steps.

Protocol: the child writes the bundle's wrapper files (`ModuleFile`s) to `graphs/request.json`, then (`GraphTimer`)
one line of JSON on the process's stdin: the timed-window variables as they are now (the timing lock is taken
after the process started); stdin closed with no line: the run ended without asking, and the process exits. The
process writes the `GraphBenchmark`s, with their profile traces, to `graphs/benchmarks.json`.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from pydantic import TypeAdapter

from reportgen.bundle import GRAPHS_DIR, GraphBenchmark, ModuleFile
from reportgen.recipe import Recipe
from reportgen.run import window
from reportgen.run.protocol import exit_now

__all__ = [
    "REQUEST_FILE",
    "RESULT_FILE",
    "GraphTimer",
    "early_timer",
    "graphs_not_timed",
    "main",
]

REQUEST_FILE = f"{GRAPHS_DIR}/request.json"
RESULT_FILE = f"{GRAPHS_DIR}/benchmarks.json"
WINDOWS_FILE = f"{GRAPHS_DIR}/windows.json"
NO_WORKERS = {"TORCHINDUCTOR_COMPILE_THREADS": "1"}
"""The process loads the run's compiled kernels from its warm cache, compiling nothing: with the run's compile
workers (16 on a matrix run's share of a 2xH200 host) Inductor started its worker pool for them all the same, and
the process took 16.6-19.9 s against 10.5-13.4 s with none (fused_add_mul, transformer; 3 alternating rounds each,
one H200, `benchmarks/graph_process_cost.py`)."""
WAIT_FLAG = "--wait"
_FILES = TypeAdapter(list[ModuleFile])
_BENCHMARKS = TypeAdapter(list[GraphBenchmark])
_WINDOW_VARIABLES = (window.LOCK_VARIABLE, window.SOCKET_VARIABLE, window.ROLE_VARIABLE)


class GraphTimer:
    """This module in a process of its own, started now on the bundle at `out_dir`: it gets ready (imports, the
    GPU) and waits for `time`; `close` ends it if it was never asked. Its output goes to the run log."""

    def __init__(self, out_dir: Path, device: str, python: str) -> None:
        self.out_dir = out_dir
        (out_dir / GRAPHS_DIR).mkdir(exist_ok=True)
        command = [python, "-m", "reportgen.run.graph_process", str(out_dir), device, WAIT_FLAG]
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, env={**os.environ, **NO_WORKERS})

    def time(self, files: list[ModuleFile]) -> list[GraphBenchmark]:
        """Time and profile the wrappers among `files`; what the process measured.

        :raises RuntimeError: when the process fails (its output is in the run log)
        """
        out_dir, process = self.out_dir, self._process
        (out_dir / REQUEST_FILE).write_bytes(_FILES.dump_json([f for f in files if f.kind == "wrapper"]))
        assert process.stdin is not None
        now = {name: os.environ.get(name) for name in _WINDOW_VARIABLES}
        try:
            process.stdin.write(json.dumps(now).encode() + b"\n")
            process.stdin.close()
        except OSError:  # it ended already: its exit status says how
            pass
        returncode = process.wait()
        (out_dir / REQUEST_FILE).unlink(missing_ok=True)
        if returncode != 0:
            raise RuntimeError(f"the graph timing process exited with {returncode}")
        window.merge_log(out_dir / WINDOWS_FILE)
        path = out_dir / RESULT_FILE
        benchmarks = _BENCHMARKS.validate_json(path.read_bytes())
        path.unlink()
        return benchmarks

    def close(self) -> None:
        """End the process unless it has ended (a run that failed, or asked for nothing)."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        if self._process.stdin is not None and not self._process.stdin.closed:
            self._process.stdin.close()
        with contextlib.suppress(OSError):  # made for a request that never came: empty
            (self.out_dir / GRAPHS_DIR).rmdir()


def graphs_not_timed(recipe: Recipe) -> str | None:
    """Why the run times no compiled graph alone (a note for the capture), or None when it does."""
    if recipe.distributed is not None:  # a fresh process has no process group: a graph with a collective would hang
        return "graph benchmarks skipped: a distributed run's graphs are timed in the run only"
    if recipe.compile.uses_cudagraphs:
        # Calling a CUDA-graph-tree wrapper outside its tree hung on an H200 (torch 2.11), and would not
        # time what the model runs (graph replays) anyway.
        return f"graph benchmarks skipped: mode={recipe.compile.mode} replays CUDA graphs"
    return None


@contextlib.contextmanager
def early_timer(recipe: Recipe, device: str, out_dir: Path, follower: bool) -> Iterator[GraphTimer | None]:
    """The graph-timing process, started now so that its imports and the GPU's context are ready when the run asks
    (`GraphTimer`), ended with the block; None when the run times no graph alone."""
    if follower or graphs_not_timed(recipe) is not None:
        yield None
        return
    timer = GraphTimer(out_dir, device, sys.executable)
    try:
        yield timer
    finally:
        timer.close()


def _import_wrappers(files: list[ModuleFile], out_dir: Path, loaded: list[ModuleType]) -> Iterator[ModuleType]:
    """Each wrapper in the run's order, imported (its kernels loaded) only when the timing reads it, appended to
    `loaded`: a graph is timed before the next one is in the process (`capture.time_graphs`)."""
    from reportgen.run import inductor

    for file in sorted(files, key=lambda f: f.order):
        loaded.append(inductor.import_kernel_module(out_dir / file.path))
        yield loaded[-1]


def _ready(device: str) -> None:
    """What loading the wrappers needs anyway, done before the request: Inductor's modules, the GPU's context and its
    libraries (a matrix product, a convolution)."""
    import torch
    import torch._dynamo
    import torch._inductor.async_compile
    import torch._inductor.codecache

    if device == "cuda":
        x = torch.ones(8, 8, device=device, dtype=torch.float16)
        (x @ x).sum().item()
        torch.nn.functional.conv2d(x.view(1, 1, 8, 8), x[:1, :1].view(1, 1, 1, 1)).sum().item()


def _wait_for_request() -> bool:
    """Block until the run asks (one line of JSON on stdin: the window variables to take on); False: it never will."""
    line = sys.stdin.readline()
    if not line.strip():
        return False
    for name, value in json.loads(line).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    return True


def main(argv: list[str] | None = None) -> int:
    """Time, then profile, every wrapper of the bundle; 0 on success (and when a waiting process is never asked)."""
    stages = {"torch": time.perf_counter()}  # seconds per stage, for the run log
    from reportgen.run import capture

    args = argv if argv is not None else sys.argv[1:]
    out_dir, device = Path(args[0]), args[1]
    if WAIT_FLAG in args[2:]:
        stages["ready"] = time.perf_counter()
        _ready(device)
        stages["waiting"] = time.perf_counter()
        if not _wait_for_request():
            return 0
    files = _FILES.validate_json((out_dir / REQUEST_FILE).read_bytes())
    stages["load and timing"] = time.perf_counter()
    modules: list[ModuleType] = []
    timed = capture.time_graphs(_import_wrappers(files, out_dir, modules), files, out_dir)
    stages["profile"] = time.perf_counter()
    profiled = capture.profile_graphs(modules, files, timed, out_dir, device)
    stages["end"] = time.perf_counter()
    (out_dir / RESULT_FILE).write_bytes(_BENCHMARKS.dump_json(profiled, indent=2))
    window.dump_log(out_dir / WINDOWS_FILE)  # the run's isolation record counts these windows too
    times = list(stages.values())
    seconds = {name: round(end - start, 3) for name, start, end in zip(stages, times, times[1:], strict=False)}
    print(json.dumps({"graphs": len(profiled), "stages_s": seconds}), flush=True)  # (the run log)
    return 0


if __name__ == "__main__":
    exit_now(main())
