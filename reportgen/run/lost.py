"""The bundle of a run that left none: its worker was lost (a remote host died, the engine gave up on it).

A run is never lost silently: the driver writes this bundle, status `killed`, with the reason, so that the
site shows the run as failed and says why.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from pathlib import Path

from reportgen.bundle import RECIPE_FILE, Manifest, RunStatus, write_bundle
from reportgen.recipe import Recipe, Variant
from reportgen.run.scrub import Scrubber

__all__ = ["write_lost_run"]


def write_lost_run(
    recipe: Recipe,
    recipe_path: Path,
    results_dir: Path,
    variant: Variant | None,
    error: str,
    started_at: dt.datetime,
) -> Path:
    """Write `results_dir/<bundle name>/` for a run whose worker was lost; `error` says how. Callers hold
    `bundle_lock(results_dir, <bundle name>)`."""
    effective = recipe.for_variant(variant) if variant is not None else recipe
    scrubber = Scrubber.from_environ({**os.environ, **effective.env})
    try:
        recipe_text = recipe_path.read_bytes()
    except OSError:
        recipe_text = b""
    finished = dt.datetime.now(dt.timezone.utc)

    def populate(tmp: Path) -> Manifest:
        if recipe_text:
            text = scrubber.scrub_recipe_text(recipe_text.decode("utf-8", errors="surrogateescape"))
            (tmp / RECIPE_FILE).write_text(text, encoding="utf-8", errors="surrogateescape")
        return Manifest(
            name=recipe.bundle_name(variant),
            variant=variant.name if variant else None,
            variant_description=variant.description if variant else "",
            recipe=scrubber.scrub_recipe(effective),
            recipe_sha256=hashlib.sha256(recipe_text).hexdigest(),
            recipe_path=str(recipe_path),
            status=RunStatus.killed,
            error=scrubber.scrub(error, "error"),
            started_at=started_at.isoformat(timespec="seconds"),
            finished_at=finished.isoformat(timespec="seconds"),
            wall_time_s=round((finished - started_at).total_seconds(), 3),
            redactions=scrubber.report(),
        )

    return write_bundle(results_dir, recipe.bundle_name(variant), populate)
