"""The coordinator of timed windows (no torch): one measurement at a time on the host, the others paused.

A process that is about to time asks for a window (`reportgen.run.window`); the coordinator grants one window
at a time, and before it says "go" it stops every other process it knows of with SIGSTOP (the whole tree
under each one: compile workers, the graph-timing process, `setsid` grandchildren), waits `settle_s` for the
GPU work they had queued to drain, and resumes them with SIGCONT when the window closes or its holder dies.
The holder's own ancestors and descendants are never stopped. A watchdog process resumes whatever is
stopped if the coordinator itself dies, even by SIGKILL, so no run is left paused.

The order in which waiting windows are granted is a `Policy`: first come first served for a matrix
(`Fifo`), strict turns between two processes for a benchmark that compares them (`Turns`).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from reportgen.run.pause import Pauser, ancestors, descendants, lineage, process_parents

__all__ = ["Coordinator", "Fifo", "Policy", "Request", "Turns"]


# --- policies ------------------------------------------------------------------------------------------------------


@dataclass
class Request:
    """A window asked for and not yet granted."""

    connection: int
    pid: int
    role: str
    what: str
    asked: float = field(default_factory=time.monotonic)


class Policy:
    """Which waiting request gets the next window (None: none yet). `Fifo` is the default.

    `choose` is asked by every waiting thread and must not change the policy's state; `granted` does.
    """

    def choose(self, waiting: list[Request]) -> Request | None:
        return waiting[0] if waiting else None

    def granted(self, request: Request) -> None:
        """`request` got its window."""

    def retire(self, role: str) -> None:
        """No more windows will come from `role` (its process ended)."""


class Fifo(Policy):
    """First come, first served: a matrix's runs measure one at a time, in the order they asked."""


Window = tuple[str, str]
"""(role, window name): who asks for which window."""


class Turns(Policy):
    """Processes that take turns, for a benchmark that compares them under the same host.

    Windows named in `alternate` (e.g. `steps`) go strictly in turn between the two `roles` (bare,
    reportgen, bare, …), starting once both are waiting. Each pair in `pairs` (``(("reportgen", "graph 0
    profile"), ("seed", "seed 0"))``) is granted back to back once both are waiting, its first member first
    (`swap()` makes the second go first). A retired role's partner goes on alone; every other window is first
    come, first served. A window whose partner has not come within `partner_wait_s` goes alone.
    """

    def __init__(
        self,
        roles: tuple[str, str],
        alternate: Iterable[str] = ("steps",),
        pairs: Iterable[tuple[Window, Window]] = (),
        partner_wait_s: float = 300.0,
    ) -> None:
        self.roles = roles
        self.partner_wait_s = partner_wait_s
        self.alternate = set(alternate)
        self.next_role = roles[0]
        self.pairs: list[tuple[Window, Window]] = list(pairs)
        self.retired: set[str] = set()
        self.owed: Window | None = None  # the partner of the pair member just granted: it goes next

    def swap(self) -> None:
        """Pairs' second members go first from now on (alternate rounds: a linear drift cancels)."""
        self.pairs = [(b, a) for a, b in self.pairs]

    def retire(self, role: str) -> None:
        self.retired.add(role)

    def _pair(self, request: Request) -> tuple[bool, Window] | None:
        """(whether `request` is its pair's first member, its partner), or None when it is in no pair."""
        key = (request.role, request.what)
        for a, b in self.pairs:
            if key == a:
                return True, b
            if key == b:
                return False, a
        return None

    def choose(self, waiting: list[Request]) -> Request | None:
        def find(window: Window) -> Request | None:
            return next((r for r in waiting if (r.role, r.what) == window), None)

        if self.owed is not None:  # (no state changes here: every waiting thread asks, only `granted` decides)
            owed = find(self.owed)
            if owed is not None:
                return owed
            if self.owed[0] not in self.retired:
                return None  # the partner is still to come: nothing else may slip between the two
        now = time.monotonic()
        for request in waiting:
            if now - request.asked > self.partner_wait_s:
                return request  # its partner is late (stuck or gone unseen): better alone than never
            if request.what in self.alternate and request.role in self.roles:
                partner = self.roles[1] if request.role == self.roles[0] else self.roles[0]
                if partner in self.retired:
                    return request
                both = any(r.what == request.what and r.role == partner for r in waiting)
                if both and request.role == self.next_role:
                    return request
                continue
            pair = self._pair(request)
            if pair is None:
                return request
            first, partner_window = pair
            if partner_window[0] in self.retired:
                return request
            if first and find(partner_window) is not None:
                return request
        return None

    def granted(self, request: Request) -> None:
        self.owed = None
        if request.what in self.alternate and request.role in self.roles:
            self.next_role = self.roles[1] if request.role == self.roles[0] else self.roles[0]
        elif (pair := self._pair(request)) is not None and pair[0]:
            self.owed = pair[1]


# --- the coordinator -----------------------------------------------------------------------------------------------


@dataclass
class _Peer:
    """One connected process."""

    pid: int
    role: str


class Coordinator:
    """Serves timed windows on a Unix socket (`path`, for `REPORTGEN_WINDOW_SOCKET`) from a thread of its own.

    :param policy: the order of grants (default `Fifo`)
    :param pause: stop the other processes during a window (False: windows only take turns)
    :param settle_s: after stopping them, wait this long before "go": GPU work they had queued drains
    :param log_path: append every connection, request, grant and release here (a line each)
    """

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        pause: bool = True,
        settle_s: float = 0.05,
        log_path: Path | None = None,
    ) -> None:
        self.policy = policy or Fifo()
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
        self._closed = False
        self._acceptor = threading.Thread(target=self._accept, name="reportgen-windows", daemon=True)
        self._acceptor.start()

    def _log(self, message: str) -> None:
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
        if self._log_file is not None:
            self._log_file.close()
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
                        self._peers[number] = _Peer(int(hello.get("pid", 0)), str(hello.get("role", "")))
                        self._log(f"hello #{number} pid {self._peers[number].pid} role {self._peers[number].role}")
                elif "enter" in message:
                    conn.sendall((json.dumps({"go": self._enter(number, str(message["enter"]))}) + "\n").encode())
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

    def _enter(self, number: int, what: str) -> dict[str, object]:
        with self._cond:
            peer = self._peers.get(number, _Peer(0, ""))
            request = Request(number, peer.pid, peer.role, what)
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
            names = self._stop_others(request)
            opened = time.monotonic()
            self.granted.append((request.role, what, opened, opened))
            self._log(f"go #{number} {peer.role}: {what} (paused {sorted(names)})")
        if names and self.settle_s > 0:
            time.sleep(self.settle_s)
        return {"paused": sorted(names), "waited_s": round(opened - request.asked, 6)}

    def _leave(self, number: int) -> dict[str, object]:
        with self._cond:
            paused: dict[str, float] = {}
            if self._holder is not None and self._holder.connection == number:
                paused = self._end_window()
            self._cond.notify_all()
        return {"paused": paused}

    def _end_window(self) -> dict[str, float]:
        """Close the holder's window (the condition held): resume the others; seconds each name was paused."""
        assert self._holder is not None
        role, what, opened, _ = self.granted[-1]
        closed = time.monotonic()
        self.granted[-1] = (role, what, opened, closed)
        names = self._paused_names
        self._resume()
        self._log(f"left #{self._holder.connection} {role}: {what} ({closed - opened:.3f} s)")
        self._holder = None
        return {name: round(closed - opened, 6) for name in sorted(names)}

    def _stop_others(self, holder: Request) -> set[str]:
        if self._pauser is None:
            return set()
        table = process_parents()
        keep = lineage(holder.pid, table) | ancestors(os.getpid(), table)
        roots = {p.pid: p.role for p in self._peers.values() if p.pid} | self._roots
        stop: set[int] = set()
        names: set[str] = set()
        for root, name in roots.items():
            if root in keep:
                continue
            tree = descendants([root], table) - keep
            if tree:
                stop |= tree
                names.add(name or str(root))
        self._paused_names = names if self._pauser.stop(stop) else set()
        return self._paused_names

    def _resume(self) -> None:
        if self._pauser is not None and self._pauser.stopped:
            self._pauser.resume()
        self._paused_names = set()
