from __future__ import annotations

import pytest

from reportgen.run.environment import is_secret, recordable_env


def test_allowlist_keeps_torch_vars_and_drops_the_rest() -> None:
    env = {
        "TORCHINDUCTOR_UNIQUE_KERNEL_NAMES": "1",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
        "CUDA_VISIBLE_DEVICES": "0",
        "HOME": "/root",
        "PATH": "/usr/bin",
        "OPENAI_API_KEY": "sk-abcdefghijklmnopqrstuvwxyz",
    }
    assert recordable_env(env) == {
        "CUDA_VISIBLE_DEVICES": "0",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
        "TORCHINDUCTOR_UNIQUE_KERNEL_NAMES": "1",
    }


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TORCH_HUB_TOKEN", "x"),
        ("TORCHINDUCTOR_SECRET", "x"),
        ("CUDA_API_KEY", "x"),
        ("TORCH_PASSWORD", "x"),
        ("TORCH_NOTE", "hf_" + "a" * 30),
        ("TORCH_NOTE", "ghp_" + "b" * 36),
        ("TORCH_NOTE", "AKIA" + "C" * 16),
    ],
)
def test_secret_looking_vars_are_never_recorded(name: str, value: str) -> None:
    assert is_secret(name, value)
    assert recordable_env({name: value}) == {}


def test_plain_values_are_not_secrets() -> None:
    assert not is_secret("TORCHINDUCTOR_MAX_AUTOTUNE", "1")
