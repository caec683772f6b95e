"""Keep every run: a bundle that a new run replaces moves to `<results>/.history/<name>/<run id>/`."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

from reportgen.bundle.layout import HISTORY_DIR, MANIFEST_FILE
from reportgen.bundle.manifest import Manifest

__all__ = ["archive_bundle", "run_id"]

_UNSAFE = re.compile(r"[^0-9A-Za-z]+")


def run_id(manifest: Manifest) -> str:
    """A run's directory name: its start time (sortable), then a short hash of what identifies the run."""
    stamp = _UNSAFE.sub("", manifest.started_at)[:15] or "unknown"
    env = manifest.environment
    identity = "|".join(
        [manifest.started_at, manifest.recipe_sha256, env.device_name if env else "", manifest.finished_at]
    )
    return f"{stamp}-{hashlib.sha256(identity.encode()).hexdigest()[:8]}"


def archive_bundle(old: Path, results_dir: Path, name: str) -> Path | None:
    """Move `old` (the replaced bundle `name`, under any name) into `results_dir`'s history; returns where.

    A directory whose manifest cannot be read is not a run and is deleted (None). Same filesystem, one
    rename: an interrupted archive leaves the bundle either where it was or archived, never half of it.
    """
    try:
        manifest = Manifest.model_validate_json((old / MANIFEST_FILE).read_bytes())
    except (OSError, ValueError):
        shutil.rmtree(old, ignore_errors=True)
        return None
    target = results_dir / HISTORY_DIR / name / run_id(manifest)
    if target.exists():  # this very run is archived already: keep the first copy
        shutil.rmtree(old, ignore_errors=True)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    old.rename(target)
    return target
