"""`nvidia-smi`, asked without importing torch (the parent process never does): the GPUs, their memory, the
driver."""

from __future__ import annotations

import subprocess

__all__ = ["nvidia_smi"]


def nvidia_smi(*args: str, timeout_s: float = 30.0) -> str | None:
    """`nvidia-smi ARGS`'s standard output; None when it is missing, fails or hangs past `timeout_s`."""
    try:
        done = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=timeout_s, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout
