"""What the benchmarks that time fresh processes share: an environment with this checkout on the path, a command's wall
time and output, and the JSON object a probe process prints last.

Imported by its neighbours as `fresh_process` (a script's own folder is first on `sys.path`).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "last_json", "repo_env", "run_timed"]

ROOT = Path(__file__).resolve().parents[1]
"""The checkout the benchmarks belong to: a fresh process imports `reportgen` from it."""


def repo_env(base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """`base` (default: this process's environment) with `extra` set and the checkout first on `PYTHONPATH`."""
    env = {**(os.environ if base is None else base), **extra}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def run_timed(command: Sequence[str], env: Mapping[str, str]) -> tuple[float, str]:
    """Run `command` to its end; its wall seconds and standard output.

    :raises SystemExit: when it fails, with the tail of its output
    """
    started = time.perf_counter()
    result = subprocess.run(list(command), env=dict(env), capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        tail = f"{result.stdout[-3000:]}{result.stderr[-3000:]}"
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}):\n{tail}")
    return wall, result.stdout


def last_json(output: str) -> Any:
    """The JSON a probe process printed on its last line."""
    return json.loads(output.strip().splitlines()[-1])
