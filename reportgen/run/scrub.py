"""Redact credentials from everything a run writes (its log, error text, captures, the recipe copy, the
copied modules, its profiler traces) before the bundle is written, and count what was redacted, by kind and
place.

Two kinds of secret become ``[redacted]``: what the environment's variables carry
(`credentials.secret_parts`: the whole value of a secret-named variable, the credential-shaped parts of
others), wherever it appears, and anything shaped like a credential (`credentials.redact`: known token
formats, passwords in URLs), whatever printed it. The recipe's env values of secret-named variables are
never kept, whatever their length (`credentials.redact_env`); a trace's event names and args (a
`record_function` label) are redacted as a stream (`formats.rewrite_trace`).
"""

from __future__ import annotations

import logging
import os
import zlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from reportgen.bundle import (
    EAGER_TRACE_FILE,
    GRAPHS_DIR,
    MODULES_DIR,
    RANKS_DIR,
    RECIPE_FILE,
    SHAPES_TRACE_FILE,
    TRACE_FILE,
    Redaction,
    is_plain_file,
    open_plain,
    walk_entries,
    write_if_changed,
)
from reportgen.credentials import ENV_VALUE, REDACTED, redact, redact_env, redact_env_yaml, secret_parts
from reportgen.formats import TraceTooLargeError, rewrite_trace
from reportgen.recipe import Recipe

__all__ = ["MIN_SECRET_CHARS", "REDACTED", "Scrubber"]

logger = logging.getLogger(__name__)

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
        """Rewrite a text file scrubbed (a new file renamed over it); a missing file is left alone, and so is
        anything but a plain file (a link, a FIFO, a file with other hard links: never read or written through,
        and never published, `bundle.confine`)."""
        try:
            info = os.lstat(path)
        except OSError:
            return
        handle = open_plain(path, info) if is_plain_file(info) else None
        if handle is None:
            return
        with handle:
            raw = handle.read()
        text = raw.decode("utf-8", errors="replace")
        scrubbed = self.scrub(text, where or path.name)
        if scrubbed != text:
            write_if_changed(path, scrubbed.encode("utf-8"))

    def scrub_modules(self, bundle: Path) -> None:
        """Scrub every plain file under the bundle's `modules/` (compiled modules, copied sources); the walk
        follows no link and is bounded (`bundle.confine.walk_entries`)."""
        for _, path, info in walk_entries(bundle / MODULES_DIR, "scrub of the modules"):
            if is_plain_file(info):
                self.scrub_file(Path(path), f"{MODULES_DIR}/")

    def scrub_recipe_text(self, text: str) -> str:
        """The recipe file's text scrubbed, and the values of its secret-named env variables taken out."""
        text = self.scrub(text, RECIPE_FILE)
        redacted, count = redact_env_yaml(text)
        if count:
            self.found[(ENV_VALUE, RECIPE_FILE)] += count
        return redacted

    def scrub_recipe(self, recipe: Recipe) -> Recipe:
        """The recipe with its free text and arguments scrubbed and its secret-named env values taken out (the
        copy the manifest keeps)."""
        data = recipe.model_dump(mode="json")
        for path in _RECIPE_TEXT_FIELDS:
            parent = data
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = self._scrub_value(parent[path[-1]])
        for variant in data["variants"]:
            variant["description"] = self._scrub_value(variant["description"])
        for holder in (data, *data["variants"]):
            holder["env"] = redact_env(holder["env"])
        try:
            return Recipe.model_validate(data)
        except ValidationError:  # a secret-named variable whose redacted value the policy refuses: left out
            for holder in (data, *data["variants"]):
                holder["env"] = {k: v for k, v in holder["env"].items() if v != REDACTED}
            return Recipe.model_validate(data)

    def scrub_traces(self, bundle: Path) -> None:
        """Redact the run's profiler traces (`trace.json.gz`, `trace-eager.json.gz`, `trace-shapes.json.gz`,
        `graphs/*.json.gz`, and each rank's in `ranks/<rank>/`): span names (a
        `record_function` label), args. A trace past the bounds of any trace read is removed: no report could
        read or publish it, and it was not scrubbed."""
        graphs = bundle / GRAPHS_DIR
        listed = sorted(graphs.glob("*.json.gz")) if graphs.is_dir() and not graphs.is_symlink() else []
        traces = (TRACE_FILE, EAGER_TRACE_FILE, SHAPES_TRACE_FILE)
        ranks = bundle / RANKS_DIR  # a distributed run's other ranks: `ranks/<rank>/trace.json.gz`, ...
        found = sorted(ranks.iterdir()) if ranks.is_dir() and not ranks.is_symlink() else []
        folders = [bundle, *(d for d in found if d.is_dir() and not d.is_symlink())]
        for path in [*(folder / name for folder in folders for name in traces), *listed]:
            try:
                plain = is_plain_file(os.lstat(path))  # never through a link, nor an outside file's hard link
            except OSError:
                continue
            if plain:
                self._scrub_trace(path, path.relative_to(bundle).as_posix())

    def _scrub_trace(self, path: Path, where: str) -> None:
        try:
            data = rewrite_trace(
                path, lambda text: self.scrub(text, where), lambda text: bool(redact(text, self.secrets)[1])
            )
        except TraceTooLargeError as exc:
            logger.warning("%s: removed, not scrubbed: %s", path, exc)
            path.unlink()
            return
        except (EOFError, zlib.error, OSError):  # a damaged trace: its analysis says so
            return
        if data is not None:
            write_if_changed(path, data)

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
