"""Each compiled graph timed and profiled alone, in a fresh process, as `python wrapper.py -p` does.

The run's child starts `python -m reportgen.run.graph_process <bundle dir>` after its own steps, with its
environment (the run's warm Inductor cache: the wrappers load their compiled kernels, nothing is compiled
again). Timing a launch-bound graph in the run's own process measured its CPU time under that process's
state (a heap of compile-sized objects, compile workers, hooks): mixnet_l's forward graph took 15.4 ms
per call there against 12.2 ms in a fresh `-p` process on an H100. A fresh process is what `-p` measures.

Protocol: the child writes the bundle's wrapper files (`ModuleFile`s) to `graphs/request.json`; this
process writes the `GraphBenchmark`s, with their profile traces, to `graphs/benchmarks.json`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

from pydantic import TypeAdapter

from reportgen.bundle import GRAPHS_DIR, GraphBenchmark, ModuleFile
from reportgen.run import window

__all__ = ["REQUEST_FILE", "RESULT_FILE", "main", "time_graphs_in_fresh_process"]

REQUEST_FILE = f"{GRAPHS_DIR}/request.json"
RESULT_FILE = f"{GRAPHS_DIR}/benchmarks.json"
WINDOWS_FILE = f"{GRAPHS_DIR}/windows.json"
NO_WORKERS = {"TORCHINDUCTOR_COMPILE_THREADS": "1"}
"""The process loads the run's compiled kernels from its warm cache, compiling nothing: with the run's compile
workers (16 on a matrix run's share of a 2xH200 host) Inductor started its worker pool for them all the same, and
the process took 16.6-19.9 s against 10.5-13.4 s with none (fused_add_mul, transformer; 3 alternating rounds each,
one H200, `benchmarks/graph_process_cost.py`)."""
_FILES = TypeAdapter(list[ModuleFile])
_BENCHMARKS = TypeAdapter(list[GraphBenchmark])


def time_graphs_in_fresh_process(
    files: list[ModuleFile], out_dir: Path, device: str, python: str
) -> list[GraphBenchmark]:
    """Start this module in a new process on the bundle at `out_dir` and return what it measured.

    :raises RuntimeError: when the process fails (its output is in the run log)
    """
    (out_dir / GRAPHS_DIR).mkdir(exist_ok=True)
    (out_dir / REQUEST_FILE).write_bytes(_FILES.dump_json([f for f in files if f.kind == "wrapper"]))
    command = [python, "-m", "reportgen.run.graph_process", str(out_dir), device]
    env = {**os.environ, **NO_WORKERS}
    result = subprocess.run(command, check=False, env=env)  # inherits stdout/stderr: the run log
    (out_dir / REQUEST_FILE).unlink(missing_ok=True)
    if result.returncode != 0:
        raise RuntimeError(f"the graph timing process exited with {result.returncode}")
    window.merge_log(out_dir / WINDOWS_FILE)
    path = out_dir / RESULT_FILE
    benchmarks = _BENCHMARKS.validate_json(path.read_bytes())
    path.unlink()
    return benchmarks


def _import_wrappers(files: list[ModuleFile], out_dir: Path) -> list[ModuleType]:
    from reportgen.run import inductor

    return [inductor.import_kernel_module(out_dir / f.path) for f in sorted(files, key=lambda f: f.order)]


def main(argv: list[str] | None = None) -> int:
    """Time, then profile, every wrapper of the bundle; 0 on success."""
    stages = {"torch": time.perf_counter()}  # seconds per stage, for the run log
    from reportgen.run import capture

    out_dir_arg, device = (argv if argv is not None else sys.argv[1:])[:2]
    out_dir = Path(out_dir_arg)
    files = _FILES.validate_json((out_dir / REQUEST_FILE).read_bytes())
    stages["load"] = time.perf_counter()
    modules = _import_wrappers(files, out_dir)
    stages["timing"] = time.perf_counter()
    timed = capture.time_graphs(modules, files, out_dir)
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
    sys.exit(main())
