"""Runtime per compiled version (issue 31, item 4): the joining rules on graphs made here, and a real CPU run of
`recipes/recompiles.yaml` against the raw trace's region spans."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from reportgen.analyze import analyze
from reportgen.analyze.frames import version_runtimes
from reportgen.bundle import (
    CompiledVersion,
    GraphAnalysis,
    GraphModule,
    GraphRegion,
    ModuleIndex,
    RunStatus,
    WrapperInfo,
    read_capture,
    read_manifest,
)
from reportgen.recipe import load_recipe
from reportgen.run import RunOptions, run_recipe

ROOT = Path(__file__).resolve().parents[2]
REGION = "Torch-Compiled Region: "


def _graph(number: int, kind: str, time_us: float, wrapper: str, regions: list[GraphRegion]) -> GraphAnalysis:
    calls = max((r.calls for r in regions), default=5)
    return GraphAnalysis(
        graph=number, label=f"{kind} (graph {number})", key=None, kind=kind, wrapper=wrapper,  # type: ignore[arg-type]
        calls=calls, wall_us=1.0, kernel_time_us=time_us, regions=regions,
    )  # fmt: skip


def _module(number: int, aot_id: str) -> GraphModule:
    info = WrapperInfo(kind="forward", kernels=[], extern_calls=[], aot_id=aot_id)
    return GraphModule(graph=number, wrapper_path=f"modules/wrappers/w{number}.py", info=info)


def test_a_backward_joins_its_forwards_versions_by_aot_id_shared_by_their_calls() -> None:
    """Forward graph 0 (AOT 1) ran 2 calls in version 0/0 (100 µs) and 3 in 0/1 (300 µs); its backward (AOT 1,
    500 µs) splits 2:3, 200 and 300 µs. Version 0/2 was compiled and never ran; 1/0 ran but the diagnostics do
    not name it (listed after, function unknown)."""
    forward = _graph(
        0, "forward", 400.0, "modules/wrappers/w0.py",
        [GraphRegion(region=f"{REGION}0/0", calls=2, kernel_time_us=100.0),
         GraphRegion(region=f"{REGION}0/1", calls=3, kernel_time_us=300.0)],
    )  # fmt: skip
    backward = _graph(1, "backward", 500.0, "modules/wrappers/w1.py", [])
    other = _graph(
        2, "inference", 7.0, "modules/wrappers/w2.py", [GraphRegion(region=f"{REGION}1/0", calls=4, kernel_time_us=7.0)]
    )
    index = ModuleIndex(graphs=[_module(0, "1_forward"), _module(1, "1_backward"), _module(2, "2_inference")])
    compiled = [
        CompiledVersion(compile_id="0/0", function="f (a.py:1)"),
        CompiledVersion(compile_id="0/1", function="f (a.py:1)", reason="0/0: size mismatch"),
        CompiledVersion(compile_id="0/2", function="f (a.py:1)", reason="0/1: size mismatch"),
    ]
    versions = version_runtimes([forward, backward, other], index, compiled)
    assert [(v.compile_id, v.calls, v.device_time_us) for v in versions] == [
        ("0/0", 2, 300.0), ("0/1", 3, 600.0), ("0/2", 0, 0.0), ("1/0", 4, 7.0)
    ]  # fmt: skip
    assert versions[0].graphs == ["forward (graph 0)", "backward (graph 1)"] and versions[2].graphs == []
    assert versions[1].reason == "0/0: size mismatch" and versions[3].function is None


def test_a_backward_whose_wrapper_was_kept_from_another_compile_joins_the_forward_with_as_many_calls() -> None:
    """graph_breaks on CPU: the three resume frames 1/0, 2/0, 3/0 compile equal graphs; the bundle keeps one
    forward wrapper (`1_forward`, 9 calls over the three regions) and one backward (`3_backward`, 9 calls). The
    frame 0/0's pair joins by AOT ID; the other backward joins the one unjoined forward of 9 calls, 3 calls
    (and a third of its time) each. A backward of another call count stays unjoined."""
    regions = [GraphRegion(region=f"{REGION}{n}/0", calls=3, kernel_time_us=10.0) for n in (1, 2, 3)]
    graphs = [
        _graph(
            0,
            "forward",
            100.0,
            "modules/wrappers/w0.py",
            [GraphRegion(region=f"{REGION}0/0", calls=3, kernel_time_us=100.0)],
        ),
        _graph(1, "forward", 30.0, "modules/wrappers/w1.py", regions),
        _graph(2, "backward", 90.0, "modules/wrappers/w2.py", []).model_copy(update={"calls": 9}),
        _graph(3, "backward", 200.0, "modules/wrappers/w3.py", []).model_copy(update={"calls": 3}),
    ]
    index = ModuleIndex(graphs=[_module(0, "0_forward"), _module(1, "1_forward"), _module(2, "3_backward"),
                                _module(3, "0_backward")])  # fmt: skip
    versions = version_runtimes(graphs, index, [])
    assert [(v.compile_id, v.calls, v.device_time_us) for v in versions] == [
        ("0/0", 3, 300.0), ("1/0", 3, 40.0), ("2/0", 3, 40.0), ("3/0", 3, 40.0)
    ]  # fmt: skip
    assert sum(v.device_time_us for v in versions) == sum(g.kernel_time_us for g in graphs)
    odd = [*graphs[:2], graphs[2].model_copy(update={"calls": 7}), graphs[3]]
    assert [v.device_time_us for v in version_runtimes(odd, index, [])] == [300.0, 10.0, 10.0, 10.0]


def test_without_compiled_modules_a_backward_is_not_joined() -> None:
    forward = _graph(0, "forward", 10.0, "w0", [GraphRegion(region=f"{REGION}0/0", calls=1, kernel_time_us=10.0)])
    versions = version_runtimes([forward, _graph(1, "backward", 5.0, "w1", [])], None, [])
    assert [(v.compile_id, v.device_time_us, v.function) for v in versions] == [("0/0", 10.0, None)]


def _region_calls(trace: Path) -> dict[str, int]:
    """`Torch-Compiled Region` spans per name inside the trace's `ProfilerStep#` spans, read from the raw events."""
    with gzip.open(trace, "rt", encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("name", "").startswith("ProfilerStep#")]
    found: dict[str, int] = {}
    for e in events:
        name = e.get("name", "")
        if e.get("ph") == "X" and name.startswith(REGION) and any(a <= e["ts"] < b for a, b in steps):
            found[name[len(REGION) :]] = found.get(name[len(REGION) :], 0) + 1
    return found


@pytest.mark.slow
def test_the_recompiles_recipe_shows_each_versions_calls_and_time(tmp_path: Path) -> None:
    """recipes/recompiles.yaml cycles batch sizes 8, 16, 24: 0/0 is compiled for 8, 16 fails its size guard and
    0/1 is compiled with a dynamic batch, which then takes every call (the newest version's guards go first)."""
    recipe_dir = tmp_path / "recipes"
    shutil.copytree(ROOT / "recipes", recipe_dir)
    path = recipe_dir / "recompiles.yaml"
    bundle_dir = run_recipe(load_recipe(path), path, tmp_path / "results", RunOptions())
    manifest = read_manifest(bundle_dir)
    assert manifest.status is RunStatus.ok, manifest.error
    analysis = analyze(bundle_dir, manifest, read_capture(bundle_dir, manifest))
    versions = {v.compile_id: v for v in analysis.versions}
    assert list(versions) == ["0/0", "0/1"]
    assert {k: v.calls for k, v in versions.items() if v.calls} == _region_calls(bundle_dir / "trace.json.gz")
    assert versions["0/0"].calls == 0 and versions["0/0"].device_time_us == 0
    assert "size mismatch" in (versions["0/1"].reason or "") and versions["0/1"].function.startswith("forward (")
    graphs = [g for g in analysis.graphs if g.graph is not None]
    assert versions["0/1"].graphs == [g.label for g in graphs]  # its forward and, joined by AOT ID, its backward
    assert versions["0/1"].device_time_us == pytest.approx(sum(g.kernel_time_us for g in graphs))
