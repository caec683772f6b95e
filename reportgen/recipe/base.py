"""The recipe model's shared vocabulary: its strict base, value types and bounds (declared once, used by every
section of the recipe)."""

from __future__ import annotations

import re
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "AMP",
    "BACKEND_RE",
    "MAX_BATCH_SIZE",
    "MAX_RANDOM_HIGH",
    "MAX_TENSOR_DIMS",
    "MAX_TIMEOUT_S",
    "MODEL_REF_RE",
    "NAME_RE",
    "VARIANT_NAME_RE",
    "CompileMode",
    "DType",
    "Strict",
]

AMP = Literal["none", "fp16", "bf16"]
DType = Literal["float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"]
NAME_RE = r"^[a-z0-9][a-z0-9_.-]{0,63}$"
"""Recipe names (pydantic's Rust regex engine: `$` is the end of the text, never before a final newline)."""
MODEL_REF_RE = re.compile(r"timm:[A-Za-z0-9_.-]+|torchvision:[A-Za-z0-9_]+|[A-Za-z_][\w.]*:[A-Za-z_]\w*")
"""`model.ref` and `inputs.factory`, matched whole (`fullmatch`: a `$` would let a final newline through)."""
MAX_TIMEOUT_S: Final = 86400
"""A run's wall-clock limit, recipe or `--timeout`: one day; longer is a hang, not a benchmark."""
MAX_BATCH_SIZE: Final = 1 << 16
"""The largest batch size (`batch_size`, `batch_cycle`, `cpu.batch_size`): far past any benchmark's, so that a
typo (a digit too many) fails here instead of as an out-of-memory run."""
MAX_TENSOR_DIMS: Final = 16
"""Dimensions of one input tensor (the batch one apart): models take 5 or 6 at most; 16 leaves room and refuses a
runaway list."""
MAX_RANDOM_HIGH: Final = 1 << 31
"""Exclusive bound of random integer inputs: token ids and class labels are far below; int32's range."""
BACKEND_RE: Final = r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$"
"""A `torch.compile` backend: a registered name (`inductor`, `aot_eager`, `cudagraphs`, ...)."""


class Strict(BaseModel):
    """Base: unknown keys are errors; instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


CompileMode = Literal["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"]
"""`torch.compile`'s modes."""
VARIANT_NAME_RE: Final = r"^[a-z0-9][a-z0-9_-]{0,31}$"
"""Variant and sweep point names: the bundle is `<recipe>--<name>`."""
