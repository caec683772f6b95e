"""Wrapper parsing on the real mixnet_l training modules (torch 2.11, H100) and a real CPU compile."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from reportgen.formats.wrapper import (
    KernelSource,
    WrapperInfo,
    embedded_source,
    kernel_estimates,
    kernel_module_name,
    kernel_num_gb,
    parse_wrapper,
)
from tests.data import H100_FIXTURE

FIXTURE = H100_FIXTURE
FORWARD = "cache/6c/c6chtauzmuq3wge6v3wvchq352bcaw46j5yn5bop2ofdobpkpfbi.py"
BACKWARD = "cache/tj/ctjxqyt7q2vttlv7rerv4g5g6k4uhfhihx3qg6mgbdt3bj4dbhhs.py"
FIRST_KERNEL_MODULE = "cache/ln/clnief5aaggdzye73rljcnptqpnjqjzszeofg6z3kr26biha5lfp.py"


def read_fixture_module(member: str) -> str:
    """Text of one file of the fixture's modules.tar.gz."""
    with tarfile.open(FIXTURE / "modules.tar.gz") as tar:
        handle = tar.extractfile(member)
        assert handle is not None
        return handle.read().decode()


@pytest.fixture(scope="module")
def forward_source() -> str:
    return read_fixture_module(FORWARD)


@pytest.fixture(scope="module")
def backward_source() -> str:
    return read_fixture_module(BACKWARD)


@pytest.fixture(scope="module")
def forward(forward_source: str) -> WrapperInfo:
    return parse_wrapper(forward_source)


@pytest.fixture(scope="module")
def backward(backward_source: str) -> WrapperInfo:
    return parse_wrapper(backward_source)


def test_fixture_kinds_and_kernel_counts(forward: WrapperInfo, backward: WrapperInfo) -> None:
    assert (forward.kind, forward.aot_id, len(forward.kernels)) == ("forward", "0_forward", 241)
    assert (backward.kind, backward.aot_id, len(backward.kernels)) == ("backward", "0_backward", 278)
    assert {k.backend for k in forward.kernels + backward.kernels} == {"triton"}


def test_fixture_first_kernels(forward: WrapperInfo, backward: WrapperInfo) -> None:
    assert forward.kernels[0] == KernelSource(
        name="triton_poi_fused__to_copy_0",
        backend="triton",
        kernel_path="clnief5aaggdzye73rljcnptqpnjqjzszeofg6z3kr26biha5lfp.py",
        source_nodes=["x"],
        aten_ops=["aten._to_copy"],
        line=45,
        end_line=111,
    )
    first = backward.kernels[0]
    assert first.name.endswith("_relu_threshold_backward_view_0")
    assert first.source_nodes[:3] == ["view_2", "expand", "div_48"]
    assert first.aten_ops == [
        "aten.view",
        "aten.expand",
        "aten.div",
        "aten._native_batch_norm_legit_functional",
        "aten.relu",
        "aten.threshold_backward",
        "aten.native_batch_norm_backward",
    ]


def test_fixture_largest_kernels(forward: WrapperInfo, backward: WrapperInfo) -> None:
    """The longest embedded sources of each graph (lines between the `'''`s)."""
    largest = max(forward.kernels, key=lambda k: k.end_line - k.line)
    assert (largest.name, largest.line, largest.end_line) == (
        "triton_red_fused__native_batch_norm_legit_functional_copy__118",
        11158,
        11275,
    )
    assert largest.aten_ops == ["aten._native_batch_norm_legit_functional", "aten.copy_"]
    largest = max(backward.kernels, key=lambda k: k.end_line - k.line)
    assert (
        largest.name
        == "triton_red_fused__native_batch_norm_legit_functional_cat_mul_sigmoid_sigmoid_backward_silu_sum_52"
    )
    assert largest.aten_ops == [
        "aten.cat",
        "aten._native_batch_norm_legit_functional",
        "aten.silu",
        "aten.mul",
        "aten.sigmoid",
        "aten.sum",
        "aten.sigmoid_backward",
    ]


def test_fixture_extern_calls(forward: WrapperInfo, backward: WrapperInfo) -> None:
    """Calls in code only: the ATen names in the `# Graph fragment` comments are not calls."""
    assert forward.extern_calls == ["extern_kernels.convolution", "extern_kernels.addmm"]
    assert forward.extern_call_counts == {"extern_kernels.convolution": 155, "extern_kernels.addmm": 1}
    assert backward.extern_call_counts == {"torch.ops.aten.convolution_backward.default": 155, "extern_kernels.mm": 2}


def test_fixture_every_kernel_has_a_distinct_module(forward: WrapperInfo, backward: WrapperInfo) -> None:
    with tarfile.open(FIXTURE / "modules.tar.gz") as tar:
        files = {Path(m.name).name for m in tar.getmembers() if m.isfile()}
    paths = [k.kernel_path for k in forward.kernels + backward.kernels]
    assert len(set(paths)) == 519
    assert set(paths) <= files


def test_fixture_embedded_source_is_the_kernel_module(forward_source: str, forward: WrapperInfo) -> None:
    module = read_fixture_module(FIRST_KERNEL_MODULE)
    assert embedded_source(forward_source, forward.kernels[0]).strip() == module.strip()


def test_parse_is_fast_on_the_largest_wrapper(backward_source: str) -> None:
    assert len(backward_source) > 2_700_000
    best = min(_timed(parse_wrapper, backward_source) for _ in range(3))
    assert best < 0.5


def _timed(fn: Callable[[str], object], arg: str) -> float:
    start = time.perf_counter()
    fn(arg)
    return time.perf_counter() - start


def test_kernel_module_name_and_num_gb() -> None:
    module = read_fixture_module(FIRST_KERNEL_MODULE)
    assert kernel_module_name(module) == "triton_poi_fused__to_copy_0"
    assert kernel_num_gb(module) == pytest.approx(5.184e-06)
    assert kernel_module_name("import triton\n") is None
    assert kernel_num_gb("inductor_meta={'kernel_name': 'x'}") is None
    assert kernel_num_gb("inductor_meta={'kernel_num_gb': None}") is None


def test_kernel_estimates_read_inductors_flops_and_the_first_pointers_dtype() -> None:
    """The fixture's kernel modules (TORCHINDUCTOR_BENCHMARK_KERNEL=1, AMP fp16): every one says `kernel_flop`,
    and the 16 with a non-zero count are the pointwise kernels fused after a convolution (Inductor gives them its
    FLOPs), counted here by plain substring search."""
    with tarfile.open(FIXTURE / "modules.tar.gz") as tar:
        sources = [
            text
            for member in tar.getmembers()
            if member.isfile() and member.name.endswith(".py")
            and "@triton.jit" in (text := tar.extractfile(member).read().decode())  # type: ignore[union-attr]
        ]  # fmt: skip
    nonzero = [
        t for t in sources if "'kernel_flop': " in t and "'kernel_flop': 0," not in t and "'kernel_flop': 0}" not in t
    ]
    found = [kernel_estimates(text) for text in sources]
    assert all(flop is not None for flop, _ in found)
    assert sum(1 for flop, _ in found if flop) == len(nonzero) == 16
    dtypes = [dtype for _, dtype in found]
    assert set(dtypes) == {"c10::Half", "float", None}  # None: a signature of integer and bool pointers only
    assert dtypes.count("c10::Half") > dtypes.count(None)
    template = "triton_meta={'signature': {'arg_A': '*bf16', 'arg_B': '*bf16', 'out_ptr0': '*bf16'}}, " \
        "inductor_meta={'kernel_num_gb': 0.0125, 'kernel_flop': 2147483648}"  # fmt: skip
    assert kernel_estimates(template) == (2147483648, "c10::BFloat16")
    assert kernel_estimates("triton_meta={'signature': {'x': 'i32'}}") == (None, None)


SYNTHETIC = textwrap.dedent(
    """\
    # AOT ID: ['3_inference']
    from torch._inductor.select_algorithm import extern_kernels
    aten = torch.ops.aten
    async_compile = AsyncCompile()


    # kernel path: C:\\cache\\ab\\cabc.py
    # Unsorted Source Nodes: [], Original ATen: []
    triton_tem_fused_mm_0 = async_compile.triton('triton_tem_fused_mm_0', '''
    # kernel path: inside a source is not a comment block
    def call(args):
        primals_1, tangents_1 = args
    ''', device_str='cuda')
    cutlass_gemm_1 = async_compile.cuda(r'''
    __global__ void k() {}
    ''', 'so')
    one_liner_2 = async_compile.triton('one_liner_2', '''pass''')

    async_compile.wait(globals())
    del async_compile

    def call(args):
        arg0_1, = args
        args.clear()
        # buf9 = extern_kernels.bmm(arg0_1, arg0_1)
        buf0 = extern_kernels.mm(arg0_1, arg0_1)
        buf1 = aten.convolution.default(buf0)
        buf2 = torch.ops.aten.convolution.default(buf1)
        triton_tem_fused_mm_0.run(buf0)
        return (buf2, )
    """
)


def test_synthetic_wrapper() -> None:
    info = parse_wrapper(SYNTHETIC)
    assert info.kind == "inference"
    assert info.aot_id == "3_inference"
    assert [(k.name, k.backend, k.kernel_path, k.line, k.end_line) for k in info.kernels] == [
        ("triton_tem_fused_mm_0", "triton", "cabc.py", 9, 13),
        ("cutlass_gemm_1", "other", None, 14, 16),
        ("one_liner_2", "triton", None, 17, 17),
    ]
    assert info.kernels[0].source_nodes == info.kernels[0].aten_ops == []
    assert info.extern_calls == ["extern_kernels.mm", "torch.ops.aten.convolution.default"]
    assert info.extern_call_counts["torch.ops.aten.convolution.default"] == 2
    assert embedded_source(SYNTHETIC, info.kernels[1]) == "__global__ void k() {}"
    assert embedded_source(SYNTHETIC, info.kernels[2]).startswith("one_liner_2 = ")


@pytest.mark.parametrize(
    ("unpack", "aot_id", "kind"),
    [
        ("primals_1, primals_2 = args", "0_forward", "forward"),
        ("primals_3, getitem, tangents_1 = args", "0_backward", "backward"),
        ("arg0_1, = args", "0_inference", "inference"),
        ("arg0_1, = args", "0_forward", "inference"),
        ("", "1_backward", "backward"),
        ("", "1_forward", "forward"),
        ("", None, "inference"),
    ],
)
def test_kind(unpack: str, aot_id: str | None, kind: str) -> None:
    header = f"# AOT ID: ['{aot_id}']\n" if aot_id else ""
    source = f"{header}class Runner:\n    def call(self, args):\n        {unpack}\n        return ()\n"
    assert parse_wrapper(source).kind == kind


def test_empty_source() -> None:
    assert parse_wrapper("") == WrapperInfo(kind="inference", kernels=[], extern_calls=[])


@pytest.mark.slow
def test_real_cpu_wrapper(tmp_path: Path) -> None:
    """A CPU compile: one C++ kernel, no `# kernel path` or ATen comment (Inductor writes none for C++)."""
    cache = tmp_path / "inductor"
    code = "import torch\ntorch.compile(lambda a, b, c: a * b + c)(*(torch.randn(64, 64) for _ in range(3)))\n"
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache)}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    wrappers = [p for p in cache.rglob("*.py") if "compiled_module_main" in p.read_text()]
    assert len(wrappers) == 1
    source = wrappers[0].read_text()
    info = parse_wrapper(source)
    assert info.kind == "inference"
    assert [(k.name, k.backend, k.kernel_path, k.aten_ops, k.source_nodes) for k in info.kernels] == [
        ("cpp_fused_add_mul_0", "cpp", None, [], []),
    ]
    assert info.extern_calls == []
    assert 'extern "C"' in embedded_source(source, info.kernels[0])
