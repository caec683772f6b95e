"""Keep every run: a bundle that a new run replaces moves to `<results>/.history/<name>/<run id>/`."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import re
import shutil
from pathlib import Path
from typing import Any

from reportgen.bundle.confine import MAX_JSON_BYTES, bundle_file
from reportgen.bundle.layout import DAMAGED_DIR, HISTORY_DIR, MANIFEST_FILE
from reportgen.errors import BundleError

__all__ = ["archive_bundle", "move_damaged", "run_id"]

logger = logging.getLogger(__name__)

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
    without a readable manifest.json is not a run: it is moved aside to `.damaged/` (`move_damaged`), never
    deleted (None). One rename on one filesystem: an interrupted archive leaves the bundle where it was (the
    next write archives it) or archived, never half.
    """
    try:
        if old.is_symlink():
            raise BundleError("a symbolic link, not a bundle directory", path=old)
        manifest = json.loads(bundle_file(old, MANIFEST_FILE, MAX_JSON_BYTES).read_bytes())
        if not isinstance(manifest, dict):
            raise ValueError(f"{MANIFEST_FILE} holds no JSON object")
    except (BundleError, OSError, ValueError) as exc:
        move_damaged(old, results_dir, name, str(exc))
        return None
    target = results_dir / HISTORY_DIR / name / run_id(manifest)
    if target.exists():  # this very run is archived already: keep the first copy
        shutil.rmtree(old, ignore_errors=True)
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        old.rename(target)
    except OSError:  # left beside the new bundle as `.old-*`: the next write of this bundle archives it
        return None
    return target


def move_damaged(old: Path, results_dir: Path, name: str, why: str) -> Path | None:
    """Move directory `old` (what stood at bundle `name`) to `<results_dir>/.damaged/<name>-<UTC time>/` and say
    where with one warning; returns where (None, with the warning, when the OS refused: it stays as `old`)."""
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    aside = results_dir / DAMAGED_DIR
    try:
        aside.mkdir(parents=True, exist_ok=True)
        for n in range(1000):
            target = aside / (f"{name}-{stamp}" + (f"-{n}" if n else ""))
            if not target.exists() and not target.is_symlink():
                old.rename(target)
                break
        else:
            raise FileExistsError(f"{aside}/{name}-{stamp}-*")
    except OSError as exc:
        logger.warning("%s: not a readable bundle (%s); left at %s: cannot move it aside: %s", name, why, old, exc)
        return None
    logger.warning("%s: not a readable bundle (%s); moved aside to %s, not deleted", name, why, target)
    return target
