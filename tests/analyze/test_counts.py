"""Counts per profiled step (reportgen.analyze.counts): a synthetic trace whose counts are known by
construction, and the real H100/H200 traces against counts taken from their raw events with plain json."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from reportgen.analyze import attribute_graphs, step_counts, step_figures
from reportgen.formats import MEASUREMENT_SPAN, read_trace
from reportgen.formats.trace import load_trace
from tests.data import H100_FIXTURE, H200_MIXNET_TRACE

__all__: list[str] = []

PID = 7


class _Trace:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.correlation = 0

    def cpu(self, name: str, ts: float, dur: float = 1, tid: int = 1, cat: str = "cpu_op") -> None:
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": PID, "tid": tid, "ts": ts, "dur": dur})

    def runtime(self, name: str, ts: float, tid: int = 1) -> int:
        self.correlation += 1
        args = {"correlation": self.correlation}
        self.events.append(
            {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": PID, "tid": tid, "ts": ts, "dur": 1, "args": args}
        )
        return self.correlation

    def gpu(self, name: str, correlation: int, ts: float, cat: str = "kernel") -> None:
        args = {"correlation": correlation}
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": 5, "args": args})

    def write(self, path: Path) -> Path:
        path.write_bytes(gzip.compress(json.dumps({"traceEvents": self.events}).encode()))
        return path


def _two_steps() -> _Trace:
    """Step 0 [0, 100), step 1 [100, 200). Per step, built by hand:

    step 0: launches 3 (a kernel, a graph replay of 2 kernels, a DtoD copy), runtime calls 5 (+ a sync, a memcpy),
    kernels 3,
    copies 1 (HtoD; the DtoD copy is not one), ATen ops 3 (one on the backward thread), graphs 1;
    step 1: launches 1, runtime calls 1, kernels 1 (run after the step ended: counted where it was launched),
    ATen ops 1, graphs 2 (a graph break); reportgen's synchronisation in its own span is not the model's. Outside
    both steps: a launch and an op, not counted.
    """
    t = _Trace()
    t.cpu("ProfilerStep#4", 0, 100, cat="user_annotation")
    t.cpu("ProfilerStep#5", 100, 100, cat="user_annotation")
    t.cpu("## Call CompiledFxGraph fabc ##", 2, 50)
    t.cpu("aten::mm", 3)
    t.cpu("aten::add", 4)
    t.cpu("aten::mul", 60, tid=2)  # the autograd engine's thread
    t.gpu("triton_poi_fused_0", t.runtime("cudaLaunchKernel", 5), 10)
    replay = t.runtime("cudaGraphLaunch", 6)
    t.gpu("triton_red_fused_1", replay, 20)
    t.gpu("triton_red_fused_2", replay, 30)
    t.runtime("cudaStreamSynchronize", 40)
    t.gpu("Memcpy HtoD (Pageable -> Device)", t.runtime("cudaMemcpyAsync", 41), 42, cat="gpu_memcpy")
    t.gpu("Memcpy DtoD (Device -> Device)", t.runtime("cuLaunchKernel", 43), 44, cat="gpu_memcpy")
    t.cpu("## Call CompiledFxGraph fabc ##", 110, 10)
    t.cpu("## Call CompiledFxGraph fdef ##", 130, 10)
    t.cpu("aten::relu", 131)
    t.gpu("triton_poi_fused_3", t.runtime("cuLaunchKernel", 195), 230)
    t.cpu(MEASUREMENT_SPAN, 196, 3, cat="user_annotation")  # reportgen's own synchronisation: not counted
    t.runtime("cudaDeviceSynchronize", 197)
    t.gpu("outside", t.runtime("cudaLaunchKernel", 250), 260)
    t.cpu("aten::outside", 251)
    return t


EXPECTED = {
    "kernels": [3, 1],
    "launches": [3, 1],  # the DtoD copy went through cuLaunchKernel here: a launch, not a kernel nor a copy
    "runtime_calls": [5, 1],
    "syncs": [1, 0],
    "memcpy_calls": [1, 0],
    "copies": [1, 0],
    "aten_ops": [3, 1],
    "graphs": [1, 2],
}


@pytest.mark.parametrize("reader", ["stream", "load"])
def test_each_count_per_step_on_a_trace_built_by_hand(tmp_path: Path, reader: str) -> None:
    path = _two_steps().write(tmp_path / "t.json.gz")
    trace = read_trace(path, "cuda") if reader == "stream" else load_trace(path)
    counts, ops, kernels, steps = step_counts(trace, "cuda")
    assert steps == 2
    assert counts == EXPECTED
    assert ops == {"aten::mm": 1, "aten::add": 1, "aten::mul": 1, "aten::relu": 1}
    assert kernels["triton_red_fused_1"] == 1 and "outside" not in kernels


def test_a_cpu_trace_has_no_gpu_counts(tmp_path: Path) -> None:
    path = _two_steps().write(tmp_path / "t.json.gz")
    counts, *_ = step_counts(read_trace(path, "cpu"), "cpu")
    assert counts == {"aten_ops": [3, 1], "graphs": [1, 2]}


def test_figures_take_device_time_from_the_step_windows(tmp_path: Path) -> None:
    path = _two_steps().write(tmp_path / "t.json.gz")
    trace = read_trace(path, "cuda")
    figures = step_figures(trace, "cuda", attribute_graphs(trace, "cuda").steps)
    # Step 0 launched 3 kernels and 2 copies of 5 us each; step 1 one kernel (it ran after the step).
    assert figures.device_us == [25.0, 5.0]
    assert figures.count("graphs") == 1.5 and figures.kernels["triton_poi_fused_3"] == 0.5


def _raw_counts(path: Path) -> dict[str, int]:
    """The whole trace's counts from its raw events (no step spans in these traces: one step)."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    launches = {e["args"]["correlation"] for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")}
    return {
        "runtime_calls": len(launches),
        "launches": sum(
            1
            for e in events
            if e.get("cat") in ("cuda_runtime", "cuda_driver") and "Launch" in e["name"] and "Kernel" in e["name"]
        ),
        "kernels": sum(1 for e in events if e.get("cat") == "kernel" and e["args"]["correlation"] in launches),
        "aten_ops": sum(1 for e in events if e.get("cat") == "cpu_op" and e["name"].startswith("aten::")),
    }


@pytest.mark.parametrize("path", [H100_FIXTURE / "trace.json.gz", H200_MIXNET_TRACE], ids=["h100", "h200"])
def test_real_traces_count_what_their_raw_events_hold(path: Path) -> None:
    counts, ops, _, steps = step_counts(read_trace(path, "cuda"), "cuda")
    raw = _raw_counts(path)
    assert steps == 1
    assert {name: counts[name][0] for name in raw} == raw  # type: ignore[index]
    assert sum(ops.values()) == raw["aten_ops"]
    assert counts["graphs"][0] > 0
