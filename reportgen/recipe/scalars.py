"""Plain YAML scalars that YAML readers read differently: where a recipe must say what it means.

PyYAML reads YAML 1.1, in which `0777` is 511, `on` is true, `1.10` is 1.1, `1:30` is 90 (base 60),
`0x1F` is 31, `~` is null and `2001-12-14` a date; YAML 1.1's own spec adds `y` and `n` (booleans), and
YAML 1.2 readers read `1e5` and `09` as numbers. A recipe is read by reportgen and by people, so:

- a string field (a name, a reference, a title, an env value) takes a plain (unquoted) scalar only when
  every reader reads it as text; anything else is an error that says how to quote it;
- an env value also takes a plain whole number in decimal (`0`, `1`, `8`: Inductor's switches and
  thread counts), kept as written;
- a number anywhere is written in decimal: octal, hexadecimal, binary, base-60 and `_`-grouped forms
  are errors (readers disagree on them, or on whether they are numbers at all).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final, get_origin

from reportgen.recipe.fields import accepts_none, annotation_at, union_members
from reportgen.recipe.model import Recipe

__all__ = ["ENV_DIGITS", "StringField", "number_problem", "quoted", "string_field", "text_problem"]

_TAG = "tag:yaml.org,2002:"
ENV_DIGITS: Final = re.compile(r"0|[1-9][0-9]*")
"""Plain env values taken as their text: a whole number in decimal, no sign, no leading zero, no `_`."""
_DECIMAL: Final = {
    _TAG + "int": re.compile(r"[-+]?(?:0|[1-9][0-9]*)"),
    _TAG + "float": re.compile(
        r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
    ),
}
"""Numbers every YAML reader reads alike (infinity and NaN included: the fields' own bounds refuse them)."""
_READ_ELSEWHERE: Final = (
    (re.compile(r"[yYnN]"), "YAML 1.1 readers read {} as a boolean"),
    (
        re.compile(r"[-+]?[0-9]+|0o[0-7]+|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"),
        "YAML 1.2 readers read {} as a number",
    ),
)
"""Plain scalars PyYAML reads as text but other readers do not."""
_SHOWN = 40


def quoted(text: str) -> str:
    """`text` as a single-quoted YAML scalar (shortened when long), for "quote it: '0777'"."""
    shown = text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
    return "'" + shown.replace("'", "''") + "'"


def text_problem(text: str, tag: str, read_as: str, *, digits_ok: bool) -> tuple[str, str] | None:
    """Why a plain scalar in a string field is not the text it shows, and what to write; None when it is.

    :param text: the scalar as written
    :param tag: the tag PyYAML resolved it to
    :param read_as: what PyYAML made of it, described (`integer 511`)
    :param digits_ok: a decimal whole number is taken as its digits (env values)
    """
    shown = text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
    if tag == _TAG + "str":
        reason = next((why for pattern, why in _READ_ELSEWHERE if pattern.fullmatch(text)), None)
        return None if reason is None else (f"{reason.format(shown)}, not as text", f"quote it: {quoted(text)}")
    if digits_ok and tag == _TAG + "int" and ENV_DIGITS.fullmatch(text):
        return None
    if not text:
        return "has no value (YAML reads it as null)", "write '' for an empty value"
    if tag == _TAG + "value":
        return f"YAML 1.1 gives {shown} a meaning of its own (a default value), not text", f"quote it: {quoted(text)}"
    return f"YAML reads {shown} as {read_as}, not as text", f"quote it: {quoted(text)}"


def number_problem(text: str, tag: str, value: object) -> tuple[str, str] | None:
    """Why a plain number is not in decimal, and what to write; None for a decimal one (or no number)."""
    decimal = _DECIMAL.get(tag)
    if decimal is None or decimal.fullmatch(text):
        return None
    digits = text.lstrip("+-").lower()
    if ":" in digits:
        form = "a base-60 number"
    elif "_" in digits:
        form = "a number with '_' separators"
    elif digits.startswith("0x"):
        form = "a hexadecimal number"
    elif digits.startswith("0b"):
        form = "a binary number"
    else:
        form = "an octal number"
    return (
        f"{text} is {form}: YAML 1.1 reads it as {value}, other YAML readers do not",
        f"write {value}, or quote it to make it text",
    )


@dataclass(frozen=True)
class StringField:
    """A field that holds text: whether null is allowed there, whether it is an env value."""

    nullable: bool
    env: bool


def _shape(path: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """`path` with list indices as 0: the fields' types depend on nothing else (a cache key)."""
    return tuple(0 if isinstance(part, int) else part for part in path)


def string_field(path: tuple[str | int, ...]) -> StringField | None:
    """The string field at `path` (keys and list indices) in the recipe model, or None where no text goes."""
    return _string_field(_shape(path))


@functools.lru_cache(maxsize=1024)
def _string_field(path: tuple[str | int, ...]) -> StringField | None:
    annotation = annotation_at(Recipe, path)
    if annotation is None or union_members(annotation) != (str,):
        return None
    parent = annotation_at(Recipe, path[:-1]) if path else None
    in_mapping = any(get_origin(member) is dict for member in union_members(parent))
    return StringField(nullable=accepts_none(annotation), env=in_mapping)
