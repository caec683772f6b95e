"""Tiny models for the end-to-end and fault tests (seconds to compile on a 2-core CPU)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import torch
from torch import nn

MIRROR = "https://reportgen:source-password-42@models.example/v1"  # credentials in model source are never published
MIRROR_TOKEN = "hf_SourceCodeTokenNeverPublished0042"


class AddMul(nn.Module):
    """`a * b + c`: one fused Inductor kernel."""

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return a * b + c


class TinyMLP(nn.Module):
    """Linear → ReLU → Linear."""

    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def raising() -> nn.Module:
    """A factory whose model code raises."""
    raise ValueError("planted failure in model code")


class Sleeper(nn.Module):
    """Hangs in forward (for timeout tests)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        time.sleep(3600)
        return x


class Aborter(nn.Module):
    """Kills its own process in forward."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        os.abort()


class DataDependentBranch(nn.Module):
    """Branches on a tensor's value: runs eagerly, cannot be traced with `fullgraph=True`."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x * 2
        return x - 1


class Leaky(nn.Module):
    """Prints the env vars `names`; with `fail`, raises an error holding the first one's value and HTML."""

    def __init__(self, names: list[str], fail: bool = False) -> None:
        super().__init__()
        self.names = names
        self.fail = fail
        for name in names:
            print(f"{name}={os.environ.get(name, '')}", flush=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fail:
            token = os.environ.get(self.names[0], "")
            raise RuntimeError(f"login failed with {token} <img src=x onerror=alert(1)> ```{{eval-rst}}")
        return x * 2


class OutOfMemory(nn.Module):
    """Runs out of memory in forward (as far as the run can tell)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")


class Nap(nn.Module):
    """Sleeps `ms` milliseconds in forward around a tiny matmul: host time that moves with the host, and the
    regression gate's planted changes: `extra_matmul` (one more ATen op per step, eager and compiled) and
    `graph_break` (the same math in two compiled graphs)."""

    def __init__(self, ms: float = 4.0, extra_matmul: bool = False, graph_break: bool = False) -> None:
        super().__init__()
        self.ms, self.extra_matmul, self.graph_break = ms, extra_matmul, graph_break
        self.fc = nn.Linear(8, 8)
        self.extra = nn.Parameter(torch.eye(8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        time.sleep(self.ms / 1e3)
        x = self.fc(x)
        if self.graph_break:
            torch._dynamo.graph_break()
        if self.extra_matmul:
            x = x @ self.extra
        return x.relu()


class ProvenanceBlock(nn.Module):
    """Layer norm, then a linear layer with a ReLU, and a residual add: kernels fuse across the two submodules."""

    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm(x)
        y = torch.relu(self.fc(y)) * 2
        return x + y


class ProvenanceNet(nn.Module):
    """Two named blocks and a head: each compiled kernel should name its block's submodule and line."""

    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.blocks = nn.Sequential(ProvenanceBlock(dim), ProvenanceBlock(dim))
        self.head = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.head(self.blocks(x)))


class WorkerKiller(nn.Module):
    """Kills the process that launched its run (a matrix's remote worker) in forward: a lost worker.

    Each attempt adds a line to the file `attempts`, when given."""

    def __init__(self, attempts: str | None = None) -> None:
        super().__init__()
        if attempts:
            with open(attempts, "a", encoding="utf-8") as file:
                file.write("attempt\n")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        os.kill(_launcher_pid(), signal.SIGKILL)
        time.sleep(60)  # the child follows its parent (the run's parent watch)
        return x


def _launcher_pid() -> int:
    """The process that launched this run: the parent, or the grandparent when the parent is the run's
    supervisor (`reportgen/run/reaper.py`, which ends the run's tree once its own parent is gone)."""
    parent = os.getppid()
    cmdline = Path(f"/proc/{parent}/cmdline").read_bytes().split(b"\0")
    if not any(part.endswith(b"reaper.py") for part in cmdline):
        return parent
    for line in Path(f"/proc/{parent}/status").read_text().splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    return parent


def rank_one_raises() -> nn.Module:
    """A model every rank builds but rank 1 (of a distributed run), which raises: the others wait at their first
    collective until the launcher stops them."""
    if os.environ.get("RANK") == "1":
        raise RuntimeError("planted failure on rank 1")
    return TinyMLP()


def inputs_refusing_three(batch_size: int, device: str) -> torch.Tensor:
    """Inputs for `TinyMLP`, except at batch 3, which raises: a sweep point that fails."""
    if batch_size == 3:
        raise RuntimeError("planted failure at batch 3")
    return torch.randn(batch_size, 16, device=device)
