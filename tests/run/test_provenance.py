"""Kernel provenance in the run's child: real torch.compile on the CPU, and the fallbacks when torch lacks a piece."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import torch

from reportgen.analyze import analyze
from reportgen.bundle import RunStatus, read_capture, read_manifest, read_provenance
from reportgen.formats import WrapperSite
from reportgen.recipe import load_recipe
from reportgen.run import RunOptions, run_recipe
from reportgen.run.provenance import ProvenanceRecorder, resolve_site
from tests.data import RECIPES_DIR

MODEL_SOURCE = RECIPES_DIR / "tiny_models.py"


def _line(text: str) -> int:
    """The line of `tiny_models.py` holding `text` (once)."""
    lines = MODEL_SOURCE.read_text(encoding="utf-8").splitlines()
    found = [number for number, line in enumerate(lines, 1) if text in line]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.slow
def test_cpp_kernels_land_on_their_module_paths_and_lines(tmp_path: Path) -> None:
    path = RECIPES_DIR / "provenance_net.yaml"
    bundle = run_recipe(load_recipe(path), path, tmp_path, RunOptions())
    manifest = read_manifest(bundle)
    assert manifest.status is RunStatus.ok, manifest.error
    provenance = read_provenance(bundle)
    assert provenance is not None and provenance.method == "debug-handles" and not provenance.notes
    analysis = analyze(bundle, manifest, read_capture(bundle, manifest))
    norm, fc, head = _line("y = self.norm(x)"), _line("y = torch.relu(self.fc(y)) * 2"), _line("torch.tanh(self.head")
    found = {
        (graph.kind, kernel.name.split("_", 2)[2]): [(o.module_path, o.line, o.match) for o in kernel.origins]
        for graph in analysis.graphs
        for kernel in graph.kernels
        if "cpp_fused" in kernel.name
    }
    assert found == {
        ("forward", "cpp_fused_native_layer_norm_0"): [("blocks.0.norm", norm, "kernel")],
        ("forward", "cpp_fused_add_mul_native_layer_norm_relu_1"): [("blocks.1.norm", norm, "kernel")],
        ("forward", "cpp_fused_add_mul_relu_threshold_backward_2"): [("blocks.1", fc, "kernel")],
        ("forward", "cpp_fused_tanh_3"): [("", head, "kernel")],
        ("backward", "cpp_fused_sum_tanh_backward_0"): [("head", head, "kernel")],
        ("backward", "cpp_fused_mul_sum_threshold_backward_1"): [("blocks.1", fc, "kernel")],
        ("backward", "cpp_fused_add_mul_native_layer_norm_native_layer_norm_backward_relu_sum_threshold_backward_2"): [
            ("blocks.1.norm", norm, "kernel")
        ],
        ("backward", "cpp_fused_add_mul_native_layer_norm_native_layer_norm_backward_relu_3"): [
            ("blocks.1.norm", norm, "kernel")
        ],
    }
    gemms = {kernel.name: kernel.origins for graph in analysis.graphs for kernel in graph.kernels}["aten::addmm"]
    assert sorted((o.module_path, o.line) for o in gemms) == [("blocks.0.fc", fc), ("blocks.1.fc", fc), ("head", head)]
    summary = analysis.provenance
    assert (
        summary is not None and summary.module_share == pytest.approx(1.0) and summary.line_share == pytest.approx(1.0)
    )
    rolled = {row.path: row for row in summary.modules}
    assert rolled["blocks"].total_us == pytest.approx(rolled["blocks.0"].total_us + rolled["blocks.1"].total_us)


def test_without_the_tracking_level_the_recorder_says_cpp_kernels_go_unattributed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from torch._inductor import config

    monkeypatch.delattr(config.trace, "provenance_tracking_level", raising=False)
    before = config.post_grad_custom_post_pass
    recorder = ProvenanceRecorder().start()
    try:
        assert config.post_grad_custom_post_pass is not before
        assert not recorder.tracking
        assert recorder.notes == [
            f"torch {torch.__version__} has no provenance tracking level: C++ kernels get no module or line"
        ]
    finally:
        recorder.finish()
    assert config.post_grad_custom_post_pass is before


def test_a_user_pass_still_runs_and_keeps_its_cache_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    from torch._inductor import config
    from torch._inductor.custom_graph_pass import CustomGraphPass

    seen: list[object] = []

    class UserPass(CustomGraphPass):
        def __call__(self, graph: torch.fx.Graph) -> None:
            seen.append(graph)

        def uuid(self) -> str:
            return "user"

    monkeypatch.setattr(config, "post_grad_custom_post_pass", UserPass())
    recorder = ProvenanceRecorder().start()
    chained = config.post_grad_custom_post_pass
    graph = torch.fx.Graph()
    chained(graph)
    recorder.finish()
    assert seen == [graph] and len(recorder.captured) == 1
    assert chained.uuid() == ("reportgen-provenance-1", "user")
    assert isinstance(config.post_grad_custom_post_pass, UserPass)


def test_no_recorded_graph_is_a_note_not_a_failure(tmp_path: Path) -> None:
    from reportgen.bundle import ModuleFile

    (tmp_path / "w.py").write_text("def call(args):\n    pass\n", encoding="utf-8")
    table = ProvenanceRecorder().table([ModuleFile(path="w.py", kind="wrapper", order=0, size_bytes=1)], tmp_path)
    assert table.method == "none" and table.graphs == []
    assert table.notes == [
        "w.py: no recorded graph matches it (cached compile?)",
        "provenance not captured: no compiled graph reached the recording pass (cache hits?)",
    ]


def test_nodes_without_module_meta_belong_to_the_model_itself() -> None:
    graph = torch.fx.Graph()
    node = graph.call_function(torch.ops.aten.add.Tensor, (1, 2))
    node.meta["stack_trace"] = '  File "/home/me/model.py", line 9, in forward\n    return x + 1\n'
    site = resolve_site(WrapperSite("cpp_fused_add_0", 1), [node])
    assert (site.module_path, site.frame and site.frame.location, site.nodes) == (
        "",
        "/home/me/model.py:9",
        [node.name],
    )
    assert resolve_site(WrapperSite("cpp_fused_add_0", 1), []).module_path is None


@pytest.mark.slow
def test_a_warm_compile_on_a_kept_cache_keeps_its_provenance(tmp_path: Path) -> None:
    """FX-graph-cache hits skip the recording pass: the second run reads the tables the first kept in the cache."""
    path = RECIPES_DIR / "provenance_net.yaml"
    options = RunOptions(inductor_cache=tmp_path / "cache")
    first = read_provenance(run_recipe(load_recipe(path), path, tmp_path / "one", options))
    second = read_provenance(run_recipe(load_recipe(path), path, tmp_path / "two", options))
    assert first is not None and second is not None and len(first.graphs) == 2
    assert second.notes == [
        "2 of 2 graphs were Inductor cache hits: their provenance is the one recorded by the compile that filled "
        "the cache (same wrapper code)"
    ]
    assert second.method == first.method == "debug-handles"
    assert [g.sites for g in second.graphs] == [g.sites for g in first.graphs]


def test_a_kept_graph_is_found_by_its_wrapper_code_and_a_damaged_one_is_ignored(tmp_path: Path) -> None:
    from reportgen.bundle import CallSite, GraphProvenance, ModuleFile

    text = "def call(args):\n    triton_poi_fused_0.run(buf0)\n"
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(text if name == "a.py" else text + "# other code\n", encoding="utf-8")
    store = tmp_path / "store"
    kept = GraphProvenance(wrapper="old/a.py", kind="forward", sites=[CallSite(kernel="triton_poi_fused_0")])
    store.mkdir()
    (store / f"{hashlib.sha256(text.encode()).hexdigest()}.json").write_text(kept.model_dump_json(), encoding="utf-8")
    files = [ModuleFile(path=n, kind="wrapper", order=i, size_bytes=1) for i, n in enumerate(("a.py", "b.py"))]
    table = ProvenanceRecorder().table(files, tmp_path, store)
    assert [g.wrapper for g in table.graphs] == ["a.py"] and table.graphs[0].sites == kept.sites
    assert "b.py: no recorded graph matches it (cached compile?)" in table.notes
    (store / f"{hashlib.sha256(text.encode()).hexdigest()}.json").write_text("{", encoding="utf-8")
    assert ProvenanceRecorder().table(files, tmp_path, store).graphs == []
