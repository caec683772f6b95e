"""Tests of reportgen.site.lock: builds of one site take turns; a dead holder never blocks."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from reportgen.errors import SiteError
from reportgen.site.lock import LOCK_FILE, build_lock

__all__: list[str] = []


def test_the_holder_writes_its_pid(tmp_path: Path) -> None:
    with build_lock(tmp_path / "site"):
        assert (tmp_path / "site" / LOCK_FILE).read_text() == f"{os.getpid()}\n"


def test_a_second_build_times_out_with_a_clear_error(tmp_path: Path) -> None:
    with build_lock(tmp_path), pytest.raises(SiteError) as info, build_lock(tmp_path, timeout_s=0.3, poll_s=0.05):
        pass
    assert str(info.value) == (
        f"{tmp_path / LOCK_FILE}: another build (pid {os.getpid()}) still holds {LOCK_FILE} after 0.3 s "
        "(wait for it to finish, or build into another --out directory)"
    )


def test_a_second_build_waits_for_the_first(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    order: list[str] = []
    held = threading.Event()

    def first() -> None:
        with build_lock(tmp_path):
            held.set()
            time.sleep(0.5)
            order.append("first done")

    thread = threading.Thread(target=first)
    thread.start()
    held.wait(5)
    with caplog.at_level(logging.WARNING, logger="reportgen.site.lock"), build_lock(tmp_path, poll_s=0.05):
        order.append("second in")
    thread.join()
    assert order == ["first done", "second in"]
    assert caplog.messages == [f"waiting for another build (pid {os.getpid()}) of {tmp_path} to finish"]


def test_a_killed_holder_releases_the_lock(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from pathlib import Path; from reportgen.site.lock import build_lock\n"
            f"with build_lock(Path({str(tmp_path)!r})):\n    print('held', flush=True)\n    input()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(10)
        with build_lock(tmp_path, timeout_s=2):
            assert (tmp_path / LOCK_FILE).read_text() == f"{os.getpid()}\n"
    finally:
        if holder.poll() is None:
            holder.kill()


_FORKING_HOLDER = """
import os, sys, time
from pathlib import Path
from reportgen.site.lock import build_lock
with build_lock(Path(sys.argv[1])):
    child = os.fork()
    if child == 0:  # a render worker, outliving the build
        time.sleep(60)
        os._exit(0)
    print(child, flush=True)
    time.sleep(60)
"""


def test_a_forked_child_does_not_keep_the_lock(tmp_path: Path) -> None:
    """A build killed while its render workers live on: the lock goes with the build."""
    holder = subprocess.Popen([sys.executable, "-c", _FORKING_HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    child = int(holder.stdout.readline())
    try:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(10)
        os.kill(child, 0)  # the child still runs, holding a copy of the lock's descriptor
        with build_lock(tmp_path, timeout_s=5, poll_s=0.05):
            pass
    finally:
        os.kill(child, signal.SIGKILL)
        holder.communicate()
