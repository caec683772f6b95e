"""Describe the machine and software a run sees (child side: imports torch)."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys

import torch

from reportgen import __version__
from reportgen.bundle import Environment, GpuInfo, HostInfo, Versions
from reportgen.nvidia import nvidia_smi
from reportgen.run.environment import recordable_env

__all__ = ["probe_environment"]


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _driver_version() -> str | None:
    out = (nvidia_smi("--query-gpu=driver_version", "--format=csv,noheader", timeout_s=10.0) or "").strip()
    return out.splitlines()[0] if out else None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_bytes() -> int | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def _gpu(index: int) -> GpuInfo:
    props = torch.cuda.get_device_properties(index)
    clock_khz = getattr(props, "memory_clock_rate", None)
    bus_bits = getattr(props, "memory_bus_width", None)
    peak = 2 * clock_khz * 1e3 * bus_bits / 8 / 1e9 if clock_khz and bus_bits else None
    return GpuInfo(
        index=index,
        name=props.name,
        total_memory_bytes=props.total_memory,
        multiprocessor_count=props.multi_processor_count,
        capability=f"{props.major}.{props.minor}",
        l2_cache_bytes=getattr(props, "L2_cache_size", None),
        peak_bandwidth_gbps=peak,
    )


def probe_environment(device: str) -> Environment:
    """Versions, host, GPUs and the recordable env of this process."""
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    versions = Versions(
        python=sys.version.split()[0],
        torch=torch.__version__,
        triton=_dist_version("triton") or _dist_version("pytorch-triton"),
        cuda=torch.version.cuda,
        cudnn=str(cudnn) if cudnn else None,
        driver=_driver_version() if device == "cuda" else None,
        timm=_dist_version("timm"),
        torchvision=_dist_version("torchvision"),
        reportgen=__version__,
        platform=platform.platform(),
    )
    gpus = [_gpu(i) for i in range(torch.cuda.device_count())] if device == "cuda" else []
    cpu = _cpu_model()
    host = HostInfo(cpu=cpu, cpu_count=os.cpu_count() or 1, memory_bytes=_memory_bytes())
    name = gpus[torch.cuda.current_device()].name if gpus else cpu
    return Environment(
        device="cuda" if device == "cuda" else "cpu",
        device_name=name,
        versions=versions,
        host=host,
        gpus=gpus,
        env=recordable_env(os.environ),
    )
