"""FX node metadata as text: stack traces, module paths, and a wrapper's call sites."""

from __future__ import annotations

from pathlib import Path

import pytest

from reportgen.bundle import ModuleFile, SourceFrame
from reportgen.formats import WrapperSite, module_path, parse_stack, user_frame, wrapper_sites

STACK = """\
  File "/home/me/model.py", line 27, in forward
    y = self.norm(x)
  File "/venv/lib/python3.12/site-packages/torch/nn/modules/normalization.py", line 229, in forward
    return F.layer_norm(
           ^^^^^^^^^^^^^
"""


def test_parse_stack_reads_every_frame_outermost_first() -> None:
    assert parse_stack(STACK) == [
        SourceFrame(file="/home/me/model.py", line=27, function="forward"),
        SourceFrame(
            file="/venv/lib/python3.12/site-packages/torch/nn/modules/normalization.py", line=229, function="forward"
        ),
    ]
    assert parse_stack(None) == [] and parse_stack("no frames here") == []


def test_user_frame_is_the_innermost_outside_the_hidden_dirs() -> None:
    frames = parse_stack(STACK)
    assert user_frame(frames, ["/venv/lib/python3.12/site-packages/torch/"]) == frames[0]
    assert user_frame(frames, []) == frames[1]
    assert user_frame(frames, ["/"]) is None


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        ("L['self'].blocks.1.norm", "blocks.1.norm"),
        ("L['self']._modules['blocks']._modules['1'].norm", "blocks.1.norm"),
        ("L['self'].blocks[1].fc", "blocks.1.fc"),
        ("L['model'].head", "head"),
        ("L['self']", ""),
    ],
)
def test_module_path_drops_dynamos_root_and_indexing(raw: str, path: str) -> None:
    assert module_path(raw) == path


HANDLED = """\
def call(self, args):
    # [Provenance debug handles] cpp_fused_native_layer_norm_0:1
    cpp_fused_native_layer_norm_0(buf1, buf3, primals_3)
    # Topologically Sorted Source Nodes: [linear], Original ATen: [aten.t, aten.addmm]
    # [Provenance debug handles] extern_kernels.addmm:2
    extern_kernels.addmm(primals_5, buf4, reinterpret_tensor(primals_4, (16, 16), (1, 16), 0), out=buf5)
    # [Provenance debug handles] cpp_fused_native_layer_norm_0:3
    cpp_fused_native_layer_norm_0(buf5, buf6, primals_3)
"""


def test_wrapper_sites_follow_the_debug_handles_in_call_order() -> None:
    assert wrapper_sites(HANDLED) == [
        WrapperSite("cpp_fused_native_layer_norm_0", 1),
        WrapperSite("extern_kernels.addmm", 2),
        WrapperSite("cpp_fused_native_layer_norm_0", 3),
    ]


def test_without_handles_sites_come_from_the_source_nodes_comments(h100_modules: tuple[Path, list[ModuleFile]]) -> None:
    root, files = h100_modules
    forward = next(f for f in files if f.kind == "wrapper" and f.order == 0)
    sites = wrapper_sites((root / forward.path).read_text(encoding="utf-8"))
    convolutions = [site for site in sites if site.kernel == "extern_kernels.convolution"]
    assert len(convolutions) == 155 and all(site.handle is None for site in sites)
    assert convolutions[0].source_nodes == ("x",)
    assert sites[0] == WrapperSite("triton_poi_fused__to_copy_0", None, ("x",))
