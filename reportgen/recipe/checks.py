"""Checks the recipe model's validators share: env mappings and text shown as written."""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from pydantic import ValidationInfo

from reportgen.credentials import looks_like_token
from reportgen.recipe.env_policy import RUN_OWNED, EntryError, env_value_problem

__all__ = ["ENV_NAME_RE", "STORED_CONTEXT", "env_values", "printable", "stored"]

ENV_NAME_RE: Final = re.compile(r"[A-Z_][A-Z0-9_]*")
"""Env var names, matched whole (`fullmatch`: a `$` would let a final newline through)."""


def env_values(value: object) -> object:
    """Env var names must be shell-safe and values strings (whole numbers are taken as their digits; the YAML
    loader already refused what a YAML reader would coerce); each follows `env_policy`."""
    if not isinstance(value, dict):
        return value
    out: dict[str, str] = {}
    for key, val in value.items():
        if not isinstance(key, str) or not ENV_NAME_RE.fullmatch(key):
            raise EntryError(f"env var name {key!r} must match [A-Z_][A-Z0-9_]*", (key,), at_key=True)
        if isinstance(val, int) and not isinstance(val, bool):
            val = str(val)
        if not isinstance(val, str):
            quote = "; quote it" if isinstance(val, (bool, float)) else ""
            raise EntryError(f"env var {key} must be a string, not {_kind(val)}{quote}", (key,), at_key=False)
        if looks_like_token(str(val)):
            raise EntryError(
                f"env var {key} holds what looks like a credential; recipes are published, "
                "so set it in the environment of the run instead",
                (key,),
                at_key=False,
            )
        problem = env_value_problem(key, str(val))
        if problem is not None:
            raise EntryError(problem, (key,), at_key=key in RUN_OWNED)
        out[key] = str(val)
    return out


def _kind(value: object) -> str:
    kinds = {dict: "a mapping", list: "a list", type(None): "null", bool: "a boolean", float: "a number"}
    return kinds.get(type(value), type(value).__name__)


def printable(value: str, *, lines: bool) -> str:
    """`value`, refusing control characters (ESC, BEL, ...; newlines and tabs are allowed when `lines`) and
    bidirectional overrides: a title or description is shown on pages and terminals as written."""
    for char in value:
        if (unicodedata.category(char) == "Cc" and not (lines and char in "\n\t")) or char in _BIDI_CONTROLS:
            raise ValueError(f"contains the control character U+{ord(char):04X}; remove it")
    return value


_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Characters that reorder the text shown after them (a title could read as something it is not)."""


STORED_CONTEXT: dict[str, bool] = {"stored_recipe": True}
"""Validation context of a recipe read back from a bundle: the run policy was applied when it ran, and a later, stricter
one never makes an earlier run unreadable (it is data, escaped). `reproduce` reloads recipe.yaml under the policy."""


def stored(info: ValidationInfo) -> bool:
    """Whether this recipe is read back from a bundle (`STORED_CONTEXT`)."""
    return isinstance(info.context, dict) and bool(info.context.get("stored_recipe"))
