from __future__ import annotations

from reportgen.bundle.model import Kernel
from reportgen.render.variants import kernel_diff


def _k(name: str, us: float) -> Kernel:
    return Kernel(name=name, category="triton_pointwise", device_time_us=us, count=1, share=0.1)


def test_kernel_diff_lists_new_gone_and_changed_kernels() -> None:
    base = [_k("a", 100.0), _k("b", 50.0), _k("gone", 10.0)]
    other = [_k("a", 40.0), _k("b", 55.0), _k("triton_tem_fused_mm_0", 30.0)]
    only_other, only_base, changes = kernel_diff(base, other)
    assert [k.name for k in only_other] == ["triton_tem_fused_mm_0"]
    assert [k.name for k in only_base] == ["gone"]
    assert changes == [("a", 100.0, 40.0), ("b", 50.0, 55.0)]
