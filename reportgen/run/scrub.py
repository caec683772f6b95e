"""Redact credentials from what a run leaves behind (its log, its error text) before a bundle is written.

Two kinds of secret are replaced with ``[redacted]``: the values of the environment's secret-looking
variables (by name or value, as `environment.is_secret` decides), wherever they appear, and anything
shaped like a known token (`environment.SECRET_VALUE`), whatever printed it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from reportgen.credentials import SECRET_VALUE, is_secret

__all__ = ["MIN_SECRET_CHARS", "REDACTED", "Scrubber"]

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 6
"""Shorter values of secret-named variables are not searched for: replacing every `1` would garble the log."""

_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z ]*)PRIVATE KEY-----[A-Za-z0-9+/=\s\\]*(?:-----END \1PRIVATE KEY-----)?")
"""A PEM private key with its body (also with JSON-escaped newlines), up to its END line if present."""


@dataclass(frozen=True)
class Scrubber:
    """Replaces the given secret values, PEM private keys and token-shaped strings.

    :param secrets: literal values to redact, longest first
    """

    secrets: tuple[str, ...] = ()

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Scrubber:
        """A scrubber for the secret-looking variables of `environ`."""
        values = {
            value.strip()
            for name, value in environ.items()
            if is_secret(name, value) and len(value.strip()) >= MIN_SECRET_CHARS
        }
        return cls(tuple(sorted(values, key=lambda v: (-len(v), v))))

    def scrub(self, text: str) -> str:
        """`text` with every secret replaced by ``[redacted]``."""
        for value in self.secrets:
            text = text.replace(value, REDACTED)
        text = _PEM_BLOCK.sub(REDACTED, text)
        return SECRET_VALUE.sub(REDACTED, text)

    def scrub_file(self, path: Path) -> None:
        """Rewrite a text file scrubbed, in place; a missing file is left alone."""
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return
        text = raw.decode("utf-8", errors="replace")
        scrubbed = self.scrub(text)
        if scrubbed != text:
            path.write_text(scrubbed, encoding="utf-8")
