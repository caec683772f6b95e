"""Timed windows with real processes: turns, pausing the others, and nobody left paused whatever dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from reportgen.run import window
from reportgen.run.pause import ancestors, descendants, lineage
from reportgen.run.window_host import Coordinator, Fifo, Grouped, Request, Turns

ROOT = Path(__file__).resolve().parents[2]

CLIENT = textwrap.dedent(
    """
    import json, sys, time
    from reportgen.run import window
    window.connect()
    for what in sys.argv[2:]:
        with window.timed_window(what):
            time.sleep(float(sys.argv[1]))
    print(json.dumps({"windows": window.log().windows, "paused": window.log().paused, "notes": window.log().notes}))
    """
)


def _state(pid: int) -> str:
    """The process's state letter from /proc (T: stopped)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rfind(")") + 2]


def _client(coordinator: Coordinator, role: str, hold_s: float, *windows: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.update({window.SOCKET_VARIABLE: coordinator.path, window.ROLE_VARIABLE: role})
    command = [sys.executable, "-c", CLIENT, str(hold_s), *windows]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)


def _spinner() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def _wait_for(condition: object, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_without_a_coordinator_a_window_costs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(window.SOCKET_VARIABLE, raising=False)
    with window.timed_window("steps"):
        pass
    assert window.connect() is False


def test_an_unreachable_coordinator_is_noted_and_the_measurement_goes_on(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{window.SOCKET_VARIABLE: str(tmp_path / "nothing-here")})
    out = subprocess.run([sys.executable, "-c", CLIENT, "0", "steps"], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert '"windows": 0' in out.stdout and "not reached" in out.stdout  # ran, uncoordinated


def test_two_processes_take_strict_turns_and_the_others_are_stopped_meanwhile() -> None:
    spinner = _spinner()
    try:
        with Coordinator(Turns(("bare", "reportgen")), settle_s=0.0) as coordinator:
            coordinator.register(spinner.pid, "spinner")
            rg = _client(coordinator, "reportgen", 0.2, *["steps"] * 4)
            bare = _client(coordinator, "bare", 0.2, *["steps"] * 4)
            seen_stopped = _wait_for(lambda: _state(spinner.pid) == "T")
            outs = [p.communicate(timeout=60)[0] for p in (rg, bare)]
            order = [(role, what) for role, what, _, _ in coordinator.granted]
        assert seen_stopped, "the registered process was never stopped during a window"
        assert order == [("bare", "steps"), ("reportgen", "steps")] * 4
        assert all('"windows": 4' in out for out in outs), outs
        assert '"spinner"' in outs[0] and '"bare"' in outs[0]  # reportgen's windows paused both others
        assert _wait_for(lambda: _state(spinner.pid) != "T"), "left stopped after the windows"
    finally:
        spinner.kill()


def test_a_holder_that_dies_in_its_window_resumes_the_others() -> None:
    spinner = _spinner()
    try:
        with Coordinator(settle_s=0.0) as coordinator:
            coordinator.register(spinner.pid, "spinner")
            holder = _client(coordinator, "reportgen", 60.0, "steps")
            assert _wait_for(lambda: _state(spinner.pid) == "T")
            holder.kill()
            holder.wait()
            assert _wait_for(lambda: _state(spinner.pid) != "T"), "a dead holder left the others stopped"
    finally:
        spinner.kill()


DYING_COORDINATOR = textwrap.dedent(
    """
    import sys, time
    from reportgen.run.window_host import Coordinator
    coordinator = Coordinator(settle_s=0.0)
    coordinator.register(int(sys.argv[1]), "spinner")
    print(coordinator.path, flush=True)
    time.sleep(600)
    """
)


def test_a_coordinator_killed_while_others_are_stopped_leaves_none_stopped() -> None:
    spinner = _spinner()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    host = subprocess.Popen(
        [sys.executable, "-c", DYING_COORDINATOR, str(spinner.pid)], env=env, stdout=subprocess.PIPE, text=True
    )
    holder = None
    try:
        assert host.stdout is not None
        path = host.stdout.readline().strip()
        holder_env = dict(env, **{window.SOCKET_VARIABLE: path})
        holder = subprocess.Popen([sys.executable, "-c", CLIENT, "60", "steps"], env=holder_env)
        assert _wait_for(lambda: _state(spinner.pid) == "T")
        host.send_signal(signal.SIGKILL)  # no handler runs: only the watchdog can resume the spinner
        host.wait()
        assert _wait_for(lambda: _state(spinner.pid) != "T"), "the coordinator's death left a run stopped"
    finally:
        for proc in (spinner, host, holder):
            if proc is not None:
                proc.kill()


def test_the_holders_own_line_is_never_stopped() -> None:
    parents = {1: 0, 10: 1, 11: 10, 12: 11, 13: 12, 20: 1, 21: 20}
    assert descendants([11], parents) == {11, 12, 13}
    assert ancestors(12, parents) == {12, 11, 10, 1}
    assert lineage(12, parents) == {1, 10, 11, 12, 13}
    assert descendants([99], parents) == set()  # gone meanwhile


def _request(role: str, what: str, number: int) -> Request:
    return Request(connection=number, pid=number, role=role, what=what)


def test_turns_grant_pairs_back_to_back_and_swap_their_order() -> None:
    pairs = [(("seed", "seed 0"), ("reportgen", "graph 0 profile"))]
    policy = Turns(("bare", "reportgen"), pairs=pairs)
    rg, seed, other = (
        _request("reportgen", "graph 0 profile", 1),
        _request("seed", "seed 0", 2),
        _request("reportgen", "kernel", 3),
    )
    assert policy.choose([rg]) is None  # its partner has not asked yet
    assert policy.choose([rg, seed]) is seed  # both waiting: the pair's first member
    policy.granted(seed)
    later_seed = _request("seed", "seed 1", 4)
    for _ in range(3):  # every waiting thread asks; asking changes nothing (a thread that was not chosen
        assert policy.choose([later_seed, other, rg]) is rg  # must not consume the partner's turn)
    policy.granted(rg)
    assert policy.choose([other]) is other
    assert policy.choose([seed, rg]) is seed  # a pair goes back to back once: later windows of its names are FIFO
    swapped = Turns(("bare", "reportgen"), pairs=pairs)
    swapped.swap()
    assert swapped.choose([seed, rg]) is rg


def test_a_swap_before_the_first_turn_starts_the_alternate_windows_with_the_second_role() -> None:
    """Odd comparisons time the bare loop's block first, even ones reportgen's (`timing_fidelity`); a swap once the
    turns have begun leaves them strict."""
    bare, rg = _request("bare", "steps", 1), _request("reportgen", "steps", 2)
    policy = Turns(("bare", "reportgen"))
    policy.swap()
    order = []
    for _ in range(4):
        chosen = policy.choose([bare, rg])
        assert chosen is not None
        policy.granted(chosen)
        order.append(chosen.role)
        if len(order) == 1:
            policy.swap()  # mid-turn: changes nothing
    assert order == ["reportgen", "bare", "reportgen", "bare"]
    assert Turns(("bare", "reportgen")).choose([bare, rg]) is bare


def test_pairs_of_each_timing_take_strict_turns_and_later_rounds_go_as_they_come() -> None:
    """A `-p`'s k-th timing and reportgen's first round's k-th, one pair each (`timing_fidelity`'s policy)."""
    pairs = [(("seed", f"seed 0 timing {k}"), ("reportgen", f"graph 0 timing {k}")) for k in range(3)]
    policy = Turns(("bare", "reportgen"), pairs=pairs)
    other = _request("matrix", "kernel", 0)
    for k in range(3):
        seed, rg = _request("seed", f"seed 0 timing {k}", 1), _request("reportgen", f"graph 0 timing {k}", 2)
        assert policy.choose([rg]) is None  # the -p's goes first: reportgen's waits for it
        assert policy.choose([rg, seed]) is seed
        policy.granted(seed)
        assert policy.choose([other]) is None  # nothing slips between the two of a pair
        assert policy.choose([other, rg]) is rg
        policy.granted(rg)
    again = _request("reportgen", "graph 0 timing 0", 3)  # round 2: each pair is used once
    assert policy.choose([again]) is again


def test_a_window_in_several_pairs_takes_them_in_order_whoever_asks_first() -> None:
    """Reportgen's rounds each time a graph's k-th timing under the same name; each round's pairs with a `-p` of its
    own (roles `seed`, `seed#1`): the second `-p` waits for the second round's, even when it asks first."""
    rg_k = ("reportgen", "graph 0 timing 0")
    pairs = [(("seed", "seed 0 timing 0"), rg_k), (("seed#1", "seed 0 timing 0"), rg_k)]
    policy = Turns(("bare", "reportgen"), pairs=pairs)
    second, first = _request("seed#1", "seed 0 timing 0", 1), _request("seed", "seed 0 timing 0", 2)
    round0 = _request(*rg_k, 3)
    assert policy.choose([second, round0]) is None  # round 0 pairs with the first -p, which has not asked yet
    assert policy.choose([second, round0, first]) is first
    policy.granted(first)
    assert policy.choose([second, round0]) is round0  # the pair goes back to back
    policy.granted(round0)
    round1 = _request(*rg_k, 4)
    assert policy.choose([round1, second]) is second  # round 1's timing now pairs with the second -p
    policy.granted(second)
    assert policy.choose([round1]) is round1
    policy.granted(round1)
    assert policy.pairs == [] and not policy.holding()
    round2 = _request(*rg_k, 5)
    assert policy.choose([round2]) is round2  # no pair left for a third round: first come, first served


def test_a_retired_role_s_pairs_are_skipped_and_the_next_pair_of_the_window_serves() -> None:
    rg_k = ("reportgen", "graph 0 timing 0")
    pairs = [(("seed", "seed 0 timing 0"), rg_k), (("seed#1", "seed 0 timing 0"), rg_k)]
    policy = Turns(("bare", "reportgen"), pairs=pairs)
    second, round0 = _request("seed#1", "seed 0 timing 0", 1), _request(*rg_k, 2)
    assert policy.choose([second, round0]) is None
    policy.retire("seed")  # the first -p died before its timing
    assert policy.choose([round0, second]) is second
    policy.granted(second)
    assert policy.choose([round0]) is round0
    policy.granted(round0)
    assert not policy.holding() and policy.pairs == [(("seed", "seed 0 timing 0"), rg_k)]


def test_a_window_whose_partner_is_late_goes_alone() -> None:
    policy = Turns(("bare", "reportgen"), pairs=[(("seed", "seed 0"), ("reportgen", "graph 0 profile"))])
    policy.partner_wait_s = 0.0
    rg = _request("reportgen", "graph 0 profile", 1)
    rg.asked -= 1.0
    assert policy.choose([rg]) is rg


def test_a_pair_member_gone_alone_holds_nothing_and_its_pair_is_dropped() -> None:
    """Seen on an H200: a `-p`'s graph 1 window waited past `partner_wait_s` while reportgen compiled, went
    alone, and the group then held the host for reportgen's graph 1 window, which comes after its graph 0
    window: nothing was granted again."""
    pairs = [(("seed", "seed 1 timing"), ("reportgen", "graph 1 timing"))]
    policy = Grouped({"1": Turns(("bare", "reportgen"), pairs=pairs, partner_wait_s=0.5)})
    seed = _request(Grouped.role("seed", "1"), "seed 1 timing", 1)
    seed.asked -= 1.0
    assert policy.choose([seed]) is seed
    policy.granted(seed)
    graph0 = _request(Grouped.role("reportgen", "1"), "graph 0 timing", 2)
    assert policy.choose([graph0]) is graph0  # the group does not wait for graph 1: graph 0 comes first
    policy.granted(graph0)
    graph1, other = _request(Grouped.role("reportgen", "1"), "graph 1 timing", 3), _request("matrix", "x", 4)
    graph1.asked = other.asked - 1
    assert policy.choose([other, graph1]) is graph1  # the pair is gone: first come, first served
    policy.granted(graph1)
    assert policy.choose([other]) is other
    assert not policy.holding()


def test_turns_start_when_both_wait_and_a_retired_partner_frees_the_other() -> None:
    policy = Turns(("bare", "reportgen"))
    rg, bare = _request("reportgen", "steps", 1), _request("bare", "steps", 2)
    assert policy.choose([rg]) is None
    assert policy.choose([rg, bare]) is bare
    policy.granted(bare)
    assert policy.choose([bare, rg]) is rg
    policy.granted(rg)
    policy.retire("reportgen")
    assert policy.choose([bare]) is bare


def test_groups_take_their_own_turns_and_a_half_granted_pair_holds_the_host() -> None:
    def turns() -> Turns:
        return Turns(("bare", "reportgen"), pairs=[(("seed", "seed 0"), ("reportgen", "graph 0 profile"))])

    policy = Grouped({"1": turns(), "2": turns()})
    role = Grouped.role
    rg1, bare2 = _request(role("reportgen", "1"), "steps", 1), _request(role("bare", "2"), "steps", 2)
    bare1, rg2 = _request(role("bare", "1"), "steps", 3), _request(role("reportgen", "2"), "steps", 4)
    assert policy.choose([rg1, bare2]) is None  # neither group has both members waiting
    assert policy.choose([rg1, bare2, bare1]) is bare1  # group 1: its bare loop first
    policy.granted(bare1)
    assert policy.choose([rg1, bare2]) is None  # group 1 waits for its bare loop's next ask; group 2 for its run
    assert policy.choose([rg2, rg1, bare2]) is bare2  # group 2 has both waiting: its bare loop
    bare1.asked = rg1.asked + 1
    assert policy.choose([rg2, bare1, rg1, bare2]) is rg1  # both groups could go: the earlier ask, whatever the order
    policy.granted(rg1)
    seed2 = _request(role("seed", "2"), "seed 0", 5)
    profile2 = _request(role("reportgen", "2"), "graph 0 profile", 6)
    assert policy.choose([seed2, profile2]) is seed2
    policy.granted(seed2)
    bare1.asked -= 10
    assert policy.choose([bare1, rg1, profile2]) is profile2  # group 2 owes its partner: nothing slips in between
    assert policy.choose([bare1, rg1]) is None
    policy.granted(profile2)
    assert policy.choose([bare1, rg1]) is bare1
    later = bare1
    plain = _request("matrix", "kernel", 8)
    assert policy.choose([later, plain]) is plain  # a role of no group: first come, first served
    policy.retire(role("reportgen", "1"))
    assert policy.choose([later]) is later  # its partner retired: the bare loop goes on alone


@pytest.mark.slow
def test_a_real_run_times_only_inside_its_windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CPU `reportgen run` under a coordinator: every timed part asks for a window, a registered process is
    stopped during them, and the run's numbers are those of a plain run's shape."""
    from reportgen.bundle import RunStatus, read_capture, read_manifest
    from reportgen.recipe import load_recipe
    from reportgen.run import RunOptions, run_recipe

    recipe_path = ROOT / "tests" / "data" / "recipes" / "addmul.yaml"
    recipe = load_recipe(recipe_path)
    spinner = _spinner()
    try:
        with Coordinator(settle_s=0.0) as coordinator:
            coordinator.register(spinner.pid, "spinner")
            monkeypatch.setenv(window.SOCKET_VARIABLE, coordinator.path)
            monkeypatch.setenv(window.ROLE_VARIABLE, "addmul")
            bundle = run_recipe(recipe, recipe_path, tmp_path, RunOptions())
            granted = [(role, what) for role, what, _, _ in coordinator.granted]
            spans = list(coordinator.granted)
            counts = zip(spans, coordinator.foreign, strict=True)  # every window closed
            counted = [cpu for (role, *_), cpu in counts if role == "addmul"]
    finally:
        spinner.kill()
    manifest = read_manifest(bundle)
    assert manifest.status is RunStatus.ok, manifest.error
    steps = recipe.for_device("cpu").profile.steps
    assert granted.count(("addmul", "steps")) == steps == len(manifest.metrics.compiled.samples_ms)  # type: ignore[union-attr]
    assert granted.count(("addmul", "profile")) == 2  # compiled, then eager
    [bench] = read_capture(bundle, manifest).graph_benchmarks  # type: ignore[union-attr]
    windows = [(what, closed - opened) for role, what, opened, closed in spans if role == "addmul"]
    timings = [(what, seconds) for what, seconds in windows if what.startswith("graph 0 timing ")]
    # each timing its own window, the 3 rounds taking turns: every round's k-th, then every round's k+1-th
    assert [what for what, _ in timings] == [f"graph 0 timing {k}" for k in range(bench.repeat) for _ in range(3)]
    assert "graph 0 profile" in [what for what, _ in windows]
    assert [len(reps) for reps in bench.reps_ms] == [bench.repeat] * 3
    for n, (_, seconds) in enumerate(timings):  # each timing's calls took no longer than its window was open
        assert bench.reps_ms[n % 3][n // 3] * bench.times / 1e3 <= seconds
    assert window.SOCKET_VARIABLE not in (bundle / "manifest.json").read_text()  # the host's, not the recipe's
    isolation = manifest.isolation
    assert isolation is not None
    # what the coordinator counted window by window reached the bundle through the child's log; the spinner was
    # stopped in every window, so the runs it knew used nothing while they were open
    assert isolation.others_cpu_s == pytest.approx(sum(round(c.others_s, 3) for c in counted), abs=0.002)
    assert isolation.runs_cpu_s == pytest.approx(sum(round(c.runs_s, 3) for c in counted), abs=0.002)
    assert isolation.runs_cpu_s <= 0.05, isolation.runs_cpu_s


def _talk(coordinator: Coordinator, hello: dict[str, object]) -> tuple[object, object]:
    """A raw connection to the coordinator that says hello (a socket and its line reader)."""
    import json
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(coordinator.path)
    sock.sendall((json.dumps({"hello": hello}) + "\n").encode())
    return sock, sock.makefile("r", encoding="utf-8")


def test_go_says_shared_gpu_only_when_a_paused_run_is_on_the_holders_gpu() -> None:
    """Runs on GPUs "0" and "1" (spinners standing for their processes); a holder on "0" must drain its GPU
    before timing, one on "2" need not, until a run that never said its GPU (a registered root) is paused too: it
    may share any (the rule a GPU-only window pauses by)."""
    import json

    spinners = [_spinner(), _spinner(), _spinner()]
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # not the spinners' parent
    try:
        with Coordinator(settle_s=0.0) as coordinator:
            peers = [
                _talk(coordinator, {"pid": spinner.pid, "role": role, "gpu": gpu})
                for spinner, role, gpu in zip(spinners[:2], ("a", "b"), ("0", "1"), strict=True)
            ]
            assert _wait_for(lambda: len(coordinator._peers) == 2)  # both hellos read
            answers = {}
            for turn, gpu in (("0", "0"), ("2", "2"), ("2+unknown", "2")):
                if turn == "2+unknown":
                    coordinator.register(spinners[2].pid, "unknown")
                sock, reader = _talk(coordinator, {"pid": holder.pid, "role": f"holder-{turn}", "gpu": gpu})
                sock.sendall(b'{"enter": "steps"}\n')  # type: ignore[attr-defined]
                answers[turn] = json.loads(reader.readline())["go"]  # type: ignore[attr-defined]
                assert _wait_for(lambda: all(_state(s.pid) == "T" for s in spinners[:2]))  # SIGSTOP lands async
                sock.sendall(b'{"leave": "steps"}\n')  # type: ignore[attr-defined]
                assert {"a", "b"} <= json.loads(reader.readline())["left"]["paused"].keys()  # type: ignore[attr-defined]
                sock.close()  # type: ignore[attr-defined]
            for sock, _ in peers:
                sock.close()  # type: ignore[attr-defined]
        assert answers["0"]["paused"] == ["a", "b"] and answers["0"]["shared_gpu"] is True
        assert answers["2"]["paused"] == ["a", "b"] and answers["2"]["shared_gpu"] is False
        assert answers["2+unknown"]["paused"] == ["a", "b", "unknown"] and answers["2+unknown"]["shared_gpu"] is True
        assert all(_wait_for(lambda s=s: _state(s.pid) != "T") for s in spinners)
    finally:
        for process in (*spinners, holder):
            process.kill()


def test_a_gpu_only_window_takes_its_turn_and_stops_only_the_runs_on_its_gpu() -> None:
    """Runs on GPUs "0", "1" and unknown (a registered root that never said hello); a `gpu_only` holder on "0"
    stops the run on "0" and the unknown one, not the one on "1", and waits its turn behind a host window."""
    import json

    spinners = [_spinner(), _spinner(), _spinner()]
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with Coordinator(settle_s=0.0) as coordinator:
            peers = [
                _talk(coordinator, {"pid": spinner.pid, "role": role, "gpu": gpu})
                for spinner, role, gpu in zip(spinners[:2], ("on0", "on1"), ("0", "1"), strict=True)
            ]
            coordinator.register(spinners[2].pid, "unknown")
            assert _wait_for(lambda: len(coordinator._peers) == 2)
            other, other_reader = peers[1]
            other.sendall(b'{"enter": "steps"}\n')  # type: ignore[attr-defined]
            assert json.loads(other_reader.readline())["go"]["paused"] == ["on0", "unknown"]  # type: ignore[attr-defined]
            sock, reader = _talk(coordinator, {"pid": holder.pid, "role": "holder", "gpu": "0"})
            sock.sendall(b'{"enter": "compile benchmark", "gpu_only": true}\n')  # type: ignore[attr-defined]
            assert _wait_for(lambda: len(coordinator._waiting) == 1)  # behind the host window of "on1"
            other.sendall(b'{"leave": "steps"}\n')  # type: ignore[attr-defined]
            other_reader.readline()  # type: ignore[attr-defined]
            go = json.loads(reader.readline())["go"]  # type: ignore[attr-defined]
            assert go["paused"] == ["on0", "unknown"] and go["shared_gpu"] is True
            assert _wait_for(lambda: _state(spinners[0].pid) == "T" and _state(spinners[2].pid) == "T")
            time.sleep(0.2)
            assert _state(spinners[1].pid) != "T"  # the run on GPU 1 goes on meanwhile
            sock.sendall(b'{"leave": "compile benchmark"}\n')  # type: ignore[attr-defined]
            assert set(json.loads(reader.readline())["left"]["paused"]) == {"on0", "unknown"}  # type: ignore[attr-defined]
            for s, _ in (*peers, (sock, reader)):
                s.close()  # type: ignore[attr-defined]
        assert all(_wait_for(lambda s=s: _state(s.pid) != "T") for s in spinners)
    finally:
        for process in (*spinners, holder):
            process.kill()


def test_gpus_may_share_unless_both_are_known_and_apart() -> None:
    from reportgen.run.window_host import _may_share

    assert _may_share("0", "0") and _may_share("0,1", "1") and _may_share(None, "1") and _may_share("*", "1")
    assert not _may_share("0", "1") and not _may_share("0,2", "1,3")


def test_a_policy_can_hold_go_back_after_the_pause() -> None:
    """`Policy.settle_s`: a benchmark's policy waits longer before some windows (`benchmarks/window_truth.py`)."""
    import json
    import time

    class Quiet(Fifo):
        def settle_s(self, request: Request, paused: list[str], default: float) -> float:
            return 0.5 if request.what == "quiet" else default

    spinner = _spinner()
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with Coordinator(Quiet(), settle_s=0.0) as coordinator:
            coordinator.register(spinner.pid, "company")
            sock, reader = _talk(coordinator, {"pid": holder.pid, "role": "measured", "gpu": "0"})
            waited = {}
            for what in ("quiet", "busy"):
                asked = time.monotonic()
                sock.sendall(json.dumps({"enter": what}).encode() + b"\n")  # type: ignore[attr-defined]
                assert json.loads(reader.readline())["go"]["paused"] == ["company"]  # type: ignore[attr-defined]
                waited[what] = time.monotonic() - asked
                sock.sendall(json.dumps({"leave": what}).encode() + b"\n")  # type: ignore[attr-defined]
                reader.readline()  # type: ignore[attr-defined]
            sock.close()  # type: ignore[attr-defined]
        assert waited["quiet"] >= 0.5 > waited["busy"]
    finally:
        for process in (spinner, holder):
            process.kill()


class _FakeCuda:
    """torch.cuda as `drain_gpu` sees it: `busy_s` of queued foreign work from its first synchronize on (inside the
    drain's clock, so that the drain cannot measure less), each synchronize waiting 2 ms while any is left (the other
    context's time slice), then returning at once."""

    def __init__(self, busy_s: float) -> None:
        self.busy_s = busy_s
        self.until: float | None = None
        self.synchronizes = 0

    def is_available(self) -> bool:
        return True

    def is_initialized(self) -> bool:
        return True

    def synchronize(self) -> None:
        self.synchronizes += 1
        if self.until is None:
            self.until = time.perf_counter() + self.busy_s
        if time.perf_counter() < self.until:
            time.sleep(0.002)


class _FakeTorch:
    def __init__(self, busy_s: float) -> None:
        self.cuda = _FakeCuda(busy_s)

    def zeros(self, *_: object, **__: object) -> object:
        class _Probe:
            def add_(self, _: int) -> None:
                pass

        return _Probe()


def test_drain_waits_until_three_quick_round_trips_in_a_row(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakeTorch(busy_s=0.05)
    monkeypatch.setitem(sys.modules, "torch", fake)
    notes = list(window.log().notes)
    waited = window.drain_gpu(limit_s=5.0)
    assert 0.05 <= waited < 5.0 and window.log().notes == notes  # under its limit: it saw the GPU drain
    assert fake.cuda.synchronizes >= 1 + 1 + 3  # the probe's own, at least one slow slice, three quick in a row


def test_a_gpu_that_never_drains_opens_the_window_at_the_limit_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", _FakeTorch(busy_s=60.0))
    notes = list(window.log().notes)
    waited = window.drain_gpu(limit_s=0.1)
    assert 0.1 <= waited < 1.0
    assert any("still busy after" in note for note in window.log().notes[len(notes) :])


def test_a_process_without_a_cuda_context_has_nothing_to_drain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert window.drain_gpu() == 0.0


def test_a_connection_that_ends_after_close_logs_nothing_and_raises_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process whose connection outlives the coordinator says "bye" after `close` dropped the log (2xH200,
    2026-11-28: every window_truth round ended with "ValueError: I/O operation on closed file" in that thread)."""
    import json
    import socket
    import threading

    raised: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    log = tmp_path / "windows.log"
    coordinator = Coordinator(Fifo(), log_path=log)
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(coordinator.path)
    client.sendall((json.dumps({"hello": {"pid": os.getpid(), "role": "late"}}) + "\n").encode())
    assert _wait_for(lambda: "hello" in log.read_text())
    serving = [t for t in threading.enumerate() if t.name != "MainThread" and t.daemon and t.is_alive()]
    coordinator.close()
    client.close()  # its thread now ends, after the close
    for thread in serving:
        thread.join(timeout=5)
    assert raised == []
    assert "bye" not in log.read_text()
