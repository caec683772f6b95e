"""A run's whole process tree ends with it: `setsid` grandchildren and double-forked daemons included, on a
timeout, a failure, a normal end and an interrupt; and only that run's tree (a matrix runs several at once)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from reportgen.run import supervise

__all__: list[str] = []

CHILD = """
import os, subprocess, sys, time
out, end = sys.argv[1], sys.argv[2]
grand = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(600)"
subprocess.Popen([sys.executable, "-c", grand, out + "/setsid.pid"], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if os.fork() == 0:  # a daemon: fork, setsid, fork again, the middle one exits
    os.setsid()
    if os.fork() == 0:
        open(out + "/daemon.pid", "w").write(str(os.getpid()))
        time.sleep(600)
    os._exit(0)
while not all(os.path.exists(f"{out}/{n}.pid") for n in ("setsid", "daemon")):
    time.sleep(0.01)
open(out + "/ready", "w").close()
if end == "hang":
    time.sleep(600)
elif end == "abort":
    os.abort()
sys.exit(int(end))
"""


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie no one reaped counts: it survived its run's end)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "X"


def _gone_soon(pids: list[int], within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(_running(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


def _pids(out: Path) -> list[int]:
    return [int((out / f"{name}.pid").read_text()) for name in ("setsid", "daemon")]


def _check(tmp_path: Path, end: str, timeout_s: float, expect: tuple[int, bool]) -> None:
    out = tmp_path / f"out-{end}"
    out.mkdir()
    cmd = [sys.executable, "-c", CHILD, str(out), end]
    try:
        result = supervise.spawn(cmd, dict(os.environ), out / "run.log", timeout_s, tmp_path / "host")
        pids = _pids(out)
        assert _gone_soon(pids), f"still running after the run ended: {[p for p in pids if _running(p)]}"
        assert result == expect
    finally:
        for pid in _pids(out) if (out / "ready").exists() else []:  # never leave a sleeper behind, even on main
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_setsid_grandchild_and_a_daemon_end_with_a_timed_out_run(tmp_path: Path) -> None:
    started = time.monotonic()
    _check(tmp_path, "hang", 3, (-signal.SIGTERM, True))
    assert time.monotonic() - started < 20


@pytest.mark.parametrize(("end", "expect"), [("0", (0, False)), ("3", (3, False)), ("abort", (-signal.SIGABRT, False))])
def test_a_setsid_grandchild_and_a_daemon_end_with_a_run_that_ends(
    tmp_path: Path, end: str, expect: tuple[int, bool]
) -> None:
    _check(tmp_path, end, 60, expect)


def test_an_interrupted_run_ends_whole_and_other_runs_keep_theirs(tmp_path: Path) -> None:
    """Two runs at once (a matrix): `stop_runs` ends both trees; before that, one run's end leaves the other's
    processes alone."""
    outs = {name: tmp_path / name for name in ("short", "long")}
    results: dict[str, tuple[int, bool]] = {}

    def run(name: str, end: str) -> None:
        outs[name].mkdir()
        cmd = [sys.executable, "-c", CHILD, str(outs[name]), end]
        results[name] = supervise.spawn(cmd, dict(os.environ), outs[name] / "run.log", 120, tmp_path / "host")

    long = threading.Thread(target=run, args=("long", "hang"))
    long.start()
    try:
        deadline = time.monotonic() + 30
        while not (outs["long"] / "ready").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        run("short", "0")
        assert _gone_soon(_pids(outs["short"]))
        assert all(_running(pid) for pid in _pids(outs["long"]))  # the other run's processes are left alone
        supervise.stop_runs()
        long.join(30)
        assert not long.is_alive() and results["long"] == (-signal.SIGKILL, False)
        assert _gone_soon(_pids(outs["long"]))
    finally:
        supervise.stop_runs()
        long.join(30)
        for out in outs.values():
            for pid in _pids(out) if (out / "ready").exists() else []:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


DAEMON_MODEL = """
import os, subprocess, sys, time
import torch
from torch import nn

GRAND = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(600)"


class Daemonizer(nn.Module):
    \"\"\"Leaves a `setsid` grandchild behind when built, then {end} in forward.\"\"\"

    def __init__(self) -> None:
        super().__init__()
        subprocess.Popen([sys.executable, "-c", GRAND, {pid_file!r}], start_new_session=True)
        while not os.path.exists({pid_file!r}):
            time.sleep(0.01)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        {forward}
        return x
"""


@pytest.mark.parametrize(
    ("end", "forward", "status"), [("hangs", "time.sleep(3600)", "timeout"), ("returns", "pass", "ok")]
)
def test_a_recipe_that_leaves_a_setsid_grandchild_leaves_no_process(
    tmp_path: Path, end: str, forward: str, status: str
) -> None:
    """Through `reportgen run` itself: the recipe's code starts a `setsid` grandchild (sleeping 600 s); once the
    run has ended (timed out, or succeeded) the grandchild is gone within seconds."""
    from reportgen.bundle import read_manifest
    from reportgen.recipe import load_recipe
    from reportgen.run import RunOptions, run_recipe

    pid_file = tmp_path / "grandchild.pid"
    (tmp_path / "daemon_models.py").write_text(DAEMON_MODEL.format(end=end, forward=forward, pid_file=str(pid_file)))
    recipe = tmp_path / "daemon.yaml"
    recipe.write_text(
        "name: daemon\nmodel: {ref: 'daemon_models:Daemonizer'}\ninputs: {tensors: [{shape: [4]}]}\n"
        "device: cpu\ntimeout_s: 60\ncompile: {backend: eager}\n"
        "profile: {warmup: 0, steps: 1, block_steps: 1, profiled_steps: 1, provenance: false}\n"
    )
    try:
        bundle = run_recipe(
            load_recipe(recipe), recipe, tmp_path / "results", RunOptions(timeout_s=15 if end == "hangs" else None)
        )
        assert read_manifest(bundle).status.value == status, read_manifest(bundle).error
        pid = int(pid_file.read_text())
        assert _gone_soon([pid]), f"the run's grandchild {pid} outlived the run"
    finally:
        if pid_file.exists():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
