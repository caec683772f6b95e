from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reportgen.bundle import Kernel, load_bundle
from reportgen.render.variants import _compile, kernel_diff

MakeBundle = Callable[..., Path]


def _k(name: str, us: float) -> Kernel:
    return Kernel(name=name, category="triton_pointwise", device_time_us=us, count=1, share=0.1)


def test_kernel_diff_lists_new_gone_and_changed_kernels() -> None:
    base = [_k("a", 100.0), _k("b", 50.0), _k("gone", 10.0)]
    other = [_k("a", 40.0), _k("b", 55.0), _k("triton_tem_fused_mm_0", 30.0)]
    only_other, only_base, changes = kernel_diff(base, other)
    assert [k.name for k in only_other] == ["triton_tem_fused_mm_0"]
    assert [k.name for k in only_base] == ["gone"]
    assert changes == [("a", 100.0, 40.0), ("b", 50.0, 55.0)]


def test_compile_column_marks_a_warm_cache(tmp_path: Path, make_bundle: MakeBundle) -> None:
    manifest = load_bundle(make_bundle(tmp_path, "mixnet")).manifest
    cold = manifest.metrics.compile_time_s
    assert _compile(manifest) == f"{cold:.1f}"
    assert _compile(manifest.model_copy(update={"inductor_cache": "kept-empty"})) == f"{cold:.1f}"
    assert _compile(manifest.model_copy(update={"inductor_cache": "kept-warm"})) == f"{cold:.1f} (warm cache)"
    no_time = manifest.model_copy(update={"metrics": manifest.metrics.model_copy(update={"compile_time_s": None})})
    assert _compile(no_time) == "—"
