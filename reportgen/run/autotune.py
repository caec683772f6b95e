"""max-autotune's choices and timings, parsed from the `AUTOTUNE` blocks Inductor writes to stderr.

Inductor (`AlgorithmSelectorCache.log_results`, torch 2.6 – 2.14) prints, for every operation it
autotunes when `max_autotune`/`max_autotune_gemm` is on::

    AUTOTUNE mm(64x1536, 1536x1000)
    strides: [1536, 1], [1, 1536]            (2.8+)
    dtypes: torch.float16, torch.float16     (2.8+)
      triton_mm_12 0.0205 ms 100.0% ACC_TYPE='tl.float32', BLOCK_K=64, ...
      mm 0.0215 ms 95.5%
    SingleProcess AUTOTUNE benchmarking takes 0.2 seconds and 0.3 seconds precompiling for 20 choices

The child's stderr is the bundle's run.log, so the parent reads the blocks from there after the
run: no hook into Inductor, and the choices survive whatever the child did afterwards. Lines of
other output that land inside a block are skipped.
"""

from __future__ import annotations

import math
import re

from reportgen.bundle import AutotuneChoice, AutotuneOp

__all__ = ["parse_autotune_log"]

_HEAD = re.compile(r"^AUTOTUNE (?P<op>[\w.]+)\((?P<sizes>.*)\)\s*$")
_CHOICE = re.compile(
    r"^ {2}(?P<name>\S+) (?P<ms>[-+\d.eE]+|inf|nan) ms(?: (?:[\d.]+%|<DIVIDED BY ZERO ERROR>))?(?: (?P<desc>.*))?$"
)
_END = re.compile(
    r"^(?:SingleProcess|SubProcess) AUTOTUNE benchmarking takes (?P<bench>[\d.]+) seconds and "
    r"(?P<pre>[\d.]+) seconds precompiling for (?P<n>\d+) choices"
)


def _ms(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) and value > 0 else None


def parse_autotune_log(text: str) -> list[AutotuneOp]:
    """Every complete or interrupted `AUTOTUNE` block of `text`, in log order."""
    ops: list[AutotuneOp] = []
    current: dict[str, object] | None = None
    choices: list[AutotuneChoice] = []

    def close(**end: object) -> None:
        nonlocal current, choices
        if current is not None and choices:
            ops.append(AutotuneOp(**current, choices=choices, **end))  # type: ignore[arg-type]
        current, choices = None, []

    for line in text.splitlines():
        if head := _HEAD.match(line):
            close()
            current = {"op": head.group("op"), "sizes": head.group("sizes")}
        elif current is None:
            continue
        elif line.startswith(("strides: ", "dtypes: ")) and not choices:
            key, _, value = line.partition(": ")
            current[key] = value.strip()
        elif choice := _CHOICE.match(line):
            desc = (choice.group("desc") or "").strip()
            choices.append(AutotuneChoice(name=choice.group("name"), ms=_ms(choice.group("ms")), description=desc))
        elif end := _END.match(line):
            close(
                benchmark_s=float(end.group("bench")),
                precompile_s=float(end.group("pre")),
                num_choices=int(end.group("n")),
            )
    close()
    return ops
