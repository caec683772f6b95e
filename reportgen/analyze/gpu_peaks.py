"""What a GPU can do at most: dense TFLOP/s per dtype and memory TB/s, from one table of vendor datasheets.

The rows are matched against the device name CUDA reports (`torch.cuda.get_device_name`, the bundle's
`GpuInfo.name`); a GPU no row matches has no peaks (the report says so rather than guessing). The datasheets
print tensor-core figures "with sparsity" (2:4 structured); the table holds the dense ones, half of those.
FP32 is the CUDA cores' rate; TF32 applies to float32 matrix products only where PyTorch allows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PEAKS", "GpuPeaks", "gpu_peaks", "peak_tflops", "peaks_of_model"]

_H100 = "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet"
_H200 = "https://www.nvidia.com/en-us/data-center/h200/"
_A100 = "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
_L4 = "https://www.nvidia.com/en-us/data-center/l4/"
_L40S = "https://www.nvidia.com/en-us/data-center/l40s/"
_V100 = "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf"


@dataclass(frozen=True)
class GpuPeaks:
    """One GPU model's peaks (TFLOP/s dense; None: no tensor-core path for that dtype) and its datasheet."""

    model: str
    pattern: str
    """A regular expression searched for in the device name (case-insensitive)."""
    fp32: float
    tf32: float | None
    bf16: float | None
    fp16: float | None
    fp8: float | None
    memory_tbps: float
    source: str


PEAKS: tuple[GpuPeaks, ...] = (
    GpuPeaks("H100 NVL", r"\bH100 NVL\b", 60.0, 417.5, 835.5, 835.5, 1670.5, 3.9, _H100),
    GpuPeaks("H100 PCIe", r"\bH100 PCIe\b", 51.2, 378.0, 756.5, 756.5, 1513.0, 2.0, _H100),
    GpuPeaks("H100 SXM", r"\bH100\b", 66.9, 494.7, 989.4, 989.4, 1978.9, 3.35, _H100),
    GpuPeaks("H200 NVL", r"\bH200 NVL\b", 60.0, 417.5, 835.5, 835.5, 1670.5, 4.8, _H200),
    GpuPeaks("H200 SXM", r"\bH200\b", 66.9, 494.7, 989.4, 989.4, 1978.9, 4.8, _H200),
    GpuPeaks("A100 SXM4 80GB", r"\bA100-SXM4-80GB\b", 19.5, 156.0, 312.0, 312.0, None, 2.039, _A100),
    GpuPeaks("A100 PCIe 80GB", r"\bA100 80GB PCIe\b", 19.5, 156.0, 312.0, 312.0, None, 1.935, _A100),
    GpuPeaks("A100 40GB", r"\bA100-(SXM4|PCIE)-40GB\b", 19.5, 156.0, 312.0, 312.0, None, 1.555, _A100),
    GpuPeaks("L40S", r"\bL40S\b", 91.6, 183.0, 362.05, 362.05, 733.0, 0.864, _L40S),
    GpuPeaks("L4", r"\bL4\b", 30.3, 60.0, 121.0, 121.0, 242.5, 0.3, _L4),
    GpuPeaks("V100 SXM2", r"\bV100-SXM2\b", 15.7, None, None, 125.0, None, 0.9, _V100),
    GpuPeaks("V100 PCIe", r"\bV100-PCIE\b", 14.0, None, None, 112.0, None, 0.9, _V100),
)
"""First match wins: the more specific names (NVL, PCIe) come before the bare model."""

_BY_DTYPE = {
    "c10::BFloat16": "bf16",
    "c10::Half": "fp16",
    "c10::Float8_e4m3fn": "fp8",
    "c10::Float8_e5m2": "fp8",
    "c10::Float8_e4m3fnuz": "fp8",
    "c10::Float8_e5m2fnuz": "fp8",
}
"""The peak a matrix product of each dtype (the profiler's `Input type` names) is held to; float: fp32 or tf32."""


def gpu_peaks(device_name: str) -> GpuPeaks | None:
    """The table's row for a device name, or None for a GPU the table does not know."""
    for row in PEAKS:
        if re.search(row.pattern, device_name, flags=re.IGNORECASE):
            return row
    return None


def peaks_of_model(model: str) -> GpuPeaks | None:
    """The table's row of a model name it gave (`GpuPeaks.model`, kept in a bundle's `Analysis.roof`)."""
    return next((row for row in PEAKS if row.model == model), None)


def peak_tflops(peaks: GpuPeaks, dtype: str, *, tf32: bool) -> float | None:
    """The bound for matrix products in `dtype` (float32 on tensor cores when `tf32`, where the GPU has them);
    None for a dtype the table has no rate for (double, integers, FP8 on an A100)."""
    if dtype == "float":
        return peaks.tf32 if tf32 and peaks.tf32 is not None else peaks.fp32
    field = _BY_DTYPE.get(dtype)
    return None if field is None else getattr(peaks, field)
