"""Parent side of a run: spawn the child in a clean process, enforce the timeout, write the bundle.

The child runs under a supervisor of its own (`reaper`), so the run's whole process tree, `setsid`
grandchildren and daemons included, ends with the run: at its end, its timeout or an interrupt.

Only the child imports torch. Whatever the child does (raise, hang, abort), the parent writes a
bundle whose manifest says how it ended: a failed run is data.
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from reportgen.bundle import (
    CAPTURE_FILE,
    LOG_FILE,
    PROVENANCE_FILE,
    RECIPE_FILE,
    RECIPE_MODULES_DIR,
    Capture,
    DistributedRun,
    InductorCache,
    Manifest,
    Metrics,
    RunStatus,
    bundle_file,
    write_bundle,
)
from reportgen.errors import BundleError
from reportgen.recipe import HOST_KEPT, Recipe, Variant, find_local_modules
from reportgen.run.autotune import parse_autotune_log
from reportgen.run.bytecode import default_cache, keep_bytecode
from reportgen.run.git import recipe_commit
from reportgen.run.host import HostPlacement, default_host_dir
from reportgen.run.modules import scan_cache_dir
from reportgen.run.protocol import CHILD_RESULT, CHILD_SPEC, ChildResult, ChildSpec
from reportgen.run.ranks import child_command, gather_ranks
from reportgen.run.scrub import Scrubber
from reportgen.run.supervise import spawn, stop_runs

__all__ = ["LOG_TAIL_LINES", "RunOptions", "child_env", "run_recipe", "stop_runs", "sweep_work_dirs"]

LOG_TAIL_LINES = 40
_WORK_PREFIX = "reportgen-"
_OWNER_FILE = "owner.pid"
_SCRUBBED_FILES = (LOG_FILE, CAPTURE_FILE, PROVENANCE_FILE)
_MIN_FREE_BYTES = 64 * 1024
"""Below this, a failed run's disk counts as full."""


def _flag(flag: str, help: str, metavar: str | None = None) -> dict[str, object]:
    """Field metadata that makes a `RunOptions` field a command-line flag of `reportgen run|report|reproduce`."""
    return {"flag": flag, "help": help, "metavar": metavar}


@dataclass(frozen=True)
class RunOptions:
    """Knobs of the parent. Fields with a `flag` in their metadata are the CLI's flags (`reportgen.cli`):
    adding an option is adding a field here."""

    timeout_s: float | None = field(
        default=None, metadata=_flag("--timeout", "seconds per run (overrides the recipe's timeout_s)", "SECONDS")
    )
    python: str = field(default=sys.executable, metadata={"help": "the interpreter that runs the child"})
    inductor_cache: Path | None = field(
        default=None,
        metadata=_flag(
            "--inductor-cache",
            "keep Inductor's caches in DIR/<bundle> between runs (warm compiles, autotuning once); "
            "default: a fresh cache per run",
            "DIR",
        ),
    )
    devices: str | None = field(
        default=None, metadata={"help": "CUDA_VISIBLE_DEVICES of the run's child (the matrix scheduler's GPU)"}
    )
    cpus: tuple[int, ...] = field(
        default=(),
        metadata={"help": "the cores the run's processes keep to (empty: any); compile workers are sized to them"},
    )
    timing_lock: bool = field(
        default=False, metadata={"help": "hold the host-wide timing lock while measuring (no two runs measure at once)"}
    )
    host_dir: Path | None = field(
        default=None, metadata={"help": "where the host's runs meet: timing lock, activity (default: per user in tmp)"}
    )
    window_socket: str | None = field(
        default=None, metadata={"help": "the matrix's timed-window coordinator (others paused during each window)"}
    )


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def child_env(recipe: Recipe, cache_dir: Path, options: RunOptions | None = None) -> dict[str, str]:
    """The child's environment: ours, the recipe's, then the run's own (`recipe.RUN_OWNED`, which recipes cannot set);
    the host's safety settings (`recipe.HOST_KEPT`) stay as this process has them.

    With `options.devices` the child sees only those GPUs; with `options.cpus` Inductor's compile workers are as
    many as its cores, unless the recipe says otherwise. Whatever else times the recipe (the fidelity
    benchmark's bare loop) uses it too, so the two differ in nothing.
    """
    env = dict(os.environ)
    env.update(recipe.env)
    env.update({name: os.environ[name] for name in HOST_KEPT if name in os.environ})  # the host's safety wins
    if options is not None and options.devices is not None:
        env["CUDA_VISIBLE_DEVICES"] = options.devices
    if options is not None and options.cpus:
        env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", str(len(options.cpus)))
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache_dir)
    env.setdefault("TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE", "1")  # CPU kernels show in traces
    env["PYTHONUNBUFFERED"] = "1"
    env["MPLBACKEND"] = "Agg"
    pkg_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH", "")) if p)
    keep_bytecode(env, default_cache(env))  # a read-only install: no process compiles torch's sources again
    return env


def _read_result(path: Path) -> ChildResult | None:
    try:
        return ChildResult.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None


def _log_tail(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-LOG_TAIL_LINES:])


def _status(
    returncode: int, timed_out: bool, result: ChildResult | None, ranks: DistributedRun | None = None
) -> tuple[RunStatus, str | None]:
    if timed_out:
        stage = result.stage if result else "start"
        return RunStatus.timeout, f"run exceeded its timeout (last completed stage: {stage})"
    if result is not None and result.status == "ok" and returncode == 0:
        return RunStatus.ok, None
    if ranks is not None and (failed := ranks.failed_rank) is not None:  # the rank that failed first is the cause
        return RunStatus(failed.status), f"rank {failed.rank} of {ranks.world_size} failed: {failed.error}"
    if result is not None and result.status in ("failed", "oom"):
        return RunStatus(result.status), result.error
    if returncode < 0:
        name = signal.Signals(-returncode).name
        return RunStatus.killed, f"run process was killed by {name}"
    return RunStatus.failed, f"run process exited with code {returncode}"


def _scrub_outputs(bundle: Path, scrubber: Scrubber) -> None:
    """Redact secrets from the files the child wrote as text and from the modules it copied."""
    for name in _SCRUBBED_FILES:
        scrubber.scrub_file(bundle / name)
    scrubber.scrub_modules(bundle)
    scrubber.scrub_traces(bundle)


def _placement(name: str, options: RunOptions) -> HostPlacement:
    host_dir = options.host_dir or default_host_dir()
    return HostPlacement(
        name=name,
        cpus=list(options.cpus),
        timing_lock=options.timing_lock,
        host_dir=str(host_dir),
        window_socket=options.window_socket,
    )


def _add_autotune(bundle: Path, capture_file: str | None) -> str | None:
    """Put max-autotune's logged choices into capture.json (written for them if the child wrote none).

    Returns the capture file's name, or None when there is none."""
    try:
        ops = parse_autotune_log((bundle / LOG_FILE).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        ops = []
    if not ops:
        return capture_file
    path = bundle / (capture_file or CAPTURE_FILE)
    if capture_file is None:
        capture = Capture(notes=["the run ended before its captures; only max-autotune's log was read"])
    else:
        try:
            capture = Capture.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError):
            return capture_file  # leave an unreadable capture as it is: reading the bundle will say why
    path.write_text(capture.model_copy(update={"autotune": ops}).model_dump_json(indent=2), encoding="utf-8")
    return path.name


def sweep_work_dirs(root: Path | None = None) -> list[Path]:
    """Remove the work dirs (with their Inductor caches, GBs under max-autotune) of runs whose parent died.

    A SIGKILLed `reportgen run` cannot clean its temporary dir. Each work dir names its owner's pid; a dir
    whose owner is gone is removed. Dirs of live owners, and dirs without an owner file, are left alone.
    """
    removed = []
    for work in Path(root or tempfile.gettempdir()).glob(f"{_WORK_PREFIX}*"):
        try:
            pid = int((work / _OWNER_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not _alive(pid):
            shutil.rmtree(work, ignore_errors=True)
            removed.append(work)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _cache_dir(root: Path | None, name: str) -> Path | None:
    """`<root>/<bundle name>`, created: one kept cache per recipe and variant."""
    if root is None:
        return None
    path = root.expanduser().resolve() / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def _copy_recipe_modules(recipe: Recipe, recipe_path: Path, bundle: Path, scrubber: Scrubber) -> None:
    """Copy the modules the recipe imports from next to its file into the bundle, redacted: the reproducer
    notebook embeds them from there, so a build reads nothing outside its bundles."""
    for module in find_local_modules(recipe, recipe_path).found:
        dest = bundle / RECIPE_MODULES_DIR / module.path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(scrubber.scrub(module.source, f"{RECIPE_MODULES_DIR}/"), encoding="utf-8")


def _check_space(bundle: Path) -> None:
    """A failed run whose disk is full failed for want of space, not because of its recipe: raise ENOSPC
    (the bundle is not written, the previous one stays)."""
    stats = os.statvfs(bundle)
    if stats.f_bavail * stats.f_frsize < _MIN_FREE_BYTES:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _error_text(bundle: Path, status: RunStatus, error: str | None, scrubber: Scrubber) -> str | None:
    """The run's error, with its log's tail when it failed, scrubbed (ENOSPC raised when the disk is full)."""
    if status is not RunStatus.ok:
        _check_space(bundle)
        tail = _log_tail(bundle / LOG_FILE)
        error = f"{error}\n\n{tail}" if tail else error
    return scrubber.scrub(error, "error") if error else None


def _since_written(path: Path) -> float | None:
    """Seconds since `path` was last written (the child's progress file: its last stage's end), None if missing."""
    try:
        return max(time.time() - path.stat().st_mtime, 0.0)
    except OSError:
        return None


def _with_stages(metrics: Metrics, stages: dict[str, float | None]) -> Metrics:
    """`metrics` with the launcher's own stages after the child's: its process ending after its last stage (compile
    workers, the GPU's context, the heap), and the scrub of what it wrote."""
    kept = {name: round(seconds, 3) for name, seconds in stages.items() if seconds is not None}
    return metrics.model_copy(update={"stages_s": {**metrics.stages_s, **kept}})


def _existing(bundle: Path, name: str | None) -> str | None:
    """`name` when it is a regular file inside the bundle (`bundle_file`: no `..`, no link), else None."""
    if not name:
        return None
    try:
        bundle_file(bundle, name, max_bytes=1 << 62)  # the readers apply the bounds
    except BundleError:
        return None
    return name


def _variant_fields(variant: Variant | None, scrubber: Scrubber) -> dict[str, Any]:
    """What the manifest says of the variant (or sweep point) that ran, its values redacted: nothing for the recipe
    as written."""
    if variant is None:
        return {}
    point = {axis: scrubber.scrub(value, "recipe") for axis, value in variant.point.items()}
    return {
        "variant": variant.name,
        "variant_description": scrubber.scrub(variant.description, "recipe"),
        "point": point,
    }


def _populate(
    recipe: Recipe, recipe_path: Path, options: RunOptions, variant: Variant | None, bundle: Path
) -> Manifest:
    started, t0 = _now(), time.monotonic()
    scrubber = Scrubber.from_environ({**os.environ, **recipe.env})
    recipe_text = recipe_path.read_bytes()
    recipe_copy = scrubber.scrub_recipe_text(recipe_text.decode("utf-8", errors="surrogateescape"))
    (bundle / RECIPE_FILE).write_text(recipe_copy, encoding="utf-8", errors="surrogateescape")  # bytes kept
    _copy_recipe_modules(recipe, recipe_path, bundle, scrubber)
    sweep_work_dirs()
    with tempfile.TemporaryDirectory(prefix=f"{_WORK_PREFIX}{recipe.bundle_name(variant)}-") as work:
        (Path(work) / _OWNER_FILE).write_text(str(os.getpid()), encoding="utf-8")
        kept = _cache_dir(options.inductor_cache, recipe.bundle_name(variant))
        cache_state: InductorCache = "fresh" if kept is None else "kept-warm" if any(kept.iterdir()) else "kept-empty"
        cache_dir = kept or Path(work) / "inductor"
        placement = _placement(recipe.bundle_name(variant), options)
        spec = ChildSpec(recipe=recipe, recipe_dir=str(recipe_path.resolve().parent), placement=placement)
        (spec_path := Path(work) / CHILD_SPEC).write_text(spec.model_dump_json(), encoding="utf-8")
        cmd = child_command(options.python, recipe, spec_path, bundle, env := child_env(recipe, cache_dir, options))
        timeout_s = options.timeout_s or recipe.timeout_s
        returncode, timed_out = spawn(cmd, env, bundle / LOG_FILE, timeout_s, Path(placement.host_dir))
        exit_s = _since_written(bundle / CHILD_RESULT)
        result = _read_result(bundle / CHILD_RESULT)
        modules = result.modules if result and result.modules else []
        if not modules and kept is None:  # a kept cache holds earlier runs' modules too: no fallback
            modules = scan_cache_dir(cache_dir, bundle)
    (bundle / CHILD_RESULT).unlink(missing_ok=True)
    scrub_t0 = time.monotonic()
    ranks = gather_ranks(recipe, bundle, result, env, lambda name: _existing(bundle, name), scrubber.scrub)
    _scrub_outputs(bundle, scrubber)
    capture_file = _add_autotune(bundle, _existing(bundle, result.capture_file if result else None))
    status, error = _status(returncode, timed_out, result, ranks)
    error = _error_text(bundle, status, error, scrubber)
    stages = {"child exit": exit_s, "scrub": time.monotonic() - scrub_t0}
    return Manifest(
        name=recipe.bundle_name(variant),
        **_variant_fields(variant, scrubber),
        inductor_cache=cache_state,
        recipe=scrubber.scrub_recipe(recipe),
        recipe_sha256=hashlib.sha256(recipe_text).hexdigest(),
        recipe_path=str(recipe_path),
        git_commit=recipe_commit(recipe_path.resolve().parent),
        status=status,
        exit_code=returncode,
        error=error,
        started_at=started,
        finished_at=_now(),
        wall_time_s=round(time.monotonic() - t0, 3),
        environment=result.environment if result else None,
        metrics=_with_stages(result.metrics if result else Metrics(), stages),
        modules=modules,
        trace_file=_existing(bundle, result.trace_file if result else None),
        eager_trace_file=_existing(bundle, result.eager_trace_file if result else None),
        capture_file=capture_file,
        redactions=scrubber.report(),
        isolation=result.isolation if result else None,
        distributed=ranks,
    )


def run_recipe(
    recipe: Recipe,
    recipe_path: Path,
    results_dir: Path,
    options: RunOptions | None = None,
    variant: Variant | None = None,
) -> Path:
    """Run one recipe (or one of its variants) in its own process; write `results_dir/<bundle name>/`."""
    opts = options or RunOptions()
    results_dir.mkdir(parents=True, exist_ok=True)
    effective = recipe.for_variant(variant) if variant is not None else recipe
    name = recipe.bundle_name(variant)
    return write_bundle(results_dir, name, lambda tmp: _populate(effective, recipe_path, opts, variant, tmp))
