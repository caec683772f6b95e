"""Bundles between results directories: one bundle packed into bytes (a run on another host sends it to the
driver), and several results directories merged into one (the shards of a matrix, built as one site)."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from reportgen.bundle.archive import archive_bundle, run_id
from reportgen.bundle.layout import HISTORY_DIR, MANIFEST_FILE
from reportgen.bundle.store import iter_bundles, read_manifest, replace_dir
from reportgen.errors import BundleError

__all__ = ["iter_kept_runs", "merge_results", "pack_bundle", "unpack_bundle"]


def pack_bundle(bundle: Path) -> bytes:
    """The bundle directory as an uncompressed tar (its trace is gzipped already)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(bundle, arcname=".")
    return buffer.getvalue()


def unpack_bundle(data: bytes, results_dir: Path, name: str) -> Path:
    """Write the packed bundle `data` as `results_dir/name` in one rename; the bundle it replaces is archived.

    Callers hold `bundle_lock(results_dir, name)`.

    :raises BundleError: when `data` is not a bundle called `name`
    """

    def fill(tmp: Path) -> None:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
            tar.extractall(tmp, filter="data")  # no links out, no absolute paths
        if read_manifest(tmp).name != name:
            raise BundleError(f"the packed bundle is not {name!r}", path=results_dir / name)

    replace_dir(results_dir / name, fill, keep=lambda old: archive_bundle(old, results_dir, name))
    return results_dir / name


def iter_kept_runs(results: Path) -> Iterator[tuple[str, Path]]:
    """(bundle name, bundle) of every run a results directory keeps: `<name>/` (the latest run) and
    `.history/<name>/<run id>/`."""
    for bundle in iter_bundles(results):
        yield bundle.name, bundle
    for manifest in sorted((results / HISTORY_DIR).glob(f"*/*/{MANIFEST_FILE}")):
        yield manifest.parent.parent.name, manifest.parent


def _started_and_id(bundle: Path) -> tuple[str, str] | None:
    try:
        data = json.loads((bundle / MANIFEST_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return str(data.get("started_at") or ""), run_id(data)


def _signature(bundle: Path) -> list[tuple[str, int, int]]:
    """Every file of a bundle with its size and mtime: equal signatures, equal copies."""
    files = sorted(p for p in bundle.rglob("*") if p.is_file() and not p.is_symlink())
    return [(str(p.relative_to(bundle)), p.stat().st_size, p.stat().st_mtime_ns) for p in files]


def _bring(source: Path, previous: Path, target: Path) -> None:
    """`target` as a copy of `source`: the previous merge's copy (`previous`) when it is still equal, else a new
    one. Copies, not links: a bundle holds no file linked from elsewhere (`confine`). Files keep their mtimes,
    so incremental renders and the history index see the runs unchanged."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if previous.is_dir() and _signature(previous) == _signature(source):
        previous.rename(target)
    else:
        shutil.copytree(source, target, symlinks=True)


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
