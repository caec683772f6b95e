"""What a credential looks like: secret-sounding variable names and known token formats.

Used by the recipe model (no tokens in published recipes), the run's environment allowlist and
the scrubber of run logs; imports nothing but `re`, so that every stage may use it.
"""

from __future__ import annotations

import re

__all__ = ["SECRET_NAME", "SECRET_VALUE", "is_secret", "looks_like_token"]

SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION", re.I)
"""Variable names that say the value is a credential."""
SECRET_VALUE = re.compile(
    r"(hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|AKIA[0-9A-Z]{16}"
    r"|ASIA[0-9A-Z]{16}|xox[abpr]-[\w-]{10,}|sk-[A-Za-z0-9_-]{20,}|eyJ[\w-]{10,}\.[\w-]{10,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----)"
)
"""Credential formats: Hugging Face, GitHub, AWS access key ids, Slack, OpenAI-style keys, JWTs, PEM keys."""


def looks_like_token(value: str) -> bool:
    """Whether `value` contains something shaped like a credential (whatever its variable is called)."""
    return SECRET_VALUE.search(value) is not None


def is_secret(name: str, value: str) -> bool:
    """Whether a variable looks like it carries a credential, by its name or its value."""
    return SECRET_NAME.search(name) is not None or looks_like_token(value)
