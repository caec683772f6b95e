"""Parent side of a distributed run: the command that starts its ranks, and their records gathered for the manifest."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from pydantic import ValidationError

from reportgen.bundle import DistributedRun, RankRun, rank_dir
from reportgen.recipe import Recipe
from reportgen.run.protocol import CHILD_RESULT, ChildResult

__all__ = ["child_command", "gather_ranks", "neutral_digest", "visible_gpus"]

_DEVICE_INDEX = re.compile(
    r"""(index=|cuda:|set_device\(|device_?guard\(|get_raw_stream\(|['"]device['"]: |\bstream)\d+""", re.I
)
"""Where a wrapper names its rank's GPU: `device(type='cuda', index=1)`, `cuda:1`, `set_device(1)`, `_DeviceGuard(1)`,
`get_raw_stream(1)`, Triton's `'device': 1`, and the stream variable named after it (`stream1 = get_raw_stream(1)`:
every digest of two real H200 ranks, FSDP2, differed by it alone)."""
_CACHE_PATH = re.compile(r"[^\s'\"]*/[a-z0-9]{2}/[a-z0-9]{52}\.\w+")
"""A file in an Inductor cache (`# kernel path: /tmp/<rank's cache>/ln/cln...fp.py`): its folder is the rank's cache
and its name's first letters, which differ with the hash (2 x H200, resnet50 under DDP: every digest differed)."""
_CACHE_NAME = re.compile(r"\b[a-z0-9]{52}\b")
"""Inductor's cache file names (a base32 hash of the source, which holds the device index)."""


def neutral_digest(path: str | Path) -> str:
    """SHA-256 (16 hex digits) of a compiled wrapper's source with the device index, cache paths and cache names
    blanked out: equal on two ranks that compiled the same graph for their own GPUs, each into its own cache."""
    text = _DEVICE_INDEX.sub(r"\1N", Path(path).read_text(encoding="utf-8", errors="replace"))
    return hashlib.sha256(_CACHE_NAME.sub("H", _CACHE_PATH.sub("P", text)).encode()).hexdigest()[:16]


_GPU_NODE = re.compile(r"nvidia\d+")


def visible_gpus(env: Mapping[str, str], dev: Path = Path("/dev")) -> int:
    """The GPUs a child started with `env` sees: `CUDA_VISIBLE_DEVICES` when set, else the host's NVIDIA devices
    (`/dev/nvidia<N>`). Read without importing torch (the parent never does)."""
    listed = env.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return len([d for d in listed.split(",") if d.strip() and d.strip() != "-1"])
    try:
        return sum(1 for node in dev.iterdir() if _GPU_NODE.fullmatch(node.name))
    except OSError:
        return 0


def world_size(recipe: Recipe, env: Mapping[str, str]) -> int:
    """How many ranks the run starts (`distributed.nproc_per_node`; `all`: one per visible GPU, 2 on the CPU)."""
    assert recipe.distributed is not None
    return recipe.distributed.ranks_for(0 if recipe.device == "cpu" else visible_gpus(env))


def child_command(python: str, recipe: Recipe, spec: Path, bundle: Path, env: Mapping[str, str]) -> list[str]:
    """The run's child: `reportgen.run.child` itself, or for a distributed recipe one per rank under PyTorch's
    elastic launcher (`torch.distributed.run`, no restarts: a rank that dies ends the run, the others are stopped)."""
    child = ["-m", "reportgen.run.child", str(spec), str(bundle)]
    if recipe.distributed is None:
        return [python, *child]
    ranks = world_size(recipe, env)
    return [
        python,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={ranks}",
        "--max-restarts=0",
        *child,
    ]


def _read(path: Path) -> ChildResult | None:
    try:
        return ChildResult.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None


def gather_ranks(
    recipe: Recipe,
    bundle: Path,
    leader: ChildResult | None,
    env: Mapping[str, str],
    existing: Callable[[str], str | None],
    scrub: Callable[[str], str],
) -> DistributedRun | None:
    """Each rank's record (rank 0's from `leader`, the others' from `ranks/<rank>/child-result.json`, removed once
    read); None for a run that is not distributed.

    :param existing: the bundle-relative name when it is a regular file of the bundle, else None
    :param scrub: redacts secrets from a rank's error
    """
    settings = recipe.distributed
    if settings is None:
        return None
    ranks: list[RankRun] = []
    size = world_size(recipe, env)
    for rank in range(size):
        folder = "" if rank == 0 else f"{rank_dir(rank)}/"
        result = leader if rank == 0 else _read(bundle / folder / CHILD_RESULT)
        if rank:
            (bundle / folder / CHILD_RESULT).unlink(missing_ok=True)
        if result is None:
            ranks.append(RankRun(rank=rank, status="running", stage="start"))
            continue
        metrics = result.metrics
        ranks.append(
            RankRun(
                rank=rank,
                status=result.status,
                stage=result.stage,
                error=scrub(result.error) if result.error else None,
                failed_at=result.failed_at,
                eager=metrics.eager,
                compiled=metrics.compiled,
                peak_memory_bytes=metrics.peak_memory_compiled_bytes,
                trace_file=existing(f"{folder}{result.trace_file}") if result.trace_file else None,
                graphs=result.graphs,
                graph_digests=result.graph_digests,
            )
        )
    device = leader.environment.device if leader is not None and leader.environment is not None else "cpu"
    return DistributedRun(
        world_size=size,
        strategy=settings.strategy,
        backend=settings.backend_for(device),
        ranks=ranks,
        splits=leader.splits if leader is not None else [],
    )
