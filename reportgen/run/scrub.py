"""Redact credentials from everything a run writes (its log, error text, captures, the recipe copy, the
copied modules) before the bundle is written, and count what was redacted, by kind and place.

Two kinds of secret become ``[redacted]``: what the environment's variables carry
(`credentials.secret_parts`: the whole value of a secret-named variable, the credential-shaped parts of
others), wherever it appears, and anything shaped like a credential (`credentials.redact`: known token
formats, passwords in URLs), whatever printed it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reportgen.bundle import MODULES_DIR, Redaction
from reportgen.credentials import REDACTED, redact, secret_parts
from reportgen.recipe import Recipe

__all__ = ["MIN_SECRET_CHARS", "REDACTED", "Scrubber"]

MIN_SECRET_CHARS = 6
"""Shorter values of secret-named variables are not searched for: replacing every `1` would garble the log."""
_RECIPE_TEXT_FIELDS = (("title",), ("description",), ("model", "kwargs"), ("inputs", "kwargs"))
"""The recipe's free text and arguments: the rest is validated names, numbers and choices."""


@dataclass
class Scrubber:
    """Replaces the given secret values and credential-shaped strings; counts them per kind and place.

    :param secrets: literal values to redact, longest first
    """

    secrets: tuple[str, ...] = ()
    found: Counter[tuple[str, str]] = field(default_factory=Counter)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Scrubber:
        """A scrubber for the secret-looking variables of `environ`."""
        values = {
            part.strip()
            for name, value in environ.items()
            for part in secret_parts(name, value)
            if len(part.strip()) >= MIN_SECRET_CHARS
        }
        return cls(tuple(sorted(values, key=lambda v: (-len(v), v))))

    def scrub(self, text: str, where: str = "text") -> str:
        """`text` with every secret replaced by ``[redacted]``; counted under `where`."""
        text, found = redact(text, self.secrets)
        for kind, count in found.items():
            self.found[(kind, where)] += count
        return text

    def scrub_file(self, path: Path, where: str | None = None) -> None:
        """Rewrite a text file scrubbed, in place; a missing file is left alone."""
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return
        text = raw.decode("utf-8", errors="replace")
        scrubbed = self.scrub(text, where or path.name)
        if scrubbed != text:
            path.write_text(scrubbed, encoding="utf-8")

    def scrub_modules(self, bundle: Path) -> None:
        """Scrub every file under the bundle's `modules/` (compiled modules, copied sources)."""
        for path in sorted((bundle / MODULES_DIR).rglob("*")):
            if path.is_file() and not path.is_symlink():
                self.scrub_file(path, f"{MODULES_DIR}/")

    def scrub_recipe(self, recipe: Recipe) -> Recipe:
        """The recipe with its free text and arguments scrubbed (the copy the manifest keeps)."""
        data = recipe.model_dump(mode="json")
        for path in _RECIPE_TEXT_FIELDS:
            parent = data
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = self._scrub_value(parent[path[-1]])
        for variant in data["variants"]:
            variant["description"] = self._scrub_value(variant["description"])
        return Recipe.model_validate(data)

    def _scrub_value(self, value: object) -> object:
        if isinstance(value, str):
            return self.scrub(value, "recipe")
        if isinstance(value, dict):
            return {key: self._scrub_value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._scrub_value(item) for item in value]
        return value

    def report(self) -> list[Redaction]:
        """What was redacted: one entry per kind and place, in a stable order."""
        return [Redaction(kind=kind, where=where, count=n) for (kind, where), n in sorted(self.found.items())]
