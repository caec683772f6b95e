"""What of the process environment a bundle may record: an allowlist, minus anything secret-looking.

Imports nothing heavy: used by the parent (to build the child's env) and the child (to record it).
"""

from __future__ import annotations

from collections.abc import Mapping

from reportgen.credentials import is_secret

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


def recordable_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The allowlisted, non-secret subset of `environ`, sorted by name."""
    return {
        name: environ[name]
        for name in sorted(environ)
        if name.startswith(ALLOWED_PREFIXES) and not is_secret(name, environ[name])
    }
