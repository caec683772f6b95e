"""Bundles on disk: atomic writes, validated reads, listing.

Every write lands in a temporary sibling first and is renamed into place, so an interruption at
any point leaves the previous bundle (or analysis file) readable. Writers of the *same* bundle
take turns on its lock (`bundle.lock`); writers of different bundles may run concurrently.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from reportgen.bundle.analysis import Analysis
from reportgen.bundle.archive import archive_bundle
from reportgen.bundle.base import NOT_MEASURED, SCHEMA_VERSION
from reportgen.bundle.capture import Capture
from reportgen.bundle.confine import MAX_JSON_BYTES, bundle_file
from reportgen.bundle.json_bounds import (
    MAX_JSON_MAGNITUDE,
    MAX_JSON_STRING_CHARS,
    Bounded,
    JsonBoundError,
    bound_json,
    validate_numbers,
)
from reportgen.bundle.layout import (
    ANALYSIS_ERROR_FILE,
    ANALYSIS_FILE,
    LOG_FILE,
    MANIFEST_FILE,
    RECIPE_FILE,
)
from reportgen.bundle.manifest import Manifest
from reportgen.bundle.names import name_problem
from reportgen.errors import BundleError, ReportgenError, os_failure
from reportgen.recipe import MAX_RECIPE_BYTES, STORED_CONTEXT

__all__ = [
    "Bundle",
    "analysis_revision",
    "load_bundle",
    "read_analysis",
    "read_analysis_error",
    "read_bundle_text",
    "read_capture",
    "read_log_tail",
    "read_manifest",
    "read_recipe_text",
    "recover_dir",
    "replace_dir",
    "set_aside",
    "write_analysis",
    "write_analysis_error",
    "write_bundle",
]


logger = logging.getLogger(__name__)
_ModelT = TypeVar("_ModelT", bound=BaseModel)
_T = TypeVar("_T")
_TAIL_BYTES = 64 * 1024


@dataclass(frozen=True)
class Bundle:
    """One bundle read from disk.

    :param path: the bundle directory
    :param manifest: its manifest.json
    :param analysis: its analysis.json, or None before analysis (or for runs without a trace)
    """

    path: Path
    manifest: Manifest
    analysis: Analysis | None = None
    capture: Capture | None = None
    analysis_error: str | None = None

    @property
    def name(self) -> str:
        """The bundle's directory name."""
        return self.path.name


def _sibling(dest: Path, kind: str) -> Path:
    return dest.with_name(f".{kind}-{dest.name}-{secrets.token_hex(4)}")


def _siblings(dest: Path, kind: str) -> list[Path]:
    pattern = re.compile(rf"^\.{kind}-{re.escape(dest.name)}-[0-9a-f]{{8}}$")
    if not dest.parent.is_dir():
        return []
    return sorted(p for p in dest.parent.iterdir() if pattern.fullmatch(p.name))


Keep = Callable[[Path], object]
"""What becomes of a replaced directory (default: deleted); bundles are archived (`archive_bundle`)."""


def _drop(old: Path) -> None:
    shutil.rmtree(old, ignore_errors=True)


def recover_dir(dest: Path, keep: Keep = _drop) -> None:
    """Finish or undo a :func:`replace_dir` of `dest` that was interrupted.

    Restores the previous directory when `dest` is missing; a previous one left beside a complete `dest`
    goes to `keep`; leftover temporaries are removed.
    """
    olds = _siblings(dest, "old")
    if olds and not dest.exists():
        olds.pop().rename(dest)
    for old in olds:
        keep(old)
    for leftover in _siblings(dest, "tmp"):
        shutil.rmtree(leftover, ignore_errors=True)


def set_aside(dest: Path) -> Path:
    """Rename directory `dest` to an `.old-*` sibling and return it; :func:`recover_dir` puts it back while
    `dest` is missing."""
    old = _sibling(dest, "old")
    dest.rename(old)
    return old


def _swap_dir(src: Path, dest: Path, keep: Keep) -> None:
    """Replace directory `dest` by `src` (a sibling of it) with two renames; the previous one goes to `keep`.

    At every instant either `dest` or its `.old-*` sibling holds a complete previous version.
    """
    old = set_aside(dest) if dest.exists() else None
    try:
        src.rename(dest)
    except BaseException:
        if old is not None:
            old.rename(dest)
        raise
    if old is not None:
        keep(old)


def _write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to a temporary sibling, then rename it to `path`; BundleError when the OS refuses."""
    tmp = path.with_name(f".{path.name}-{secrets.token_hex(4)}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise os_failure(exc, BundleError, f"write {path.name}", path) from exc
        raise


def replace_dir(
    dest: Path,
    populate: Callable[[Path], _T],
    error: type[ReportgenError] = BundleError,
    what: str = "bundle",
    keep: Keep = _drop,
) -> _T:
    """Build directory `dest` anew: `populate` fills a temporary sibling, which then replaces it.

    An interruption at any point leaves the previous `dest` readable (or restorable by
    :func:`recover_dir`, which every call runs first); when `populate` raises, `dest` is untouched.
    A failure of the OS (disk full, permission denied, a missing parent) becomes one `error`
    naming the file and `what` was being written.

    :returns: what `populate` returned
    """
    tmp = _sibling(dest, "tmp")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        recover_dir(dest, keep)
        tmp.mkdir()
    except OSError as exc:
        raise os_failure(exc, error, f"write {what} {dest.name!r}", dest) from exc
    try:
        result = populate(tmp)
        _swap_dir(tmp, dest, keep)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError):
            raise os_failure(exc, error, f"write {what} {dest.name!r}", dest) from exc
        raise
    return result


def write_bundle(results_dir: Path, name: str, populate: Callable[[Path], Manifest]) -> Path:
    """Write bundle `name` under `results_dir`, replacing any previous one atomically; the previous run is
    kept in `<results_dir>/.history/<name>/<run id>/` (`archive_bundle`).

    :param populate: writes the bundle's files into the directory it is given and returns the
        manifest, which is then written as manifest.json
    :returns: the bundle directory
    """
    if (problem := name_problem(name)) is not None:
        raise BundleError(f"invalid bundle name: {problem}", path=results_dir)

    def fill(tmp: Path) -> None:
        manifest = populate(tmp)
        _write_text_atomic(tmp / MANIFEST_FILE, manifest.model_dump_json(indent=2) + "\n")

    replace_dir(results_dir / name, fill, keep=lambda old: archive_bundle(old, results_dir, name))
    return results_dir / name


def _validation_message(error: ValidationError) -> str:
    parts = []
    for item in error.errors()[:3]:
        where = ".".join(str(part) for part in item["loc"]) or "<root>"
        parts.append(f"{where}: {item['msg']}")
    more = error.error_count() - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def _read_model(bundle_dir: Path, relative: str, model: type[_ModelT]) -> _ModelT:
    """Read and validate one schema-versioned JSON file of the bundle."""
    hint = "re-run the recipe to rewrite the bundle"
    path = bundle_file(bundle_dir, relative, MAX_JSON_BYTES)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BundleError(f"missing {path.name}", path=path, hint=hint) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BundleError(f"cannot read {path.name}: {exc}", path=path, hint=hint) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BundleError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno, column=exc.colno, hint=hint) from None
    except (RecursionError, ValueError) as exc:  # nested past the parser's stack; an int of over 4,300 digits
        raise BundleError(f"invalid JSON: {str(exc).splitlines()[0]}", path=path, hint=hint) from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        raise BundleError(
            f"unknown schema_version {version!r} (this reportgen reads {SCHEMA_VERSION})",
            path=path,
            hint="use the reportgen version that wrote it, or re-run the recipe",
        )
    try:
        bounded = bound_json(data)
    except JsonBoundError as exc:
        raise BundleError(f"{path.name} not read: {exc}", path=path, hint=hint) from None
    _warn_bounded(path, bounded)
    try:
        return validate_numbers(model, data, bounded.numbers, STORED_CONTEXT)
    except ValidationError as exc:
        raise BundleError(f"invalid {path.name}: {_validation_message(exc)}", path=path, hint=hint) from None


def _warn_bounded(path: Path, bounded: Bounded) -> None:
    """One warning per kind of change `bound_json` made to the file."""
    if bounded.cut_strings:
        logger.warning("%s: %d strings cut to %d characters", path, bounded.cut_strings, MAX_JSON_STRING_CHARS)
    if bounded.numbers:
        first = ".".join(str(part) for part in bounded.numbers[0])
        logger.warning(
            "%s: %d numbers not finite or past %.3g (first at %s): shown as %s, or their entry left out",
            path,
            len(bounded.numbers),
            MAX_JSON_MAGNITUDE,
            first,
            NOT_MEASURED,
        )


def read_manifest(bundle_dir: Path) -> Manifest:
    """Read a bundle's manifest.json; BundleError when missing, invalid or of an unknown schema."""
    return _read_model(bundle_dir, MANIFEST_FILE, Manifest)


def write_analysis(bundle_dir: Path, analysis: Analysis) -> Path:
    """Write analysis.json into an existing bundle atomically (clearing an earlier failure); returns its path."""
    path = bundle_dir / ANALYSIS_FILE
    _write_text_atomic(path, analysis.model_dump_json(indent=2) + "\n")
    (bundle_dir / ANALYSIS_ERROR_FILE).unlink(missing_ok=True)
    return path


def write_analysis_error(bundle_dir: Path, error: str) -> Path:
    """Record why a bundle could not be analysed, for its page; returns the file's path."""
    path = bundle_dir / ANALYSIS_ERROR_FILE
    _write_text_atomic(path, error.rstrip() + "\n")
    return path


def read_analysis_error(bundle_dir: Path) -> str | None:
    """Why the bundle's last analysis failed; None when it did not (or was never tried)."""
    if os.path.lexists(bundle_dir / ANALYSIS_FILE) or not os.path.lexists(bundle_dir / ANALYSIS_ERROR_FILE):
        return None
    try:
        path = bundle_file(bundle_dir, ANALYSIS_ERROR_FILE, _TAIL_BYTES)
    except BundleError as exc:
        return str(exc)
    return path.read_text(encoding="utf-8", errors="replace").strip() or None


def read_analysis(bundle_dir: Path) -> Analysis | None:
    """Read a bundle's analysis.json; None when there is none, BundleError when it is invalid."""
    if not os.path.lexists(bundle_dir / ANALYSIS_FILE):
        return None
    return _read_model(bundle_dir, ANALYSIS_FILE, Analysis)


_REVISION = re.compile(rb'"revision"\s*:\s*(\d+)')
_HEAD_BYTES = 512


def analysis_revision(bundle_dir: Path) -> int | None:
    """The `revision` of the bundle's analysis.json, read from the head of the file (the model writes it
    second) without parsing the rest, which holds megabytes for a large model; None when it is not there
    (no file, an unreadable one, or another layout: then read it whole)."""
    try:
        with bundle_file(bundle_dir, ANALYSIS_FILE, MAX_JSON_BYTES).open("rb") as handle:
            match = _REVISION.search(handle.read(_HEAD_BYTES))
    except (BundleError, OSError):
        return None
    return int(match.group(1)) if match else None


def read_capture(bundle_dir: Path, manifest: Manifest) -> Capture | None:
    """The run's capture.json (graph/kernel benchmarks, compile diagnostics), if it wrote one."""
    if manifest.capture_file is None or not os.path.lexists(bundle_dir / manifest.capture_file):
        return None
    return _read_model(bundle_dir, manifest.capture_file, Capture)


def read_bundle_text(bundle_dir: Path, relative: str, max_bytes: int, what: str) -> str | None:
    """An optional text file of the bundle; None when it has none, or (with a warning saying `what` was not
    read) when it is not a regular file inside the bundle within `max_bytes`."""
    if not os.path.lexists(bundle_dir / relative):
        return None
    try:
        return bundle_file(bundle_dir, relative, max_bytes).read_text(encoding="utf-8", errors="replace")
    except (BundleError, OSError) as exc:
        logger.warning("%s: %s", what, exc)
        return None


def read_recipe_text(bundle_dir: Path) -> str | None:
    """The recipe file as the user wrote it; None (with a warning) when the bundle has none or it is not a
    regular file inside the bundle."""
    return read_bundle_text(bundle_dir, RECIPE_FILE, MAX_RECIPE_BYTES, "recipe not read")


def read_log_tail(bundle_dir: Path, log_file: str = LOG_FILE, lines: int = 40) -> str | None:
    """The last `lines` lines of the bundle's log, or None when it has none.

    :param log_file: path inside the bundle (paths leading outside it are refused)
    """
    try:
        path = bundle_file(bundle_dir, log_file, max_bytes=1 << 62)  # only its tail is read
    except BundleError:
        return None
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - _TAIL_BYTES))
        data = handle.read()
    text = data.decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def load_bundle(path: Path) -> Bundle:
    """Read a bundle's manifest, analysis and capture; BundleError when one is invalid."""
    manifest = read_manifest(path)
    return Bundle(
        path=path,
        manifest=manifest,
        analysis=read_analysis(path),
        capture=read_capture(path, manifest),
        analysis_error=read_analysis_error(path),
    )
