"""One rank of a distributed run (child side): its place, its process group, the model's wrapper, what it logs.

`torch.distributed.run` starts one child per rank with `RANK`, `LOCAL_RANK` and `WORLD_SIZE` set. Rank 0 (the
leader) writes the bundle as a single-process run does; every other rank writes its progress and traces into
`ranks/<rank>/`. All ranks run the same steps in the same order: the collectives need each of them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reportgen.recipe import Distributed

if TYPE_CHECKING:
    import torch

__all__ = ["DDP_LOGGER", "RankPlace", "end_group", "init_group", "rank_from_env", "recorded_splits", "wrap_model"]

DDP_LOGGER = "torch._dynamo.backends.distributed"
"""Where Dynamo's DDPOptimizer logs the buckets it split a graph into."""


@dataclass(frozen=True)
class RankPlace:
    """This process's place among the ranks."""

    rank: int
    local_rank: int
    world_size: int

    @property
    def leader(self) -> bool:
        """Rank 0 writes the bundle; the others write `ranks/<rank>/`."""
        return self.rank == 0


def rank_from_env(environ: dict[str, str] | None = None) -> RankPlace | None:
    """The place `torch.distributed.run` gave this process; None outside it."""
    env = os.environ if environ is None else environ
    try:
        return RankPlace(int(env["RANK"]), int(env.get("LOCAL_RANK", env["RANK"])), int(env["WORLD_SIZE"]))
    except (KeyError, ValueError):
        return None


def init_group(place: RankPlace, settings: Distributed, device: str) -> None:
    """Join the process group (`env://`, as `torch.distributed.run` set it up); on CUDA, take GPU `local_rank`."""
    import torch
    import torch.distributed as dist

    if device == "cuda":
        if place.local_rank >= (count := torch.cuda.device_count()):
            raise RuntimeError(
                f"rank {place.rank} needs GPU {place.local_rank} but the run sees {count} "
                f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}): give it more GPUs, or "
                "fewer ranks (distributed.nproc_per_node)"
            )
        torch.cuda.set_device(place.local_rank)
    dist.init_process_group(backend=settings.backend_for(device))


def end_group() -> None:
    """Leave the process group, if this process joined one."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def wrap_model(
    model: Callable[..., object], settings: Distributed, place: RankPlace, device: str
) -> Callable[..., object]:
    """The model as the strategy runs it: DDP around it, or FSDP2's `fully_shard` on each unit (`_shard_units`) and
    then on the root. A callable that is not a module cannot be distributed."""
    import torch

    if not isinstance(model, torch.nn.Module):
        raise RuntimeError(f"distributed strategy {settings.strategy!r} needs an nn.Module, got {type(model).__name__}")
    if settings.strategy == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        kwargs: dict[str, object] = {"device_ids": [place.local_rank]} if device == "cuda" else {}
        if settings.bucket_cap_mb is not None:
            kwargs["bucket_cap_mb"] = settings.bucket_cap_mb
        return DistributedDataParallel(model, **kwargs)  # type: ignore[arg-type]
    fully_shard = _fully_shard()
    for unit in _shard_units(model):
        fully_shard(unit)
    fully_shard(model)
    return model


def _shard_units(model: torch.nn.Module) -> list[torch.nn.Module]:
    """What FSDP2 shards apart, before the root: each child with trainable parameters, and for a child that is a
    container (`Sequential`, `ModuleList`: the blocks of a transformer) each of its children instead."""
    import torch

    units = []
    for child in model.children():
        members = list(child.children()) if isinstance(child, (torch.nn.Sequential, torch.nn.ModuleList)) else [child]
        units += [m for m in members if any(p.requires_grad for p in m.parameters())]
    return units


def _fully_shard() -> Callable[..., object]:
    """FSDP2's `fully_shard`: public since torch 2.6, before that under `_composable`."""
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:  # torch < 2.6
        from torch.distributed._composable.fsdp import fully_shard  # type: ignore[attr-defined,no-redef,unused-ignore]
    return fully_shard  # type: ignore[no-any-return,unused-ignore]


_KEPT_CHARS = 20_000
"""One DDPOptimizer message kept at most this long (its bucket table has a row per parameter)."""


class _Lines(logging.Handler):
    """DDPOptimizer's own messages: its bucket count (info), its bucket assignments (debug), extended buckets
    (warnings); not the graphs it dumps at debug level, nor its per-node trace."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage().strip()
        if message.startswith(("DDPOptimizer", "Some buckets")):
            self.lines.append(message[:_KEPT_CHARS])


@contextmanager
def recorded_splits() -> Iterator[list[str]]:
    """What DDPOptimizer logs while the block runs (its bucket split of each graph), as lines."""
    logger = logging.getLogger(DDP_LOGGER)
    handler, level = _Lines(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
