"""The recipe's `distributed:` section: one run on several processes (ranks) of one host, launched by
`torch.distributed.run`, each rank compiling and running the same steps under DDP or FSDP2."""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["MAX_RANKS", "Distributed", "Strategy"]

MAX_RANKS: Final = 64
"""Ranks of one host: eight GPUs is the usual most; 64 leaves room (CPU ranks) and refuses a typo."""
Strategy = Literal["ddp", "fsdp2"]


class Distributed(BaseModel):
    """How the model is spread over the host's ranks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    nproc_per_node: Annotated[int, Field(ge=1, le=MAX_RANKS)] | Literal["all"] = Field(
        default="all", description="Ranks (processes) on this host: a number, or `all` (one per visible GPU)."
    )
    strategy: Strategy = Field(
        default="ddp",
        description="`ddp` (DistributedDataParallel: Dynamo's DDPOptimizer splits the graph at bucket boundaries) or "
        "`fsdp2` (`fully_shard` on each child module, then the root).",
    )
    backend: Literal["nccl", "gloo"] | None = Field(
        default=None, description="Process group backend (none: `nccl` on CUDA, `gloo` on CPU)."
    )
    bucket_cap_mb: Annotated[float, Field(gt=0, le=1024, allow_inf_nan=False)] | None = Field(
        default=None, description="DDP's gradient bucket size in MiB (none: DDP's default, 25)."
    )

    @field_validator("nproc_per_node", mode="before")
    @classmethod
    def _ranks(cls, value: object) -> object:
        if value == "all" or (type(value) is int and 1 <= value <= MAX_RANKS):
            return value
        raise ValueError(f"expected a whole number from 1 to {MAX_RANKS} or 'all', got {value!r}")

    @model_validator(mode="after")
    def _buckets_are_ddp(self) -> Distributed:
        if self.bucket_cap_mb is not None and self.strategy != "ddp":
            raise ValueError("bucket_cap_mb applies to strategy 'ddp' only (FSDP2 has no gradient buckets)")
        return self

    def backend_for(self, device: str) -> str:
        """The process group backend on `device` (`cuda` or `cpu`)."""
        return self.backend or ("nccl" if device == "cuda" else "gloo")

    def ranks_for(self, gpus: int) -> int:
        """The number of ranks on a host with `gpus` visible GPUs (0: a CPU run, where `all` means 2)."""
        if self.nproc_per_node != "all":
            return self.nproc_per_node
        return gpus if gpus > 0 else 2
