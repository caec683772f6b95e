"""The command line's numbers and paths, checked as they are parsed or before any work starts.

Each bad value is one line and exit 2: a timeout that is not positive and finite, a port beyond 1-65535, a
shard that is not `i/N`, GPUs that are not ids; an input directory that is a file or missing (`build FILE`
made an empty site), an output directory where a file stands (`--html FILE` replaced the file).
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from pathlib import Path

from reportgen.errors import BundleError, ReportgenError

__all__ = ["FLAG_TYPES", "MAX_PORT", "check_paths", "gpus", "port", "shard", "timeout"]

MAX_PORT = 65535
"""The largest TCP port; `serve --port 0` asks for any free one."""
_SHARD = re.compile(r"([1-9][0-9]{0,5})/([1-9][0-9]{0,5})")
_GPU_ID = r" *(?:[0-9]{1,4}|(?:GPU|MIG)-[A-Za-z0-9/-]{1,80}) *"
_GPUS = re.compile(rf"all|{_GPU_ID}(,{_GPU_ID})*")
"""`--gpus`: all, a count, or ids (indices, `GPU-<uuid>`, `MIG-<uuid>`) as CUDA_VISIBLE_DEVICES takes them."""


def timeout(text: str) -> float:
    """`--timeout`: seconds, positive and finite, at most the recipe's own limit (`MAX_TIMEOUT_S`)."""
    from reportgen.recipe import MAX_TIMEOUT_S

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT_S):
        raise argparse.ArgumentTypeError(f"expected seconds, more than 0 and at most {MAX_TIMEOUT_S}, got {text!r}")
    return value


def port(text: str) -> int:
    """`--port`: 1-65535, or 0 for any free port."""
    if not re.fullmatch(r"[0-9]{1,5}", text) or int(text) > MAX_PORT:
        raise argparse.ArgumentTypeError(f"expected a TCP port from 1 to {MAX_PORT} (0: any free one), got {text!r}")
    return int(text)


def shard(text: str) -> str:
    """`--shard i/N` with 1 <= i <= N."""
    match = _SHARD.fullmatch(text)
    if match is None or int(match.group(1)) > int(match.group(2)):
        raise argparse.ArgumentTypeError(f"expected i/N with 1 <= i <= N (e.g. 1/2), got {text!r}")
    return text


def gpus(text: str) -> str:
    """`--gpus`: its form only; `matrix.resolve_gpus` checks the GPUs it names."""
    if not _GPUS.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected all, a count, or GPU ids like 0,2; got {text!r}")
    return text


FLAG_TYPES: dict[str, Callable[[str], object]] = {"timeout_s": timeout, "shard": shard, "gpus": gpus}
"""Flags of the options classes whose values are checked as they are parsed (the others: their field's type)."""

_INPUT_DIRS = {
    "build": ("results", "results directory"),
    "history": ("results", "results directory"),
    "reproduce": ("bundle", "bundle directory"),
}
"""Directories a command reads: they must exist (`build nonexistent` made an empty site, exit 0)."""
_OUTPUT_DIRS = {"results": "-o/--results", "out": "--out", "html": "--html", "inductor_cache": "--inductor-cache"}
"""Directories a command writes: created when missing, refused when something else stands there."""


def check_paths(args: argparse.Namespace) -> None:
    """Refuse, before any work, inputs that are not directories and outputs where a file stands.

    :raises ReportgenError: one line, naming the path and the flag
    """
    wanted = _INPUT_DIRS.get(args.command)
    if wanted is not None:
        dest, what = wanted
        value = getattr(args, dest)
        for path in value if isinstance(value, list) else [value]:
            if not path.exists():
                raise BundleError(f"no such {what}", path=path, hint="check the path")
            if not path.is_dir():
                raise BundleError(f"expected a {what}, got a file", path=path, hint="check the path")
    read = wanted[0] if wanted is not None else None
    for dest, flag in _OUTPUT_DIRS.items():
        output = getattr(args, dest, None)
        if dest != read and isinstance(output, Path) and output.exists() and not output.is_dir():
            raise ReportgenError(
                f"{flag} must be a directory, but a file stands there", path=output, hint="choose another path"
            )
