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


class Attention(nn.Module):
    """Multi-head self-attention: a fused QKV projection, `scaled_dot_product_attention`, an output projection."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, dim = x.shape
        qkv = self.qkv(x).reshape(batch, tokens, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        out = nn.functional.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        return self.proj(out.transpose(1, 2).reshape(batch, tokens, dim))


class Mlp(nn.Module):
    """Linear, GELU, linear."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class TransformerBlock(nn.Module):
    """Pre-norm transformer block: x + attn(norm1(x)), then x + mlp(norm2(x))."""

    def __init__(self, dim: int, heads: int, mlp_ratio: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, dim * mlp_ratio)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyTransformer(nn.Module):
    """A ViT-style encoder on token embeddings (attention + MLP + layer norm), with a mean-pooled linear head."""

    def __init__(
        self,
        dim: int = 512,
        heads: int = 8,
        depth: int = 4,
        mlp_ratio: int = 4,
        classes: int = 10,
        extra_matmuls: int = 0,
        graph_break: bool = False,
    ) -> None:
        """`extra_matmuls` and `graph_break` plant regressions for the gate's check (`recipes/transformer_*.yaml`): more GPU
        work (dim x dim matmuls on every token), or the same math in more graphs (a break after the first block)."""
        super().__init__()
        self.blocks = nn.Sequential(*(TransformerBlock(dim, heads, mlp_ratio) for _ in range(depth)))
        self.extra = nn.Sequential(*(nn.Linear(dim, dim, bias=False) for _ in range(extra_matmuls)))
        self.graph_break = graph_break
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.graph_break:
            x = self.blocks[0](x)
            torch._dynamo.graph_break()
            x = self.blocks[1:](x)
        else:
            x = self.blocks(x)
        return self.head(self.norm(self.extra(x)).mean(dim=1))
