"""The kernel categories: one declaration that analysis, charts and docs all read.

A category is what `reportgen.analyze` assigns to each kernel (GPU) or op (CPU); its order is the
display order of every table and chart, its colour is the same in every chart, and its seed bucket
is the one PyTorch's own `python wrapper.py -p` puts it in (`pointwise`, `reduction`,
`persistent_reduction`, else `other`).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

__all__ = [
    "CATEGORIES",
    "CATEGORY_ORDER",
    "OTHER",
    "SEED_BUCKETS",
    "Category",
    "category_color",
    "seed_category",
]

SEED_BUCKETS: tuple[str, ...] = ("pointwise", "reduction", "persistent_reduction", "other")
"""`wrapper.py -p`'s categories, with `triton_unknown` and `unknown` merged into `other`."""


@dataclass(frozen=True)
class Category:
    """One kernel category.

    :param name: as stored in bundles, e.g. `triton_pointwise`
    :param color: its colour in every chart
    :param description: what it holds, for the docs
    :param seed_bucket: its bucket in `wrapper.py -p` (one of `SEED_BUCKETS`)
    """

    name: str
    color: str
    description: str
    seed_bucket: str = "other"


CATEGORIES: tuple[Category, ...] = (
    Category("triton_pointwise", "#4c72b0", "Inductor pointwise Triton kernels (`triton_poi_`)", "pointwise"),
    Category("triton_reduction", "#dd8452", "Inductor reduction Triton kernels (`triton_red_`)", "reduction"),
    Category(
        "triton_persistent_reduction",
        "#c44e52",
        "Inductor persistent reductions, one block per row (`triton_per_`)",
        "persistent_reduction",
    ),
    Category("triton_template", "#8172b3", "Inductor Triton templates: GEMM/conv with epilogues (`triton_tem_`)"),
    Category("triton_foreach", "#937860", "Inductor foreach kernels over many tensors (`triton_for_`)"),
    Category("triton_split_scan", "#da8bc3", "Inductor split scans (`triton_spl_`)"),
    Category("triton_other", "#a6bddb", "other Triton kernels"),
    Category("cpp_fused", "#e377c2", "Inductor C++ kernels of CPU runs (`cpp_fused_`)"),
    Category("cpp_template", "#9467bd", "Inductor C++ GEMM templates (max-autotune on CPU)"),
    Category("extern_gemm", "#55a868", "library GEMMs: cuBLAS, CUTLASS, `aten::mm`"),
    Category("conv", "#2ca02c", "library convolutions: cuDNN, `aten::convolution`"),
    Category("attention", "#17becf", "attention kernels: flash, memory-efficient, cuDNN attention"),
    Category("collective", "#bcbd22", "NCCL collectives"),
    Category("aten_native", "#ccb974", "ATen's own kernels (`at::native::`, `aten::` ops)"),
    Category("memcpy", "#8c8c8c", "copies (`gpu_memcpy`)"),
    Category("memset", "#b0b0b0", "fills (`gpu_memset`)"),
    Category("other", "#7f7f7f", "anything no rule matches"),
)
"""Every category, in display order."""

CATEGORY_ORDER: tuple[str, ...] = tuple(c.name for c in CATEGORIES)
"""Category names in display order."""
OTHER = "other"
"""The category of a name no rule matches."""

_BY_NAME = {c.name: c for c in CATEGORIES}
_FALLBACK_COLORS = ("#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#e7ba52", "#393b79", "#637939")


def category_color(name: str) -> str:
    """The colour of category `name`; a name from a newer bundle gets a stable colour from its text."""
    known = _BY_NAME.get(name)
    if known is not None:
        return known.color
    return _FALLBACK_COLORS[zlib.crc32(name.encode()) % len(_FALLBACK_COLORS)]


def seed_category(name: str) -> str:
    """PyTorch's own bucket (`wrapper.py -p`) for category `name`.

    :raises ValueError: for a name that is not a category
    """
    if name not in _BY_NAME:
        raise ValueError(f"unknown category {name!r}")
    return _BY_NAME[name].seed_bucket
