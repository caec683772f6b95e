"""The memory bandwidth a kernel's GB/s is compared against: the GPU's theoretical peak, else a measured copy."""

from __future__ import annotations

from reportgen.bundle import Capture, Environment, PeakBandwidth

__all__ = ["peak_bandwidth"]


def peak_bandwidth(environment: Environment | None, capture: Capture | None) -> PeakBandwidth | None:
    """The first GPU's theoretical DRAM bandwidth; else the run's measured device-to-device copy; else None."""
    gpu_peak = environment.gpus[0].peak_bandwidth_gbps if environment and environment.gpus else None
    if gpu_peak:
        return PeakBandwidth(gbps=gpu_peak, source="theoretical")
    if capture is not None and capture.copy_bandwidth_gbps:
        return PeakBandwidth(gbps=capture.copy_bandwidth_gbps, source="measured")
    return None
