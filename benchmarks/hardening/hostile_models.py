"""Models that behave as an attacker's recipe would, for benchmarks/hardening/check.sh (GPU check of issue 26)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import torch
from torch import nn

FAKE_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
"""A GitHub-token-shaped string (not a real token), put into a profiler span's name."""


def _orphan(pid_file: str) -> None:
    """Start a `sleep` in a session of its own (it leaves the run's process group) and note its pid."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(900)"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    Path(pid_file).write_text(str(proc.pid))


class LabelledMlp(nn.Module):
    """A small MLP whose forward opens an eager `record_function` span named after a token; starts an orphan."""

    def __init__(self, dim: int = 256, pid_file: str = "", hang: bool = False) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        if pid_file:
            _orphan(pid_file)
        while hang:
            time.sleep(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _label(x)
        return self.net(x)


@torch.compiler.disable
def _label(x: torch.Tensor) -> None:
    """An eager span named after a token (Dynamo drops `record_function` inside a compiled graph)."""
    with torch.profiler.record_function(f"token={FAKE_TOKEN}"):
        x.sum()
