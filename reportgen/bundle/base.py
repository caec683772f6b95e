"""What every bundle file's model shares: the schema version, the model base, run status, graph kinds."""

from __future__ import annotations

from enum import Enum
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "NOT_MEASURED",
    "SCHEMA_VERSION",
    "BundleModel",
    "GraphKind",
    "RunStatus",
]

SCHEMA_VERSION: Final = 1

NOT_MEASURED = "—"
"""How every page, table and console line shows a number the run did not measure."""


class BundleModel(BaseModel):
    """Base of the bundle's models: unknown keys are errors, instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class RunStatus(str, Enum):
    """How a run ended."""

    ok = "ok"
    failed = "failed"
    timeout = "timeout"
    oom = "oom"
    killed = "killed"


GraphKind = Literal["forward", "backward", "inference", "unknown"]
