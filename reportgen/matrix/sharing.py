"""How many runs share each GPU when `--runs-per-gpu` is not given: two where it is safe, else one.

A run spends most of its time not timing (its start, the model, the compile, the graph-timing process's start),
and while it does, a GPU with one run idles. Two runs per GPU let one compile while the other times; each timed
window still owns the host and its GPU (the coordinator pauses every other run, and waits for a paused run's
queued work to leave a shared GPU). On 2 × H200 the six-recipe matrix took 311.5 s with `--gpus 1` and 105.6 s
with two runs per GPU over both GPUs (2.95×), against 167.7 s with one per GPU (docs/matrix.md).

Sharing is chosen only where it cannot cost a run: a matrix over several GPUs (`--gpus 1` stays one run at a
time: the reference every matrix figure is compared against), timed windows on, enough cores that each of the
slots keeps `SLOT_MIN_CORES`, and GPU memory for the two largest runs, from what their earlier runs in the
results directory recorded. A run never run before has no record, so a matrix's first night runs one per GPU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from reportgen.nvidia import nvidia_smi

__all__ = ["CONTEXT_BYTES", "MEMORY_MARGIN", "SLOT_MIN_CORES", "Sharing", "choose_sharing", "gpu_memory_bytes"]

SLOT_MIN_CORES: Final = 8
"""Cores each slot keeps with two runs per GPU: a run's compile workers (`TORCHINDUCTOR_COMPILE_THREADS`) get its
share only (four slots on the lent 32-core hosts: 8 each)."""

MEMORY_MARGIN: Final = 1.5
"""A run's recorded peak (`torch.cuda.max_memory_allocated`) times this: the caching allocator's slack and
fragmentation beyond what tensors held."""

CONTEXT_BYTES: Final = 2 * 1024**3
"""Per run on top of its peak: the CUDA context, cuBLAS and cuDNN workspaces, autotuning's buffers."""

_GIB = 1024**3


@dataclass(frozen=True)
class Sharing:
    """Runs per GPU, and why (shown before the runs start)."""

    runs_per_gpu: int
    reason: str


def gpu_memory_bytes(devices: Sequence[str | None]) -> int | None:
    """The smallest memory of `devices` (`nvidia-smi`'s ids as `--gpus` gives them); None when unknown: no
    `nvidia-smi`, a device it does not list, or ids that are not its indices (UUIDs)."""
    listed = nvidia_smi("--query-gpu=index,memory.total", "--format=csv,noheader,nounits")
    if listed is None:
        return None
    sizes: dict[str, int] = {}
    for line in listed.splitlines():
        index, _, mib = line.partition(",")
        if index.strip().isdigit() and mib.strip().isdigit():
            sizes[index.strip()] = int(mib.strip()) * 1024**2
    found = [sizes.get(str(device)) for device in devices]
    return None if not found or None in found else min(size for size in found if size is not None)


def choose_sharing(
    devices: Sequence[str | None],
    isolation: str,
    peaks: Mapping[str, int | None],
    memory_bytes: int | None,
    cores: int,
) -> Sharing:
    """Two runs per GPU where that is safe, else one (see the module's docstring).

    :param devices: the matrix's GPUs, one entry each
    :param peaks: each planned run's bundle name → its last recorded peak GPU memory (None: never recorded)
    :param memory_bytes: the smallest of those GPUs' memory (None: unknown)
    :param cores: the cores this process may use
    """
    if len(devices) < 2 or None in devices:
        return Sharing(1, "one GPU: one run at a time")
    if "lock" not in isolation:
        return Sharing(1, f"--isolation {isolation} has no timed windows to keep two runs on a GPU apart")
    if len(peaks) <= len(devices):
        return Sharing(1, "no more runs than GPUs")
    slots = 2 * len(devices)
    if cores < SLOT_MIN_CORES * slots:
        return Sharing(1, f"{cores} cores: fewer than {SLOT_MIN_CORES} for each of {slots} slots")
    if memory_bytes is None:
        return Sharing(1, "the GPUs' memory is unknown (nvidia-smi)")
    unknown = sorted(name for name, peak in peaks.items() if peak is None)
    if unknown:
        return Sharing(1, f"no earlier run of {unknown[0]} recorded its GPU memory")
    largest = sorted((peak for peak in peaks.values() if peak is not None), reverse=True)[:2]
    needed = sum(peak * MEMORY_MARGIN + CONTEXT_BYTES for peak in largest)
    shown = " + ".join(f"{peak / _GIB:.1f}" for peak in largest)
    if needed > memory_bytes:
        return Sharing(1, f"the two largest runs ({shown} GiB at their peaks) may not fit one GPU together")
    return Sharing(
        2, f"two runs per GPU: the two largest runs ({shown} GiB at their peaks) fit {memory_bytes / _GIB:.0f} GiB"
    )
