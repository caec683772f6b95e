"""The peak table's lookup by the names CUDA reports (issue 31)."""

from __future__ import annotations

import re

import pytest

from reportgen.analyze.gpu_peaks import PEAKS, gpu_peaks, peak_tflops


@pytest.mark.parametrize(
    ("device_name", "model", "memory_tbps"),
    [
        ("NVIDIA H100 80GB HBM3", "H100 SXM", 3.35),
        ("NVIDIA H100 PCIe", "H100 PCIe", 2.0),
        ("NVIDIA H100 NVL", "H100 NVL", 3.9),
        ("NVIDIA H200", "H200 SXM", 4.8),
        ("NVIDIA H200 NVL", "H200 NVL", 4.8),
        ("NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB", 2.039),
        ("NVIDIA A100-SXM4-40GB", "A100 40GB", 1.555),
        ("NVIDIA A100 80GB PCIe", "A100 PCIe 80GB", 1.935),
        ("NVIDIA L4", "L4", 0.3),
        ("NVIDIA L40S", "L40S", 0.864),
        ("Tesla V100-SXM2-32GB", "V100 SXM2", 0.9),
    ],
)
def test_each_gpu_name_finds_its_row(device_name: str, model: str, memory_tbps: float) -> None:
    row = gpu_peaks(device_name)
    assert row is not None and (row.model, row.memory_tbps) == (model, memory_tbps)
    assert row.source.startswith("https://")


def test_an_unknown_gpu_has_no_peaks() -> None:
    assert gpu_peaks("NVIDIA GeForce RTX 4090") is None
    assert gpu_peaks("NVIDIA L40") is None  # (not an L4 nor an L40S)
    assert gpu_peaks("AMD Instinct MI300X") is None


def test_the_bound_of_a_product_follows_its_dtype_and_tf32() -> None:
    h100 = gpu_peaks("NVIDIA H100 80GB HBM3")
    assert h100 is not None
    assert peak_tflops(h100, "c10::BFloat16", tf32=False) == 989.4  # 1,979 "with sparsity" in the datasheet
    assert peak_tflops(h100, "float", tf32=True) == 494.7
    assert peak_tflops(h100, "float", tf32=False) == 66.9
    assert peak_tflops(h100, "double", tf32=False) is None
    v100 = gpu_peaks("Tesla V100-PCIE-16GB")
    assert v100 is not None and peak_tflops(v100, "float", tf32=True) == 14.0  # no TF32 before Ampere
    a100 = gpu_peaks("NVIDIA A100-SXM4-80GB")
    assert a100 is not None and peak_tflops(a100, "c10::Float8_e4m3fn", tf32=False) is None


def test_the_table_is_dense_figures_in_the_order_names_are_matched() -> None:
    for row in PEAKS:
        re.compile(row.pattern)
        for rate in (row.tf32, row.bf16, row.fp16, row.fp8):
            assert rate is None or rate > row.fp32  # tensor cores above the CUDA cores' FP32
        # FP8 doubles BF16 (the L40S datasheet: 362.05 and 733, 1.2 % apart)
        assert row.bf16 is None or row.fp8 is None or row.fp8 == pytest.approx(2 * row.bf16, rel=0.015)
    names = [row.model for row in PEAKS]
    assert names.index("H100 NVL") < names.index("H100 SXM") and names.index("L40S") < names.index("L4")
