"""Tiny models for the end-to-end and fault tests (seconds to compile on a 2-core CPU)."""

from __future__ import annotations

import os
import time

import torch
from torch import nn


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
