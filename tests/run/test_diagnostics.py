"""Compile diagnostics: message parsers and phase mapping on canned input, the recorder on real torch.compile."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from reportgen.bundle import CompileDiagnostics, Recompile
from reportgen.run.diagnostics import PHASES, _recompiles, compile_phases, parse_graph_break, parse_recompile

ROOT = Path(__file__).resolve().parents[2]

BREAK_2_13 = """\
Graph break in user code at /work/main/recipes/models.py:29
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Call to `torch._dynamo.graph_break()`
  Explanation: User-inserted graph break. Message: None

User code traceback:
  File "/work/main/recipes/models.py", line 29, in forward
    torch._dynamo.graph_break()
"""

RECOMPILE_VERBOSE = """\
Recompiling function scale_shift in /work/main/tests/x.py:3
    triggered by the following guard failure(s):
    guard 0 failures:
    - 0/1: tensor 'x' size mismatch at index 0. expected 5, actual 6

    guard 1 failures:
    - 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6"""


def test_graph_break_message_gives_reason_and_user_location() -> None:
    reason, location = parse_graph_break(BREAK_2_13, Path("/work/main")) or ("", None)
    assert location == "recipes/models.py:29"
    assert reason == (
        "Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):\n\n"
        "Call to `torch._dynamo.graph_break()`\n  Explanation: User-inserted graph break. Message: None"
    )


def test_suppressed_duplicate_of_torch_2_6_is_parsed() -> None:
    message = "Graph break (details suppressed) in user code at /src/m.py:7\nReason: Unsupported: call_method foo"
    assert parse_graph_break(message, Path("/work")) == ("Unsupported: call_method foo", "/src/m.py:7")


def test_frame_skip_takes_the_exception_and_the_innermost_frame() -> None:
    message = (
        "Graph break: torch.compile cannot properly resume from this graph break, which results in a skip.\n"
        "torch.compile will skip tracing the frame f (/w/a.py line 1) and fall back to eager.\n"
        "The graph break occurred in the following user code:\n"
        '  File "/w/a.py", line 3, in f\n    g()\n  File "/w/b.py", line 9, in g\n    h()\n'
    )
    reason, location = parse_graph_break(message, Path("/w"), exc_text="Unsupported: h") or ("", None)
    assert location == "b.py:9"
    assert reason.endswith("results in a skip.\nUnsupported: h")


def test_other_messages_are_not_graph_breaks() -> None:
    assert parse_graph_break("Recording cudagraph tree for graph without symints", Path("/")) is None


def test_recompile_message_joins_all_guard_failures() -> None:
    assert parse_recompile(RECOMPILE_VERBOSE, Path("/work/main")) == Recompile(
        frame="scale_shift (tests/x.py:3)",
        reason="0/1: tensor 'x' size mismatch at index 0. expected 5, actual 6; "
        "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6",
    )
    assert parse_recompile("Graph break in user code at a.py:1", Path("/")) is None


def test_recompiles_fall_back_to_compilation_metrics() -> None:
    metrics = [
        SimpleNamespace(co_name="f", co_filename="/w/a.py", co_firstlineno=3, recompile_reason=None),
        SimpleNamespace(co_name="f", co_filename="/w/a.py", co_firstlineno=3, recompile_reason="size mismatch"),
    ]
    assert _recompiles([], metrics, Path("/w")) == [Recompile(frame="f (a.py:3)", reason="size mismatch")]


def test_compile_phases_subtract_nested_timers() -> None:
    totals = {
        "_compile.compile_inner": 10.0,
        "OutputGraph.call_user_compiler": 8.0,
        "backward._backward_impl": 3.0,
        "compile_fx_inner": 9.0,
        "GraphLowering.compile_to_module": 5.0,
        "async_compile.wait": 2.0,
        "async_compile.precompile": 0.5,
        "mm_template_autotuning": 1.0,
        "mm_template_precompiling": 0.5,
        "CachingAutotuner.benchmark_all_configs": 0.25,
        "CUDAGraphNode.record": 0.125,
        "compile_file": 99.0,
    }
    assert compile_phases(totals) == {
        "dynamo": 2.0,
        "aot_autograd": 2.0,
        "inductor": 5.0,
        "kernel_compile": 2.5,
        "autotune": 1.75,
        "cudagraph_record": 0.125,
    }
    assert tuple(compile_phases(totals)) == PHASES


def test_runtime_timers_that_ran_inside_a_compile_are_not_counted_twice() -> None:
    """max-autotune benchmarks fused kernels at compile time, which tunes their Triton configs."""
    totals = {
        "_compile.compile_inner": 12.0,
        "OutputGraph.call_user_compiler": 11.9,
        "compile_fx_inner": 11.8,
        "benchmark_fused_nodes": 1.0,
        "benchmark_codegened_module": 0.5,
        "CachingAutotuner.coordinate_descent_tuning": 0.75,
    }
    phases = compile_phases(totals, {"autotune": 0.5, "cudagraph_record": 0.0})
    assert phases["autotune"] == 1.75 and phases["inductor"] == 10.3
    assert sum(phases.values()) == pytest.approx(12.25)


def test_compile_phases_clamp_timers_outside_their_parent() -> None:
    """An AOTAutograd cache hit waits for kernels outside compile_fx_inner: nothing goes negative."""
    totals = {"_compile.compile_inner": 3.0, "OutputGraph.call_user_compiler": 2.0, "async_compile.wait": 1.5}
    phases = compile_phases({**totals, "compile_fx_inner": 0.5})
    assert phases["inductor"] == 0.0 and phases["aot_autograd"] == 0.5
    assert sum(phases.values()) <= 3.0


def test_no_compile_means_no_phases() -> None:
    assert compile_phases({"gc": 0.1}) == {}


PRELUDE = """\
import json, logging, time
import torch
from reportgen.run.diagnostics import DiagnosticsRecorder
recorder = DiagnosticsRecorder()
t0 = time.perf_counter()
"""

EPILOGUE = """
diagnostics = recorder.finish()
wall_s = time.perf_counter() - t0
leftover = [n for n, lg in logging.root.manager.loggerDict.items()
            if isinstance(lg, logging.Logger) and any(type(h).__name__ == "_Sink" for h in lg.handlers)]
print(json.dumps({"wall_s": wall_s, "notes": recorder.notes, "leftover": leftover}))
print(diagnostics.model_dump_json())
"""


TRAIN_WITH_BREAKS = """\
from recipes.models import ModelWithBreaks
compiled = torch.compile(ModelWithBreaks())
x = torch.randn(64, 128)
recorder.start()
for _ in range(2):
    compiled(x).sum().backward()
"""

NEW_SHAPES = """\
def scale_shift(x):
    return x * 2 + 1

compiled = torch.compile(scale_shift, dynamic=False)
recorder.start()
for rows in (4, 5, 6):
    compiled(torch.randn(rows, 8))
"""

FUSED_ADD_MUL = """\
from recipes.models import FusedAddMul
compiled = torch.compile(FusedAddMul())
a, b, c = (torch.randn(256, 256) for _ in range(3))
recorder.start()
for _ in range(3):
    compiled(a, b, c)
"""


def _diagnose(
    tmp_path: Path, body: str, torch_logs: str | None = None
) -> tuple[CompileDiagnostics, dict[str, Any], str]:
    """Run PRELUDE + body + EPILOGUE in a fresh process (own Inductor cache); body calls recorder.start()."""
    script = tmp_path / "diagnose.py"
    script.write_text(PRELUDE + body + EPILOGUE, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor"),
    }
    env.pop("TORCH_LOGS", None)
    if torch_logs is not None:
        env["TORCH_LOGS"] = torch_logs
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    extra, diagnostics = proc.stdout.strip().splitlines()[-2:]
    return CompileDiagnostics.model_validate_json(diagnostics), json.loads(extra), proc.stderr


def _assert_phases_fit(diagnostics: CompileDiagnostics, wall_s: float) -> None:
    phases = diagnostics.compile_phases_s
    assert tuple(phases) == PHASES
    assert phases["inductor"] > 0 and phases["dynamo"] > 0
    assert 0 < sum(phases.values()) <= wall_s


@pytest.mark.slow
def test_model_with_breaks_training_reports_three_located_breaks(tmp_path: Path) -> None:
    d, extra, stderr = _diagnose(tmp_path, TRAIN_WITH_BREAKS)
    source = (ROOT / "recipes" / "models.py").read_text().splitlines()
    start = source.index("class ModelWithBreaks(nn.Module):")
    end = next(i for i in range(start + 1, len(source)) if source[i].startswith("class "))
    break_lines = [
        f"recipes/models.py:{i}"
        for i, text in enumerate(source, 1)
        if start < i <= end and "_dynamo.graph_break()" in text
    ]
    assert len(break_lines) == 3
    assert sum(b.count for b in d.graph_breaks) == 3
    assert sorted(b.location or "" for b in d.graph_breaks) == break_lines
    assert all("graph_break" in b.reason for b in d.graph_breaks)
    assert d.unique_graphs == 4 and len(d.graph_ops) == 4 and all(n > 0 for n in d.graph_ops)
    assert d.recompiles == []
    # a frame per graph: forward, then the three resume functions after each break; no recompile
    assert [v.compile_id.split("/")[1] for v in d.versions] == ["0"] * 4 and all(v.reason is None for v in d.versions)
    assert d.versions[0].function.startswith("forward (recipes/models.py:")
    assert d.cache["fxgraph_cache_miss"] > 0 and d.cache["autograd_cache_miss"] > 0
    assert d.cudagraphs == "off" and d.cudagraph_skip_reasons == []
    _assert_phases_fit(d, extra["wall_s"])
    assert extra["notes"] == [] and extra["leftover"] == []
    assert "Graph break in user code" not in stderr  # recorded, not printed


@pytest.mark.slow
def test_new_shapes_without_dynamic_recompile_with_a_size_reason(tmp_path: Path) -> None:
    """With TORCH_LOGS=recompiles the user's log output stays on stderr and is recorded too."""
    d, _, stderr = _diagnose(tmp_path, NEW_SHAPES, torch_logs="recompiles")
    assert "Recompiling function scale_shift" in stderr
    assert len(d.recompiles) >= 1
    assert all(r.frame.startswith("scale_shift (") for r in d.recompiles)
    assert all("size" in r.reason or "shape" in r.reason for r in d.recompiles)
    assert d.graph_breaks == [] and d.unique_graphs == 3
    # each compile of the frame is a version of it: the first made by no guard, the others by a size guard of
    # the version before (0/0 failed for 5 rows, 0/1 for 6)
    assert [v.compile_id for v in d.versions] == ["0/0", "0/1", "0/2"]
    assert all(v.function.startswith("scale_shift (") for v in d.versions)
    assert d.versions[0].reason is None
    assert [(v.reason or "")[:4] for v in d.versions[1:]] == ["0/0:", "0/1:"]


@pytest.mark.slow
def test_fused_add_mul_has_no_breaks_and_phases_within_wall_time(tmp_path: Path) -> None:
    d, extra, _ = _diagnose(tmp_path, FUSED_ADD_MUL)
    assert d.graph_breaks == [] and d.recompiles == []
    assert d.unique_graphs == 1 and d.graph_ops == [2]
    _assert_phases_fit(d, extra["wall_s"])
    assert d.cache["fxgraph_cache_miss"] == 1
    assert d.cudagraphs == "off"
