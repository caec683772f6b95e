"""The GPUs a matrix fills and the slots it runs in: one slot per GPU (or several: `--runs-per-gpu`), each with its
own share of the cores.

The parent never imports torch: GPUs are found with `CUDA_VISIBLE_DEVICES` when it is set, else `nvidia-smi -L`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from reportgen.errors import RunError
from reportgen.nvidia import nvidia_smi

__all__ = ["ISOLATIONS", "Slot", "discover_gpus", "make_slots", "resolve_gpus"]

ISOLATIONS: Final = ("cores+lock", "cores", "lock", "none")
"""`--isolation`: each run on its own cores (`cores`), measurements never overlapping (`lock`), both, neither."""


@dataclass(frozen=True)
class Slot:
    """Where one run at a time goes: a GPU (None: the child's GPUs as inherited) and cores (empty: any)."""

    device: str | None
    cpus: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        """`gpu 0`, or `host` for a slot without a GPU of its own."""
        return "host" if self.device is None else f"gpu {self.device}"


def discover_gpus() -> list[str]:
    """This host's GPU ids as a child would be given them: `CUDA_VISIBLE_DEVICES`'s entries when it is set,
    else one per line of `nvidia-smi -L` (none when it is missing or fails)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        ids = [entry.strip() for entry in visible.split(",") if entry.strip()]
        return [] if not ids or ids[0].startswith("-") else ids
    listed = nvidia_smi("-L") or ""
    return [str(i) for i, line in enumerate(line for line in listed.splitlines() if line.startswith("GPU "))]


def resolve_gpus(spec: str | None, discover: Callable[[], list[str]] = discover_gpus) -> list[str | None]:
    """The slots' GPUs for `--gpus SPEC`: `all`, a count `N` (the first N found), or ids `0,2` (taken as given,
    so a host without GPUs can be handed ids too). Without SPEC: every GPU when there are several, else one slot
    that leaves the GPU as it is.

    :raises RunError: for a count beyond the GPUs found, or a malformed SPEC
    """
    text = (spec or "").strip()
    if not text:
        found = discover()
        return list(found) if len(found) > 1 else [None]
    if text == "all":
        found = discover()
        if not found:
            raise RunError("--gpus all: no GPU found (nvidia-smi -L lists none, or CUDA_VISIBLE_DEVICES is empty)")
        return list(found)
    if text.isdigit():
        found = discover()
        if not 1 <= int(text) <= len(found):
            raise RunError(f"--gpus {text}: this host has {len(found)} GPU(s)", hint="give ids, e.g. --gpus 0,1")
        return list(found[: int(text)])
    ids = [entry.strip() for entry in text.split(",")]
    if not all(ids) or len(set(ids)) != len(ids):
        raise RunError(f"--gpus expects all, a count, or distinct ids like 0,2; got {spec!r}")
    return list(ids)


def make_slots(devices: Sequence[str | None], isolation: str, cores: Sequence[int] | None = None) -> list[Slot]:
    """One slot per entry of `devices` (a GPU given twice: two runs share it); with `cores` isolation the cores
    this process may use are split into contiguous, disjoint shares (sizes differ by at most one). A single slot is not pinned (its share would be every core:
    it runs as a plain run does), nor are slots outnumbering the cores.

    :raises RunError: for an unknown isolation
    """
    if isolation not in ISOLATIONS:
        raise RunError(f"--isolation expects one of {', '.join(ISOLATIONS)}; got {isolation!r}")
    available = sorted(cores if cores is not None else os.sched_getaffinity(0))
    if not isolation.startswith("cores") or len(devices) == 1 or len(available) < len(devices):
        return [Slot(device) for device in devices]
    share, extra = divmod(len(available), len(devices))
    slots, start = [], 0
    for position, device in enumerate(devices):
        size = share + (1 if position < extra else 0)
        slots.append(Slot(device, tuple(available[start : start + size])))
        start += size
    return slots
