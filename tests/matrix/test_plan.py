"""Planning a matrix without running it: shards, the order runs start in, GPUs and slots."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reportgen.bundle import HISTORY_INDEX_FILE, RunStatus
from reportgen.errors import RunError
from reportgen.history import HistoryIndex
from reportgen.matrix import (
    LocalExecutor,
    MatrixOptions,
    MatrixRun,
    Shard,
    expected_durations,
    longest_first,
    make_executor,
    make_slots,
    parse_shard,
    resolve_gpus,
    shard_runs,
)
from reportgen.recipe import Recipe
from tests.conftest import MakeBundle

__all__: list[str] = []


def _run(name: str) -> MatrixRun:
    recipe = Recipe.model_validate({"name": name, "model": {"ref": "m:M"}, "inputs": {"tensors": [{"shape": [1]}]}})
    return MatrixRun(Path(f"recipes/{name}.yaml"), recipe, None)


NAMES = st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), unique=True, max_size=30)


@given(names=NAMES, count=st.integers(1, 8), seed=st.integers(0, 1000))
def test_shards_are_disjoint_whole_balanced_and_independent_of_the_listing_order(
    names: list[str], count: int, seed: int
) -> None:
    runs = [_run(n) for n in names]
    shuffled = random.Random(seed).sample(runs, len(runs))  # another host's shell listed the files otherwise
    parts = [[r.name for r in shard_runs(runs, Shard(i, count))] for i in range(1, count + 1)]
    again = [[r.name for r in shard_runs(shuffled, Shard(i, count))] for i in range(1, count + 1)]
    assert parts == again
    assert sorted(n for part in parts for n in part) == sorted(names)
    sizes = [len(part) for part in parts]
    assert max(sizes) - min(sizes) <= 1


def test_no_shard_is_every_run_in_the_order_given() -> None:
    runs = [_run("b"), _run("a")]
    assert shard_runs(runs, None) == runs


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0", "-1/2"])
def test_a_bad_shard_says_what_is_expected(text: str) -> None:
    with pytest.raises(RunError) as error:
        parse_shard(text)
    assert str(error.value) == f"--shard expects i/N with 1 <= i <= N (e.g. 1/2), got {text!r}"


def test_runs_never_run_start_first_then_the_longest() -> None:
    runs = [_run(n) for n in ("short", "new", "long", "middle")]
    ordered = longest_first(runs, {"short": 10.0, "long": 300.0, "middle": 60.0})
    assert [r.name for r in ordered] == ["new", "long", "middle", "short"]


def test_expected_durations_come_from_the_history_index_or_the_bundles(tmp_path: Path, make_bundle: MakeBundle) -> None:
    make_bundle(tmp_path, "fast")
    make_bundle(tmp_path, "broken", status=RunStatus.failed)
    assert expected_durations(tmp_path) == {"fast": 300.0}  # a failed run says nothing about a run's length
    assert not (tmp_path / HISTORY_INDEX_FILE).exists()  # planning writes nothing
    with HistoryIndex(tmp_path) as index:
        index.update()
    make_bundle(tmp_path, "fast", status=RunStatus.failed)  # the latest failed: the one before it counts
    assert expected_durations(tmp_path) == {"fast": 300.0}
    assert expected_durations(tmp_path / "missing") == {}


def test_gpus_are_found_counted_or_given() -> None:
    two = lambda: ["0", "1"]  # noqa: E731
    assert resolve_gpus(None, two) == ["0", "1"]
    assert resolve_gpus(None, lambda: ["0"]) == [None]  # one GPU: left as it is, as a plain run
    assert resolve_gpus(None, list) == [None]
    assert resolve_gpus("all", two) == ["0", "1"]
    assert resolve_gpus("1", two) == ["0"]
    assert resolve_gpus("0,2", list) == ["0", "2"]  # ids are taken as given, even on a host without GPUs
    with pytest.raises(RunError, match=r"^--gpus 3: this host has 2 GPU\(s\) \(give ids, e.g. --gpus 0,1\)$"):
        resolve_gpus("3", two)
    with pytest.raises(RunError, match=r"^--gpus all: no GPU found"):
        resolve_gpus("all", list)
    with pytest.raises(RunError, match=r"^--gpus expects all, a count, or distinct ids like 0,2; got '0,0'$"):
        resolve_gpus("0,0", two)


def test_each_slot_gets_its_own_contiguous_cores() -> None:
    slots = make_slots(["0", "1", "2"], "cores+lock", cores=range(8))
    assert [s.cpus for s in slots] == [(0, 1, 2), (3, 4, 5), (6, 7)]
    assert [s.label for s in slots] == ["gpu 0", "gpu 1", "gpu 2"]
    assert [s.cpus for s in make_slots(["0", "1"], "lock", cores=range(8))] == [(), ()]
    assert [s.cpus for s in make_slots(["0", "1", "2"], "cores", cores=range(2))] == [(), (), ()]  # too few
    assert make_slots([None], "none", cores=range(2))[0].label == "host"
    assert make_slots(["0"], "cores+lock", cores=range(8))[0].cpus == ()  # one GPU: every core, as a plain run


def test_a_bad_isolation_or_executor_fails_before_anything_runs() -> None:
    with pytest.raises(RunError, match=r"^--isolation expects one of cores\+lock, cores, lock, none; got 'all'$"):
        make_executor(MatrixOptions(isolation="all"))
    with pytest.raises(RunError, match=r"^--executor expects one of local, ray; got 'dask'$"):
        make_executor(MatrixOptions(executor="dask"))
    with pytest.raises(RunError, match=r"^--gpus and --runs-per-gpu are for the local executor"):
        make_executor(MatrixOptions(executor="ray", gpus="all"))
    with pytest.raises(RunError, match=r"^--gpus and --runs-per-gpu are for the local executor"):
        make_executor(MatrixOptions(executor="ray", runs_per_gpu=2))
    with pytest.raises(RunError, match=r"^--runs-per-gpu expects a count of at least 1; got 0$"):
        make_executor(MatrixOptions(runs_per_gpu=0))
    with pytest.raises(RunError, match=r"^--runs-per-gpu 2 needs timed windows \(--isolation lock or cores\+lock\)"):
        make_executor(MatrixOptions(gpus="0,1", runs_per_gpu=2, isolation="cores"))


def test_runs_per_gpu_gives_each_gpu_that_many_slots_the_gpus_taking_turns() -> None:
    executor = make_executor(MatrixOptions(gpus="0,1", runs_per_gpu=2, isolation="lock"))
    assert isinstance(executor, LocalExecutor)
    assert [slot.device for slot in executor.slots] == ["0", "1", "0", "1"]  # the first two runs on two GPUs
    slots = make_slots(["0", "1", "0", "1"], "cores+lock", cores=range(8))
    assert [s.cpus for s in slots] == [(0, 1), (2, 3), (4, 5), (6, 7)]  # every run its own cores
