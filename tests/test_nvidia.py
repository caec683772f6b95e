"""`nvidia-smi`, asked in one place (`reportgen.nvidia`), and the GPUs a matrix finds with it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reportgen.matrix import discover_gpus
from reportgen.nvidia import nvidia_smi

__all__: list[str] = []


def test_the_gpus_are_nvidia_smis_lines_and_none_without_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    assert nvidia_smi("-L") is None
    assert discover_gpus() == []
    script = tmp_path / "nvidia-smi"
    script.write_text(
        '#!/bin/sh\n[ "$1" = -L ] || exit 9\necho "GPU 0: NVIDIA H200 (UUID: GPU-a)"\necho "GPU 1: NVIDIA H200 (UUID: GPU-b)"\n'
    )
    script.chmod(0o755)
    assert discover_gpus() == ["0", "1"]
    assert nvidia_smi("--query-gpu=driver_version") is None  # it failed (exit 9)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert discover_gpus() == ["1"]  # what the process may see comes first
    assert os.environ["PATH"] == str(tmp_path)
