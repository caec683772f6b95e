"""Secrets on pages: what the run redacted, said on its page; and redaction again at render time.

A bundle made elsewhere (another host, an older reportgen) may hold credentials its run did not take out:
everything a page or notebook shows from a bundle passes `credentials.redact` once more, and the values of
secret-named env variables (manifest and recipe text) are taken out whatever they look like.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import defaultdict

from pydantic import ValidationError

from reportgen.bundle import Bundle, Manifest
from reportgen.credentials import REDACTED, redact, redact_env, redact_env_yaml
from reportgen.recipe import STORED_CONTEXT
from reportgen.render.markup import escape_md

__all__ = ["redacted", "redacted_bundle", "redactions_section"]

logger = logging.getLogger(__name__)


def redacted(text: str | None) -> str | None:
    """`text` with every credential-shaped string and every secret-named env entry's value replaced by
    ``[redacted]``."""
    return None if text is None else redact_env_yaml(redact(text)[0])[0]


def _without_env_secrets(manifest: Manifest) -> Manifest:
    """The manifest with the values of its secret-named env variables (recipe, variants, environment) redacted."""
    data = manifest.model_dump(mode="json")
    for holder in (data["recipe"], *data["recipe"]["variants"], data["environment"] or {}):
        if holder.get("env"):
            holder["env"] = redact_env(holder["env"])
    try:
        return Manifest.model_validate(data, context=STORED_CONTEXT)
    except ValidationError:  # a value the recipe's env policy refuses: the entries are left out
        for holder in (data["recipe"], *data["recipe"]["variants"], data["environment"] or {}):
            if holder.get("env"):
                holder["env"] = {k: v for k, v in holder["env"].items() if v != REDACTED}
        return Manifest.model_validate(data, context=STORED_CONTEXT)


def redacted_bundle(bundle: Bundle) -> Bundle:
    """The bundle with its manifest's every string redacted (title, description, kwargs, error, env) and the
    values of its secret-named env variables taken out."""
    bundle = dataclasses.replace(bundle, manifest=_without_env_secrets(bundle.manifest))
    text = bundle.manifest.model_dump_json()
    clean, found = redact(text)
    if not found:
        return bundle
    try:
        manifest = Manifest.model_validate_json(clean, context=STORED_CONTEXT)
    except ValidationError:  # a credential-shaped name: keep the names, redact what pages show as text
        logger.warning("%s: credentials in names; only the error text is redacted", bundle.name)
        manifest = bundle.manifest.model_copy(update={"error": redacted(bundle.manifest.error)})
    return dataclasses.replace(bundle, manifest=manifest)


def redactions_section(manifest: Manifest) -> str:
    """`## Redacted secrets`: how many credentials of each kind the run took out, and where; never the values."""
    if not manifest.redactions:
        return ""
    places: dict[str, list[str]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for item in manifest.redactions:
        counts[item.kind] += item.count
        places[item.kind].append(f"{escape_md(item.where)}: {item.count}")
    lines = [
        f"- {counts[kind]} × {escape_md(kind)} ({', '.join(places[kind])})" for kind in sorted(counts, key=str.lower)
    ]
    return "\n\n".join(
        [
            "## Redacted secrets",
            "Credentials the run met were replaced by `[redacted]` before its bundle was written:",
            "\n".join(lines),
        ]
    )
