"""The memory bandwidth a kernel's GB/s is compared against: the GPU's theoretical peak, else a measured copy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from reportgen.bundle.model import Capture, Environment

__all__ = ["PeakBandwidth", "peak_bandwidth"]


@dataclass(frozen=True)
class PeakBandwidth:
    """A peak in GB/s and where it comes from."""

    gbps: float
    source: Literal["theoretical", "measured"]


def peak_bandwidth(environment: Environment | None, capture: Capture | None) -> PeakBandwidth | None:
    """The first GPU's theoretical DRAM bandwidth; else the run's measured device-to-device copy; else None."""
    gpu_peak = environment.gpus[0].peak_bandwidth_gbps if environment and environment.gpus else None
    if gpu_peak:
        return PeakBandwidth(gpu_peak, "theoretical")
    if capture is not None and capture.copy_bandwidth_gbps:
        return PeakBandwidth(capture.copy_bandwidth_gbps, "measured")
    return None
