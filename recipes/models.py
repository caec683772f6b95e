"""Model code for the example recipes (any `module:callable` next to a recipe works the same way)."""

from __future__ import annotations

import torch
from torch import nn


class FusedAddMul(nn.Module):
    """Seed 003: `A * B + C`, returned so the compiler cannot drop it; Inductor fuses it into one kernel."""

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return a * b + c


class ModelWithBreaks(nn.Module):
    """Seed 001: three explicit graph breaks between four MLP blocks."""

    def __init__(self, dim: int = 128) -> None:
        super().__init__()

        def block() -> nn.Sequential:
            return nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim), nn.ReLU())

        self.mod1, self.mod2, self.mod3, self.mod4 = block(), block(), block(), block()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.mod1(x)
        torch._dynamo.graph_break()
        x = self.mod2(x)
        torch._dynamo.graph_break()
        x = self.mod3(x)
        torch._dynamo.graph_break()
        return self.mod4(x)


class SmallConvNet(nn.Module):
    """A small CNN (conv, batch norm, ReLU, pooling, linear): quick to compile on a 2-core CPU."""

    def __init__(self, channels: int = 16, classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, channels, 3, padding=1),
            nn.BatchNorm2d(channels),
            nn.ReLU(),
            nn.Conv2d(channels, channels * 2, 3, padding=1, stride=2),
            nn.BatchNorm2d(channels * 2),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(channels * 2, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(self.features(x), 1))


class TinyMLP(nn.Module):
    """Two linear layers with a GELU and a layer norm: the smallest useful training workload."""

    def __init__(self, dim: int = 32, hidden: int = 64) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.LayerNorm(hidden), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)
