"""What a launch-config difference between two processes costs on the device: each differing kernel, both configs.

    python benchmarks/config_timing.py CALLS_JSON INDUCTOR_CACHE [--rounds 7] [--json OUT]

`step_calls.py` found reportgen's run child and a bare loop launching some Triton kernels with other configs on one
Inductor cache (a graph's FX-graph-cache entry keeps the configs its compile saved; an entry saved before tuning
re-reads the autotune cache on every load). Whether that can move a compiled step is a device-time question: this
loads each differing kernel's module from the cache (copied beside no `.best_config`, so every candidate config is
compiled), and times every candidate with Inductor's own `benchmark_all_configs` (`do_bench`, fresh inputs from the
module's `get_args`), `--rounds` times in turn. Per kernel it prints both sides' configs' median ms, and the sum of
the differences times each kernel's launches in the cache's wrappers: reportgen's side less the bare side's, per step.

CALLS_JSON: `step_calls.py --json` output (`{"reportgen": {"kernels": {...}}, "bare": {"kernels": {...}}}`, each
kernel a `KernelLaunch` dump). Needs a CUDA device and Triton, and reportgen on the path (`PYTHONPATH`, as the
sittings' device command sets it).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from fidelity_records import Launches, other_configs

from reportgen.escape import one_line


def differing(calls: dict[str, dict[str, Launches]]) -> list[tuple[str, str, str, str]]:
    """(kernel, source, reportgen's config, bare's config) for each kernel both sides ran with other configs
    (`fidelity_records.other_configs`, as `step_calls.py` pairs them)."""
    _, changes = other_configs(calls["reportgen"]["kernels"], calls["bare"]["kernels"])
    return [(c.kernel, c.source, c.after, c.before) for c in changes]


def candidate_times(source: Path, kernel: str, rounds: int, scratch: Path) -> dict[str, list[float]]:
    """Every candidate config of `kernel` (in module `source`) → its ms per round."""
    copy = scratch / source.name
    shutil.copyfile(source, copy)  # beside no .best_config: the autotune cache misses, all candidates stay
    spec = importlib.util.spec_from_file_location(f"cfg_{source.stem}", copy)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tuner = getattr(module, kernel)
    tuner.precompile()
    args = module.get_args()
    times: dict[str, list[float]] = {}
    for _ in range(rounds):
        for launcher, ms in tuner.benchmark_all_configs(*args).items():
            times.setdefault(str(launcher.config), []).append(float(ms))
    return times


def launches_per_step(kernel: str, source: str, modules: list[Path]) -> int:
    """How often a wrapper calls `kernel`: the most over the cache's modules but the kernel's own (its harness)."""
    needle = f"{kernel}.run("
    return max((p.read_text(errors="replace").count(needle) for p in modules if p.name != source), default=0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("calls", type=Path)
    parser.add_argument("cache", type=Path)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args(argv)
    rows, total = [], 0.0
    modules = sorted(options.cache.rglob("c*.py"))
    sources = {p.name: p for p in modules}
    try:
        import torch

        torch.cuda.set_device(0)
    except Exception as error:  # shown; each kernel then reports its own failure
        print(f"no CUDA device: {one_line(str(error))}")
    with tempfile.TemporaryDirectory() as scratch:
        for kernel, source, ours, theirs in differing(json.loads(options.calls.read_text())):
            launches = launches_per_step(kernel, source, modules)
            row: dict[str, object] = {"kernel": kernel, "source": source, "reportgen": ours, "bare": theirs}
            row["launches"] = launches
            try:
                times = candidate_times(sources[source], kernel, options.rounds, Path(scratch))
                row["candidates_ms"] = {config: statistics.median(ms) for config, ms in times.items()}
                ours_ms, theirs_ms = statistics.median(times[ours]), statistics.median(times[theirs])
                row.update(reportgen_ms=ours_ms, bare_ms=theirs_ms)
                total += (ours_ms - theirs_ms) * launches
                print(
                    f"{one_line(kernel)} (x{launches}): reportgen {ours_ms * 1e3:.1f} us, bare {theirs_ms * 1e3:.1f} us",
                    flush=True,
                )
            except Exception as error:  # one kernel's failure is shown, the others still run
                row["error"] = f"{type(error).__name__}: {error}"
                print(f"{one_line(kernel)}: {one_line(str(row['error']))}", flush=True)  # text from files: escaped
            rows.append(row)
            if options.json:  # after each kernel: a run cut short keeps what it timed
                options.json.write_text(json.dumps({"kernels": rows, "difference_ms": total}, indent=1))
    timed = sum("reportgen_ms" in row for row in rows)
    print(
        f"{timed} of {len(rows)} differing kernels timed; per step (each times its launches in a wrapper), "
        f"reportgen's configs less the bare's: {total * 1e3:+.1f} us"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
