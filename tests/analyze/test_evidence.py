"""Tests of reportgen.analyze.evidence: compiled regions, nesting and CompiledFunction blocks from a trace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reportgen.analyze.evidence import region_evidence
from reportgen.bundle import RegionEvidence, read_analysis
from reportgen.formats.trace import Trace, load_trace

__all__: list[str] = []

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "tests" / "data" / "h200-mixnet_l" / "trace.json.gz"


def _span(name: str, ts: float, dur: float, tid: int = 1, cat: str = "cpu_op") -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur}


def _trace(events: list[dict[str, Any]]) -> Trace:
    return Trace(path=Path("synthetic.json"), events=events)


def _graph_break_step(start: float) -> list[dict[str, Any]]:
    """One training step of a frame with two graph breaks: regions 0/0 ⊃ 1/0 ⊃ 2/0, one CompiledFunction each."""
    return [
        _span("ProfilerStep#1", start, 1000, cat="user_annotation"),
        _span("Torch-Compiled Region: 0/0", start + 10, 600),
        _span("CompiledFunction", start + 20, 50),
        _span("Torch-Compiled Region: 1/0", start + 100, 500),
        _span("CompiledFunction", start + 110, 50),
        _span("Torch-Compiled Region: 2/0", start + 200, 300),
        _span("CompiledFunction", start + 210, 50),
        _span("CompiledFunctionBackward", start + 700, 100),
    ]


def test_nested_regions_of_graph_breaks() -> None:
    events = _graph_break_step(0) + _graph_break_step(2000)
    assert region_evidence(_trace(events)) == RegionEvidence(
        compiled_regions=3, nested_regions=4, compiled_function_blocks_per_step=3.0
    )


def test_sequential_regions_are_not_nested_and_threads_are_apart() -> None:
    events = [
        _span("Torch-Compiled Region: 0/0", 0, 100),
        _span("Torch-Compiled Region: 0/0", 100, 100),  # starts where the previous one ends
        _span("Torch-Compiled Region: 1/0", 50, 100, tid=2),  # inside the first in time, other thread
        _span("Torch-Compiled Region: 0/1", 0, 100, cat="gpu_user_annotation"),  # GPU-side copy: ignored
        _span("CompiledFunction", 10, 5),
    ]
    assert region_evidence(_trace(events)) == RegionEvidence(
        compiled_regions=2, nested_regions=0, compiled_function_blocks_per_step=None
    )


def test_same_start_counts_as_nested_and_forward_outside_steps_is_not_counted() -> None:
    events = [
        _span("ProfilerStep#3", 0, 500, cat="user_annotation"),
        _span("ProfilerStep#4", 500, 500, cat="user_annotation"),
        _span("Torch-Compiled Region: 0/0", 10, 100),
        _span("Torch-Compiled Region: 1/0", 10, 50),
        _span("CompiledFunction", 20, 5),
        _span("CompiledFunction", 1200, 5),  # after the last step
        {"ph": "X", "cat": "cpu_op", "name": "Torch-Compiled Region: 9/9", "ts": "bad", "dur": 1},
        "not an event",
    ]
    assert region_evidence(_trace(events)) == RegionEvidence(  # type: ignore[arg-type]
        compiled_regions=2, nested_regions=1, compiled_function_blocks_per_step=0.5
    )


def test_empty_trace() -> None:
    assert region_evidence(_trace([])) == RegionEvidence(compiled_regions=0, nested_regions=0)


def test_h200_mixnet_l_is_one_region() -> None:
    """The canned trace is cut to the compiled spans and kernels: no `ProfilerStep#N`, so no per-step count."""
    assert region_evidence(load_trace(H200)) == RegionEvidence(
        compiled_regions=1, nested_regions=0, compiled_function_blocks_per_step=None
    )


@pytest.mark.slow
def test_graph_breaks_recipe_gives_four_regions(tmp_path: Path) -> None:
    """Seed 001: three explicit graph breaks -> four compiled regions, three nested per step."""
    recipe = ROOT / "recipes" / "graph_breaks.yaml"
    cmd = [sys.executable, "-m", "reportgen", "run", str(recipe), "-o", str(tmp_path / "results")]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bundle = tmp_path / "results" / "graph_breaks"
    evidence = region_evidence(load_trace(bundle / "trace.json.gz"))
    assert evidence == RegionEvidence(compiled_regions=4, nested_regions=9, compiled_function_blocks_per_step=4.0)
    analysis = read_analysis(bundle)
    assert analysis is not None
    assert analysis.regions == evidence
    rules = [finding.rule for finding in analysis.findings]
    assert "graph-breaks" in rules and rules[-1] == "cpu-run"
    breaks = next(f for f in analysis.findings if f.rule == "graph-breaks")
    assert breaks.title == "3 graph breaks"
    assert "4 compiled regions" in breaks.evidence
