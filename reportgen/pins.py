"""Package pins that reportgen itself installs or asks for: declared once, read by the CLI and the noxfile.

No imports: `noxfile.py` loads this file by path before reportgen is installed.
"""

from __future__ import annotations

__all__ = ["EXTRAS", "TIMM", "TORCH_CPU", "TORCH_FOR_TORCHVISION", "model_requirements"]

EXTRAS = {"run": "torch", "site": "furo"}
"""reportgen's extras (pyproject.toml) → the module each one brings: `pip install reportgen` alone gives the Sphinx
extension, `build` of an existing site, `compare` and `history`; running recipes needs `[run]` (torch), and
a new site in reportgen's own theme `[site]` (furo)."""

TORCH_CPU = "torch==2.13.0"
"""The CPU build the test and docs sessions install (a local wheel on our CI machines)."""
TORCH_FOR_TORCHVISION = ("torch==2.14.1", "torchvision==0.29.1")
"""torchvision imports only beside the torch it was built for: the pair installed for timm/torchvision models."""
TIMM = "timm>=0.9"
"""timm models (`model.source: timm`)."""


def model_requirements(sources: set[str]) -> list[str]:
    """The pip requirements for recipes whose models come from `sources` (`timm`, `torchvision`, `python`)."""
    reqs: list[str] = []
    if sources & {"timm", "torchvision"}:
        reqs += TORCH_FOR_TORCHVISION
    if "timm" in sources:
        reqs.append(TIMM)
    return reqs
