"""Read what `python <wrapper>.py -p` prints: PyTorch's own per-graph busy % and category shares.

Inductor's `compiled_module_main` (torch/_inductor/wrapper_benchmark.py) ends its `-p` report with one
machine-readable line, stable since torch 2.1::

    Output for tabulate: <name>, <pointwise>%, <reduction>%, <persistent_reduction>%, <triton_unknown>%,
        <unknown>%, <busy>%, <wall>ms

Percentages are of the unprofiled wall time per call; `triton_unknown` and `unknown` are reportgen's
`other` seed bucket.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SeedProfile", "parse_seed_output"]

_LINE = re.compile(r"^Output for tabulate: (?P<name>.*?), (?P<rest>(?:-?[\d.]+%, ){6}-?[\d.]+ms)\s*$", re.M)


@dataclass(frozen=True)
class SeedProfile:
    """One `-p` report.

    :param name: the benchmark name `-p` printed (the wrapper's module name)
    :param categories_percent: pointwise, reduction, persistent_reduction, other (% of wall time)
    :param busy_percent: "Percent of time when GPU is busy"
    :param wall_ms: unprofiled wall time per call
    """

    name: str
    categories_percent: dict[str, float]
    busy_percent: float
    wall_ms: float


def parse_seed_output(text: str) -> list[SeedProfile]:
    """Every `Output for tabulate` line of `text`, in order (one per wrapper run with `-p`)."""
    found = []
    for match in _LINE.finditer(text):
        fields = [f.strip() for f in match.group("rest").split(",")]
        pointwise, reduction, persistent, triton_unknown, unknown, busy = (float(f.rstrip("%")) for f in fields[:6])
        found.append(
            SeedProfile(
                name=match.group("name"),
                categories_percent={
                    "pointwise": pointwise,
                    "reduction": reduction,
                    "persistent_reduction": persistent,
                    "other": triton_unknown + unknown,
                },
                busy_percent=busy,
                wall_ms=float(fields[6].removesuffix("ms")),
            )
        )
    return found
