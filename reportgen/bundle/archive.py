"""Keep every run: a bundle that a new run replaces moves to `<results>/.history/<name>/<run id>/`."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

from reportgen.bundle.layout import HISTORY_DIR, MANIFEST_FILE

__all__ = ["archive_bundle", "run_id"]

_UNSAFE = re.compile(r"[^0-9A-Za-z]+")


def run_id(data: dict[str, Any]) -> str:
    """A run's directory name, from its manifest's JSON: its start time (sortable), then a short hash of what
    identifies the run."""
    started = str(data.get("started_at") or "")
    env = data.get("environment") or {}
    identity = "|".join(
        [started, str(data.get("recipe_sha256")), str(env.get("device_name")), str(data.get("finished_at"))]
    )
    return f"{_UNSAFE.sub('', started)[:15] or 'unknown'}-{hashlib.sha256(identity.encode()).hexdigest()[:8]}"


def archive_bundle(old: Path, results_dir: Path, name: str) -> Path | None:
    """Move `old` (the replaced bundle `name`, under any name) into `results_dir`'s history; returns where.

    Its manifest is read as plain JSON, so a bundle an older or newer reportgen wrote is kept too; a directory
    without a readable manifest.json is not a run and is deleted (None). One rename on one filesystem: an
    interrupted archive leaves the bundle where it was (the next write archives it) or archived, never half.
    """
    try:
        manifest = json.loads((old / MANIFEST_FILE).read_bytes())
    except (OSError, ValueError):
        shutil.rmtree(old, ignore_errors=True)
        return None
    target = results_dir / HISTORY_DIR / name / run_id(manifest if isinstance(manifest, dict) else {})
    if target.exists():  # this very run is archived already: keep the first copy
        shutil.rmtree(old, ignore_errors=True)
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        old.rename(target)
    except OSError:  # left beside the new bundle as `.old-*`: the next write of this bundle archives it
        return None
    return target
