"""The parent side of a distributed run (reportgen.run.ranks): how many ranks, the launch command, the records."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from reportgen.bundle import Metrics, StepTimes
from reportgen.recipe import Recipe
from reportgen.run.protocol import CHILD_RESULT, ChildResult
from reportgen.run.ranks import child_command, gather_ranks, neutral_digest, visible_gpus
from tests.data import DATA_DIR

__all__: list[str] = []


def _recipe(device: str = "auto", **distributed: object) -> Recipe:
    return Recipe.model_validate(
        {
            "name": "ranks",
            "model": {"ref": "models:TinyMLP"},
            "inputs": {"tensors": [{"shape": [4]}]},
            "device": device,
            "distributed": distributed,
        }
    )


@pytest.mark.parametrize(("listed", "count"), [("0,1", 2), ("3", 1), ("", 0), ("-1", 0), ("GPU-1a2b, GPU-3c4d ,", 2)])
def test_cuda_visible_devices_says_how_many_gpus_a_child_sees(listed: str, count: int, tmp_path: Path) -> None:
    (tmp_path / "nvidia0").touch()
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": listed}, dev=tmp_path) == count


def test_without_cuda_visible_devices_the_host_gpu_nodes_count(tmp_path: Path) -> None:
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia10"):
        (tmp_path / name).touch()
    assert visible_gpus({}, dev=tmp_path) == 3
    assert visible_gpus({}, dev=tmp_path / "missing") == 0


def test_a_plain_recipe_runs_the_child_alone_and_a_distributed_one_under_torchrun() -> None:
    plain = _recipe().model_copy(update={"distributed": None})
    assert child_command("py", plain, Path("s.json"), Path("b"), {}) == [
        "py",
        "-m",
        "reportgen.run.child",
        "s.json",
        "b",
    ]
    command = child_command("py", _recipe(nproc_per_node=3), Path("s.json"), Path("b"), {})
    assert command[:3] == ["py", "-m", "torch.distributed.run"]
    assert "--standalone" in command and "--nproc-per-node=3" in command and "--max-restarts=0" in command
    assert command[-4:] == ["-m", "reportgen.run.child", "s.json", "b"]


def test_all_ranks_means_one_per_visible_gpu_and_two_on_the_cpu() -> None:
    gpus = {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}
    assert "--nproc-per-node=4" in child_command("py", _recipe(), Path("s"), Path("b"), gpus)
    assert "--nproc-per-node=2" in child_command("py", _recipe(device="cpu"), Path("s"), Path("b"), gpus)
    assert "--nproc-per-node=2" in child_command("py", _recipe(), Path("s"), Path("b"), {"CUDA_VISIBLE_DEVICES": ""})


def _times(median: float) -> StepTimes:
    return StepTimes(samples_ms=[median], median_ms=median, q1_ms=median, q3_ms=median, min_ms=median, max_ms=median)


def test_the_ranks_records_are_gathered_and_the_followers_files_removed(tmp_path: Path) -> None:
    leader = ChildResult(
        stage="done", status="ok", metrics=Metrics(compiled=_times(5.0)), trace_file="trace.json.gz",
        graphs=["ca.py"], splits=["DDPOptimizer used bucket cap 1048576 and created 2 buckets."],
    )  # fmt: skip
    (tmp_path / "trace.json.gz").write_bytes(b"x")
    follower = tmp_path / "ranks" / "1"
    follower.mkdir(parents=True)
    (follower / "trace.json.gz").write_bytes(b"x")
    failed = ChildResult(
        stage="model", status="failed", error="RuntimeError: token hunter2", failed_at=12.5, trace_file="trace.json.gz"
    )
    (follower / CHILD_RESULT).write_text(failed.model_dump_json(), encoding="utf-8")
    run = gather_ranks(
        _recipe(device="cpu", nproc_per_node=3),
        tmp_path,
        leader,
        {},
        lambda name: name if (tmp_path / name).is_file() else None,
        lambda text: text.replace("hunter2", "[redacted]"),
    )
    assert run is not None and (run.world_size, run.strategy, run.backend) == (3, "ddp", "gloo")
    assert [(r.rank, r.status, r.stage) for r in run.ranks] == [
        (0, "ok", "done"),
        (1, "failed", "model"),
        (2, "running", "start"),
    ]
    assert run.ranks[0].compiled == _times(5.0) and run.ranks[0].trace_file == "trace.json.gz"
    assert run.ranks[1].trace_file == "ranks/1/trace.json.gz" and run.ranks[1].error == "RuntimeError: token [redacted]"
    assert run.failed_rank is not None and run.failed_rank.rank == 1
    assert run.splits == leader.splits
    assert not (follower / CHILD_RESULT).exists()


def test_a_run_that_is_not_distributed_has_no_ranks(tmp_path: Path) -> None:
    plain = _recipe().model_copy(update={"distributed": None})
    assert gather_ranks(plain, tmp_path, None, {}, lambda name: name, lambda text: text) is None


def _as_rank1(text: str, spellings: dict[str, int]) -> str:
    """`text` as rank 1 writes it: each device-index spelling moved to GPU 1, and each kernel's path into rank 1's own
    cache, in the folder of its new hash's first letters (`# kernel path:` comments, torch 2.11)."""
    assert {s: text.count(s) for s in spellings} == spellings
    for spelling in spellings:
        text = text.replace(spelling, spelling.replace("0", "1"))
    for index, old in enumerate(re.findall(r"# kernel path: (\S+)", text)):
        assert Path(old).name[:3] == "c" + Path(old).parent.name
        name = f"c{index:04d}".ljust(52, "r")
        text = text.replace(old, f"/tmp/cache-of-rank-1/inductor/{name[1:3]}/{name}.py")
    return text


def test_two_ranks_wrappers_of_the_same_graph_digest_alike_and_another_graph_does_not(tmp_path: Path) -> None:
    """Two real wrappers of mixnet_l training on rank 0's GPU: an H100's (an older torch, its own name inside it) and an
    H200's (torch 2.11, 241 kernel paths into the run's cache); each as rank 1 writes it digests alike, any other
    change of the source does not."""
    import tarfile

    with tarfile.open(DATA_DIR / "h100-mixnet_l-train-amp" / "modules.tar.gz") as archive:
        archive.extractall(tmp_path, filter="data")
    h100 = next(tmp_path.rglob("cgwmvp7wyphwdxhkrfx3s6lpg4rad6xdvrqb7usg57evi5sjlkl2.py"))
    h200 = tmp_path / "cm6e5oidt6bvcdhdobzqgwmuafo7bgvdrto7xezv4slj7c3a24ca.py"
    h200.write_bytes(gzip.decompress((DATA_DIR / "h200-mixnet_l" / "wrapper-forward.py.gz").read_bytes()))
    cases = {
        h100: {"DeviceGuard(0)": 2, "cuda:0": 6, "get_raw_stream(0)": 1, "index=0": 1, "set_device(0)": 2},
        h200: {"DeviceGuard(0)": 483, "cuda:0": 3286, "get_raw_stream(0)": 848, "index=0": 241, "set_device(0)": 483},
    }
    for wrapper, spellings in cases.items():
        text = wrapper.read_text()
        rank1 = _as_rank1(text, spellings).replace(wrapper.stem, "c" + "q" * 51)
        other = text.replace("def call(", "def call(  ", 1)  # any other change of the source
        for name, source in (("rank1.py", rank1), ("other.py", other)):
            (tmp_path / name).write_text(source)
        assert rank1 != text and (wrapper == h100 or "/tmp/cache-of-rank-1/" in rank1)
        assert neutral_digest(wrapper) == neutral_digest(tmp_path / "rank1.py") != neutral_digest(tmp_path / "other.py")


def test_two_real_ranks_wrappers_of_one_graph_digest_alike(tmp_path: Path) -> None:
    """The same backward graph as two H200 ranks wrote it under FSDP2 (torch 2.11, NCCL): each names its own GPU,
    its own cache path and its stream after the GPU (`stream1 = get_raw_stream(1)`), and they digest alike; the
    same source with one kernel argument changed does not."""
    texts = [
        gzip.decompress((DATA_DIR / "h200-nccl-2ranks" / f"fsdp2-wrapper-rank{r}.py.gz").read_bytes()) for r in (0, 1)
    ]
    assert b"stream1 = get_raw_stream(1)" in texts[1] and b"stream0 = get_raw_stream(0)" in texts[0]
    paths = [tmp_path / f"rank{r}.py" for r in (0, 1)]
    for path, text in zip(paths, texts, strict=True):
        path.write_bytes(text)
    other = tmp_path / "other.py"
    other.write_bytes(texts[0].replace(b"4194304, stream=stream0", b"4194305, stream=stream0", 1))
    assert other.read_bytes() != texts[0]
    assert neutral_digest(paths[0]) == neutral_digest(paths[1]) != neutral_digest(other)
