"""What of the process environment a bundle may record: an allowlist, minus anything secret-looking.

Imports nothing heavy: used by the parent (to build the child's env) and the child (to record it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["ALLOWED_PREFIXES", "is_secret", "recordable_env"]

ALLOWED_PREFIXES = (
    "TORCH",
    "TORCHINDUCTOR_",
    "TORCHDYNAMO_",
    "TORCH_",
    "PYTORCH_",
    "CUDA_",
    "CUBLAS_",
    "CUDNN_",
    "NCCL_",
    "TRITON_",
    "INDUCTOR_",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "KMP_",
)
_SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION", re.I)
_SECRET_VALUE = re.compile(
    r"(hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|AKIA[0-9A-Z]{16}"
    r"|ASIA[0-9A-Z]{16}|xox[abpr]-[\w-]{10,}|sk-[A-Za-z0-9_-]{20,}|eyJ[\w-]{10,}\.[\w-]{10,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----)"
)


def is_secret(name: str, value: str) -> bool:
    """Whether a variable looks like it carries a credential, by its name or its value."""
    return bool(_SECRET_NAME.search(name) or _SECRET_VALUE.search(value))


def recordable_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The allowlisted, non-secret subset of `environ`, sorted by name."""
    return {
        name: environ[name]
        for name in sorted(environ)
        if name.startswith(ALLOWED_PREFIXES) and not is_secret(name, environ[name])
    }
