"""The coordinator of timed windows (no torch): one measurement at a time on the host, the others paused.

A process that is about to time asks for a window (`reportgen.run.window`); the coordinator grants one window
at a time, and before it says "go" it stops every other process it knows of with SIGSTOP (the whole tree
under each one: compile workers, the graph-timing process, `setsid` grandchildren), waits `settle_s` for the
GPU work they had queued to drain, and resumes them with SIGCONT when the window closes or its holder dies.
The holder's own ancestors and descendants are never stopped. A `gpu_only` window (a GPU-timed benchmark of
Inductor's) still takes its turn, but stops only the runs whose GPU may be the holder's (`CUDA_VISIBLE_DEVICES`
of their hello; unknown: stopped). A watchdog process resumes whatever is stopped if the coordinator itself dies,
even by SIGKILL, so no run is left paused.

The order in which waiting windows are granted is a `Policy`: first come first served for a matrix
(`Fifo`), strict turns between two processes for a benchmark that compares them (`Turns`), several such
comparisons at once (`Grouped`); they live in `window_policy`.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from reportgen.run.pause import (
    CpuSample,
    Pauser,
    WindowCpu,
    ancestors,
    cpu_sample,
    descendants,
    process_parents,
)
from reportgen.run.window_policy import Fifo, Grouped, Policy, Request, Turns

__all__ = ["Coordinator", "Fifo", "Grouped", "Policy", "Request", "Turns"]


# --- the coordinator -----------------------------------------------------------------------------------------------


def _may_share(a: str | None, b: str | None) -> bool:
    """Whether two `CUDA_VISIBLE_DEVICES` values may name a common GPU (unknown, unset `*` or empty: yes)."""
    if not a or not b or "*" in (a, b):
        return True
    return not {d.strip() for d in a.split(",")}.isdisjoint(d.strip() for d in b.split(","))


@dataclass
class _Peer:
    """One connected process."""

    pid: int
    role: str
    gpu: str | None = None
    """Its `CUDA_VISIBLE_DEVICES` (None: not said)."""


class Coordinator:
    """Serves timed windows on a Unix socket (`path`, for `REPORTGEN_WINDOW_SOCKET`) from a thread of its own.

    :param policy: the order of grants (default `Fifo`)
    :param pause: stop the other processes during a window (False: windows only take turns)
    :param settle_s: after stopping them, wait this long before "go": GPU work they had queued drains
    :param log_path: append every connection, request, grant and release here (a line each)
    :param cpu: each window's thread runs on this CPU alone (`window.pinned`): windows that a benchmark pairs
        across processes see the same vCPU; None: where the scheduler puts them
    """

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        pause: bool = True,
        settle_s: float = 0.05,
        log_path: Path | None = None,
        cpu: int | None = None,
    ) -> None:
        self.policy = policy or Fifo()
        self.cpu = cpu
        self.settle_s = settle_s
        self._log_file = log_path.open("a", encoding="utf-8") if log_path is not None else None
        self._t0 = time.monotonic()
        self.dir = Path(tempfile.mkdtemp(prefix="reportgen-windows-"))
        self.path = str(self.dir / "socket")
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(self.path)
        self._server.listen(64)
        self._cond = threading.Condition()
        self._peers: dict[int, _Peer] = {}
        self._roots: dict[int, str] = {}  # pids registered by the owner (processes it started) → name
        self._waiting: list[Request] = []
        self._holder: Request | None = None
        self._paused_names: set[str] = set()
        """Names of the runs stopped for the current window (their pids: `self._pauser.stopped`)."""
        self._pauser = Pauser() if pause else None
        self._next = 0
        self.granted: list[tuple[str, str, float, float]] = []
        """(role, window, opened, closed) of every window, monotonic seconds."""
        self.foreign: list[WindowCpu] = []
        """Per closed window of `granted`, in order: what it let others have, from "go" (after the settle) to its
        close: whether it had the host to itself."""
        self._own: tuple[set[int], ...] = (set(), set(), set(), set(), set())
        self._at_go, self._go_at = CpuSample(0.0, 0.0, 0.0), 0.0
        """The CPU counts and the moment of the holder's "go" (its leave or death is served by the same thread, so
        a window never closes before them)."""
        self._closed = False
        self._acceptor = threading.Thread(target=self._accept, name="reportgen-windows", daemon=True)
        self._acceptor.start()

    def _log(self, message: str) -> None:
        """One line of the log (the condition held: `close` drops the file under it)."""
        if self._log_file is not None:
            self._log_file.write(f"{time.monotonic() - self._t0:9.3f} {message}\n")
            self._log_file.flush()

    # -- the owner's side

    def register(self, pid: int, name: str) -> None:
        """Stop `pid` (and its tree) during the others' windows even before it connects."""
        with self._cond:
            self._roots[pid] = name

    def retire(self, role: str) -> None:
        """No more windows will come from `role`: the policy stops waiting for it."""
        with self._cond:
            self._log(f"retire {role}")
            self.policy.retire(role)
            self._cond.notify_all()

    def close(self) -> None:
        """Stop serving; resume anything stopped."""
        with self._cond:
            self._closed = True
            self._resume()
            self._cond.notify_all()
        # Wake the accepting thread before the socket's descriptor is freed: a thread still blocked in accept()
        # on a reused descriptor number would take the next coordinator's connections and answer them as closed.
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._acceptor.join(timeout=5)
        with contextlib.suppress(OSError):
            self._server.close()
        if self._pauser is not None:
            self._pauser.close()
        with self._cond:  # a connection's thread may still say "bye" (it logs under the condition)
            log, self._log_file = self._log_file, None
        if log is not None:
            log.close()
        with contextlib.suppress(OSError):
            Path(self.path).unlink()
            self.dir.rmdir()

    def __enter__(self) -> Coordinator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- serving

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            if self._closed:
                conn.close()
                return
            with self._cond:
                self._next += 1
                number = self._next
            threading.Thread(target=self._serve, args=(conn, number), daemon=True).start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        reader = conn.makefile("r", encoding="utf-8")
        try:
            for line in reader:
                message = json.loads(line)
                if not isinstance(message, dict):
                    break
                if "hello" in message:
                    hello = message["hello"]
                    with self._cond:
                        gpu = hello.get("gpu")
                        self._peers[number] = _Peer(
                            int(hello.get("pid", 0)), str(hello.get("role", "")), gpu if isinstance(gpu, str) else None
                        )
                        self._log(f"hello #{number} pid {self._peers[number].pid} role {self._peers[number].role}")
                elif "enter" in message:
                    go = self._enter(number, str(message["enter"]), gpu_only=message.get("gpu_only") is True)
                    conn.sendall((json.dumps({"go": go}) + "\n").encode())
                elif "leave" in message:
                    conn.sendall((json.dumps({"left": self._leave(number)}) + "\n").encode())
        except (OSError, ValueError):
            pass
        finally:
            with self._cond:
                self._waiting = [r for r in self._waiting if r.connection != number]
                if self._holder is not None and self._holder.connection == number:
                    self._end_window()
                peer = self._peers.pop(number, None)
                self._log(f"bye #{number}")
                if peer is not None and not any(p.role == peer.role for p in self._peers.values()):
                    self._log(f"retire {peer.role} (its last process is gone)")
                    self.policy.retire(peer.role)  # nobody waits for it any more
                self._cond.notify_all()
            with contextlib.suppress(OSError):
                conn.close()

    def _enter(self, number: int, what: str, *, gpu_only: bool = False) -> dict[str, object]:
        with self._cond:
            peer = self._peers.get(number, _Peer(0, ""))
            request = Request(number, peer.pid, peer.role, what, gpu_only=gpu_only)
            self._waiting.append(request)
            self._log(f"ask #{number} {peer.role}: {what}")
            self._cond.notify_all()
            while not self._closed:
                if self._holder is None and self.policy.choose(list(self._waiting)) is request:
                    break
                self._cond.wait(timeout=1.0)
            self._waiting.remove(request)
            if self._closed:
                return {"closed": True}
            self.policy.granted(request)
            self._holder = request
            table = process_parents()
            below = descendants([request.pid], table)
            keep = ancestors(request.pid, table) | below | ancestors(os.getpid(), table)
            names, gpus = self._stop_others(request, peer.gpu, table, keep)
            runs = descendants({p.pid for p in self._peers.values() if p.pid} | set(self._roots), table) - keep
            line = keep - {request.pid} - ancestors(os.getpid(), table)  # its launcher, its workers and helpers
            self._own = (keep, below, runs, {request.pid}, line)
            shared = any(_may_share(peer.gpu, gpu) for gpu in gpus)  # the holder drains its GPU (the pause rule)
            opened = time.monotonic()
            self.granted.append((request.role, what, opened, opened))
            self._log(f"go #{number} {peer.role}: {what} (paused {sorted(names)}{', shared gpu' if shared else ''})")
        paused = sorted(names)
        settle_s = self.policy.settle_s(request, paused, self.settle_s) if paused else 0.0
        if settle_s > 0:
            time.sleep(settle_s)
        self._at_go, self._go_at = cpu_sample(*self._own), time.monotonic()
        go: dict[str, object] = {"paused": paused, "waited_s": round(opened - request.asked, 6), "shared_gpu": shared}
        return go if self.cpu is None else {**go, "cpu": self.cpu}

    def _leave(self, number: int) -> dict[str, object]:
        with self._cond:
            left: dict[str, object] = {"paused": {}}
            if self._holder is not None and self._holder.connection == number:
                paused = self._end_window()
                cpu = self.foreign[-1]
                left = {"paused": paused, "others_cpu_s": round(cpu.others_s, 3), "runs_cpu_s": round(cpu.runs_s, 3)}
                left["stolen_s"] = round(cpu.stolen_s, 3)
            self._cond.notify_all()
        return left

    def _end_window(self) -> dict[str, float]:
        """Close the holder's window (the condition held): resume the others; seconds each name was paused."""
        assert self._holder is not None
        role, what, opened, _ = self.granted[-1]
        closed = time.monotonic()
        keep, below, runs, holder, line = self._own
        born = descendants([self._holder.pid], process_parents()) - below  # started in the window: 0 s at "go"
        now = cpu_sample(keep | born, below | born, runs, holder, line | born)
        cpu = now.since(self._at_go, round(closed - max(self._go_at, opened), 6))
        self.granted[-1] = (role, what, opened, closed)
        self.foreign.append(cpu)
        names = self._paused_names
        self._resume()
        self._log(
            f"left #{self._holder.connection} {role}: {what} ({closed - opened:.3f} s; others' cpu {cpu.others_s:.2f} "
            f"s, of runs {cpu.runs_s:.2f} s, stolen {cpu.stolen_s:.2f} s; its own {cpu.holder_s:.2f} s, its line's "
            f"{cpu.line_s:.2f} s)"
        )
        self._holder = None
        return {name: round(closed - opened, 6) for name in sorted(names)}

    def _stop_others(
        self, holder: Request, holder_gpu: str | None, table: dict[int, int], keep: set[int]
    ) -> tuple[set[str], list[str | None]]:
        """Stop every run but the holder's (a `gpu_only` holder: those that may share its GPU), never a process of
        `keep` (the holder's line and the coordinator's); the names stopped, and the `CUDA_VISIBLE_DEVICES` of each
        (None: a root that never said)."""
        if self._pauser is None:
            return set(), []
        roots = {p.pid: p.role for p in self._peers.values() if p.pid} | self._roots
        gpus = {p.pid: p.gpu for p in self._peers.values() if p.pid}
        stop: set[int] = set()
        names: set[str] = set()
        gpus_stopped: list[str | None] = []  # None: a root that never said which
        for root, name in roots.items():
            gpu = gpus.get(root)
            if root in keep or (holder.gpu_only and not _may_share(holder_gpu, gpu)):
                continue
            tree = descendants([root], table) - keep
            if tree:
                stop |= tree
                names.add(name or str(root))
                gpus_stopped.append(gpu)
        self._paused_names = names if self._pauser.stop(stop) else set()
        return self._paused_names, gpus_stopped if self._paused_names else []

    def _resume(self) -> None:
        if self._pauser is not None and self._pauser.stopped:
            self._pauser.resume()
        self._paused_names = set()
