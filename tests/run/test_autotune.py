"""max-autotune's `AUTOTUNE` blocks, as torch 2.6 and 2.11+ print them, parsed from a run log."""

from __future__ import annotations

import pytest

from reportgen.run.autotune import parse_autotune_log

# torch 2.11 on an H100 (GEMM, with strides/dtypes, template descriptions, a failed choice and prescreening)
GPU_211 = """\
[reportgen 03:51:32] compiling (first call)
AUTOTUNE addmm(64x1000, 64x1536, 1536x1000)
strides: [0, 1], [1536, 1], [1, 1536]
dtypes: torch.float16, torch.float16, torch.float16
  triton_mm_18 0.0143 ms 100.0% ACC_TYPE='tl.float32', ALLOW_TF32=False, BLOCK_K=64, BLOCK_M=64, BLOCK_N=128, num_stages=3, num_warps=4
  bias_addmm 0.0160 ms 89.4%
  addmm 0.0172 ms 83.1%
  triton_mm_9 inf ms 0.0% ACC_TYPE='tl.float32', BLOCK_K=128
SingleProcess AUTOTUNE benchmarking takes 0.4213 seconds and 1.2070 seconds precompiling for 21 choices and 0.0100 seconds prescreening
""".replace("%\n", "% \n")  # Inductor ends a choice without a description with a space

# torch 2.6: no strides/dtypes lines; a zero timing; another process's warning inside the block
CPU_26 = """\
AUTOTUNE mm(16x64, 64x128)
/usr/lib/python3/site-packages/torch/_inductor/select_algorithm.py:1: UserWarning: something
  mm 0.0000 ms <DIVIDED BY ZERO ERROR>
  cpp_CppMicroGemmFP32Vec_0 0.0050 ms 100.0%
SubProcess AUTOTUNE benchmarking takes 2.5 seconds and 0.0001 seconds precompiling for 2 choices
""".replace("%\n", "% \n")


def test_parses_a_torch_211_gpu_block() -> None:
    (op,) = parse_autotune_log(GPU_211)
    assert (op.op, op.sizes) == ("addmm", "64x1000, 64x1536, 1536x1000")
    assert op.strides == "[0, 1], [1536, 1], [1, 1536]" and op.dtypes.startswith("torch.float16")
    assert [c.name for c in op.choices] == ["triton_mm_18", "bias_addmm", "addmm", "triton_mm_9"]
    assert op.winner.name == "triton_mm_18" and op.winner.is_template and op.winner.ms == pytest.approx(0.0143)
    assert "BLOCK_M=64" in op.winner.description
    assert op.choices[3].ms is None  # failed to compile or run: logged as inf
    assert op.extern_ms == pytest.approx(0.0160)  # bias_addmm: the fastest library call
    assert (op.num_choices, op.benchmark_s, op.precompile_s) == (21, pytest.approx(0.4213), pytest.approx(1.207))


def test_parses_a_torch_26_block_with_noise_inside() -> None:
    (op,) = parse_autotune_log(CPU_26)
    assert op.strides is None and op.dtypes is None
    assert [(c.name, c.ms) for c in op.choices] == [("mm", None), ("cpp_CppMicroGemmFP32Vec_0", 0.005)]
    assert op.extern_ms is None and op.num_choices == 2 and op.benchmark_s == 2.5


def test_several_blocks_keep_log_order_and_a_cut_block_is_kept() -> None:
    cut = "AUTOTUNE convolution(64x32x112x112, 32x1x3x3)\n  convolution 0.0410 ms 100.0% \n"
    ops = parse_autotune_log(GPU_211 + CPU_26 + cut)
    assert [op.op for op in ops] == ["addmm", "mm", "convolution"]
    assert ops[2].num_choices is None and ops[2].benchmark_s is None  # the run ended mid-tuning
    assert not ops[2].winner.is_template


@pytest.mark.parametrize(
    "text",
    [
        "",
        "AUTOTUNE mm(1x1)\nSingleProcess AUTOTUNE benchmarking takes 1 seconds and 1 seconds precompiling for 0 choices\n",
        "  mm 0.1 ms 100.0%\n",
        'Autotune Choices Stats:\n{"num_choices": 2}\n',
    ],
)
def test_text_without_a_tuned_op_gives_none(text: str) -> None:
    assert parse_autotune_log(text) == []


def test_the_parent_adds_the_choices_to_capture_json(tmp_path) -> None:
    from reportgen.bundle import Capture
    from reportgen.run.launcher import _add_autotune

    (tmp_path / "run.log").write_text(GPU_211)
    # a run that ended while tuning wrote no capture: one is written for the choices
    assert _add_autotune(tmp_path, None) == "capture.json"
    capture = Capture.model_validate_json((tmp_path / "capture.json").read_text())
    assert capture.autotune[0].op == "addmm" and capture.notes
    # a capture the child wrote keeps its fields
    (tmp_path / "capture.json").write_text(Capture(copy_bandwidth_gbps=3000.0).model_dump_json())
    assert _add_autotune(tmp_path, "capture.json") == "capture.json"
    capture = Capture.model_validate_json((tmp_path / "capture.json").read_text())
    assert capture.copy_bandwidth_gbps == 3000.0 and len(capture.autotune) == 1
    # an unreadable capture is left for the reader to report, not replaced
    (tmp_path / "capture.json").write_text("{broken")
    assert _add_autotune(tmp_path, "capture.json") == "capture.json"
    assert (tmp_path / "capture.json").read_text() == "{broken"
    # no AUTOTUNE in the log: nothing written
    (tmp_path / "run.log").write_text("compiling\n")
    assert _add_autotune(tmp_path / "missing", None) is None
