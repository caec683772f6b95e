"""Bundles between results directories: one bundle packed into bytes (a run on another host sends it to the
driver), and several results directories merged into one (the shards of a matrix, built as one site)."""

from __future__ import annotations

import io
import json
import logging
import os
import shutil
import stat
import tarfile
from collections.abc import Sequence
from pathlib import Path

from reportgen.bundle.archive import archive_bundle, run_id
from reportgen.bundle.confine import MAX_JSON_BYTES, Entry, bundle_file, is_plain_file, open_plain, walk_entries
from reportgen.bundle.discovery import iter_kept_runs, real_dir
from reportgen.bundle.layout import HISTORY_DIR, MANIFEST_FILE
from reportgen.bundle.names import name_problem
from reportgen.bundle.store import read_manifest, replace_dir
from reportgen.errors import BundleError

__all__ = ["merge_results", "pack_bundle", "unpack_bundle"]

logger = logging.getLogger(__name__)
_SHOWN = 5
"""Skipped entries a merge warning names; the rest are counted."""


def pack_bundle(bundle: Path) -> bytes:
    """The bundle directory as an uncompressed tar (its trace is gzipped already)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(bundle, arcname=".")
    return buffer.getvalue()


def unpack_bundle(data: bytes, results_dir: Path, name: str) -> Path:
    """Write the packed bundle `data` as `results_dir/name` in one rename; the bundle it replaces is archived.

    Callers hold `bundle_lock(results_dir, name)`.

    :raises BundleError: when `data` is not a bundle called `name`, or `name` is not a bundle name
    """
    if (problem := name_problem(name)) is not None:
        raise BundleError(f"invalid bundle name: {problem}", path=results_dir)

    def fill(tmp: Path) -> None:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
            tar.extractall(tmp, filter="data")  # no links out, no absolute paths
        if read_manifest(tmp).name != name:
            raise BundleError(f"the packed bundle is not {name!r}", path=results_dir / name)

    replace_dir(results_dir / name, fill, keep=lambda old: archive_bundle(old, results_dir, name))
    return results_dir / name


def _started_and_id(bundle: Path) -> tuple[str, str] | None:
    try:
        data = json.loads(bundle_file(bundle, MANIFEST_FILE, MAX_JSON_BYTES).read_bytes())
    except (BundleError, OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return str(data.get("started_at") or ""), run_id(data)


Signature = list[tuple[str, int, int]]
"""Files of a bundle as (relative path, size, mtime): equal signatures, equal copies."""


def _signature(bundle: Path, entries: list[Entry] | None = None) -> Signature | None:
    """The plain files of a bundle (`confine.is_plain_file`); None when it holds anything else (a link, a
    special file, a file with other hard links), which a merge never copies."""
    found = []
    for relative, _, info in walk_entries(bundle, "merge") if entries is None else entries:
        if not is_plain_file(info):
            return None
        found.append((relative, info.st_size, info.st_mtime_ns))
    return found


def _copy_plain(source: Path, target: Path, entries: list[Entry]) -> Signature:
    """Copy the plain files of `source` (its walked `entries`) to a new directory `target` (with their mode and
    mtime); links,
    special files and files with other hard links are left out with one warning. Each file is opened without
    following links and checked again once open (`confine.open_plain`). Returns what was copied."""
    copied: Signature = []
    skipped = []
    target.mkdir(parents=True)
    for relative, path, info in entries:
        handle = open_plain(path, info) if is_plain_file(info) else None
        if handle is None:
            skipped.append(relative)
            continue
        dest = target / relative
        dest.parent.mkdir(parents=True, exist_ok=True)
        with handle, dest.open("xb") as out:
            shutil.copyfileobj(handle, out)
        dest.chmod((info.st_mode & 0o777) | stat.S_IRUSR | stat.S_IWUSR)  # no set-id bits
        os.utime(dest, ns=(info.st_atime_ns, info.st_mtime_ns))
        copied.append((relative, info.st_size, info.st_mtime_ns))
    if skipped:
        shown = ", ".join(ascii(r) for r in skipped[:_SHOWN])
        more = f" and {len(skipped) - _SHOWN} more" if len(skipped) > _SHOWN else ""
        logger.warning(
            "%s: %d entries not merged (links, special files, files with other hard links): %s%s",
            source,
            len(skipped),
            shown,
            more,
        )
    return copied


def _bring(source: Path, previous: Path, target: Path) -> None:
    """`target` as a copy of `source`'s plain files: the previous merge's copy (`previous`) when it is still
    equal, else a new one. Copies, not links: a bundle holds no file linked from elsewhere (`confine`), and a
    hard link copied would no longer show as one. Files keep their mtimes, so incremental renders and the
    history index see the runs unchanged."""
    target.parent.mkdir(parents=True, exist_ok=True)
    entries = walk_entries(source, "merge")
    wanted = [(r, i.st_size, i.st_mtime_ns) for r, _, i in entries if is_plain_file(i)]
    if real_dir(previous) and _signature(previous) == wanted and _signature(source, entries) is not None:
        previous.rename(target)
    else:
        _copy_plain(source, target, entries)


def merge_results(sources: Sequence[Path], dest: Path) -> dict[str, int]:
    """Make `dest` one results directory holding every run the `sources` keep (the shards of a matrix, or
    runs of one recipe from several hosts), replaced whole in one rename; what an earlier merge copied
    unchanged is moved over, not copied again.

    A bundle name's newest run (by start time) is its latest; all its other runs are its history, so two runs
    of one recipe and variant from two hosts are both kept. The same run found twice (a copy) counts once.

    :returns: runs kept per bundle name
    """
    runs: dict[str, dict[str, tuple[str, Path]]] = {}
    for source in sources:
        for name, bundle in iter_kept_runs(source):
            found = _started_and_id(bundle)
            if found is not None:
                runs.setdefault(name, {}).setdefault(found[1], (found[0], bundle))

    def fill(tmp: Path) -> None:
        for name, kept in runs.items():
            ordered = sorted(kept.items(), key=lambda item: (item[1][0], item[0]))
            *older, (_, (_, newest)) = ordered
            _bring(newest, dest / name, tmp / name)
            for identity, (_, bundle) in older:
                _bring(bundle, dest / HISTORY_DIR / name / identity, tmp / HISTORY_DIR / name / identity)

    replace_dir(dest, fill, what="merged results directory")
    return {name: len(kept) for name, kept in sorted(runs.items())}
