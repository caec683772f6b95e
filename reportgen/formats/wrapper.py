"""Read Inductor's compiled modules: a wrapper's kernels, their ATen origins, and its extern calls.

Pure text functions, line-based (a training wrapper is ~3 MB / 36k lines; no `ast`). What a
wrapper looks like (torch 2.5-2.11)::

    # AOT ID: ['0_forward']
    ...
    # kernel path: /tmp/.../ab/cabc....py
    # Topologically Sorted Source Nodes: [x, input_1], Original ATen: [aten._to_copy, aten.convolution]
    # Source node to ATen node mapping: ...
    triton_poi_fused__to_copy_0 = async_compile.triton('triton_poi_fused__to_copy_0', '''
    <kernel source>
    ''', device_str='cuda')
    ...
    class Runner:                      # 2.11; before: a module-level `def call(args):`
        def call(self, args):
            primals_1, primals_2, tangents_1 = args
            ...
            buf0 = extern_kernels.convolution(...)

C++ kernels (`cpp_fused_*` = async_compile.cpp_pybinding(...)) get no comment block: Inductor writes
`# kernel path` and the ATen origins for GPU kernels only, so their `aten_ops` are empty.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath

from reportgen.bundle import KernelBackend, KernelSource, WrapperInfo, WrapperKind

__all__ = [
    "embedded_source",
    "kernel_estimates",
    "kernel_module_name",
    "kernel_num_gb",
    "parse_wrapper",
]


_DEFINITION = re.compile(r"^(\w+) = async_compile\.(\w+)\(")
_KERNEL_PATH = re.compile(r"^# kernel path: (.+?)\s*$")
_ORIGINS = re.compile(r"^# (?:Topologically Sorted|Unsorted) Source Nodes: \[(.*)\], Original ATen: \[(.*)\]\s*$")
_AOT_ID = re.compile(r"^# AOT ID: \['?([^'\]]*)'?\]")
_CALL_DEF = re.compile(r"^(\s*)def call\((?:self, )?args\):")
_UNPACK = re.compile(r"^\s*(.+?),?\s*=\s*args\s*$")
_EXTERN_CALL = re.compile(r"(?<![\w.])(extern_kernels\.\w+|torch\.ops\.\w+\.\w+(?:\.\w+)?|aten\.\w+(?:\.\w+)?)\(")
_TRITON_DEF = re.compile(r"^def (triton_\w+)\(", re.M)
_NUM_GB = re.compile(r"['\"]kernel_num_gb['\"]:\s*([-+0-9.eE]+|None)")
_FLOP = re.compile(r"['\"]kernel_flop['\"]:\s*(\d+)")
_POINTER = re.compile(r"['\"]signature['\"]:\s*\{[^}]*?['\"]\*(fp16|bf16|fp32|fp8e4nv|fp8e5)['\"]")
_DTYPES = {"fp16": "c10::Half", "bf16": "c10::BFloat16", "fp32": "float", "fp8e4nv": "c10::Float8_e4m3fn",
           "fp8e5": "c10::Float8_e5m2"}  # fmt: skip
"""Triton's pointer types, as the profiler names the dtypes."""
_BACKENDS: dict[str, KernelBackend] = {"triton": "triton", "cpp_pybinding": "cpp", "cpp": "cpp"}
_STRING_QUOTES = "'''"


def _basename(path: str) -> str:
    return PureWindowsPath(path).name if "\\" in path else PurePosixPath(path).name


def _split_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _kernel(match: re.Match[str], comments: list[str], line: int) -> KernelSource:
    """The kernel defined by `match`, described by the comment block just above it."""
    kernel_path = source_nodes = aten_ops = None
    for comment in comments:
        if kernel_path is None and (path := _KERNEL_PATH.match(comment)):
            kernel_path = _basename(path.group(1))
        elif source_nodes is None and (origins := _ORIGINS.match(comment)):
            source_nodes, aten_ops = _split_list(origins.group(1)), _split_list(origins.group(2))
    return KernelSource(
        name=match.group(1),
        backend=_BACKENDS.get(match.group(2), "other"),
        kernel_path=kernel_path,
        source_nodes=source_nodes or [],
        aten_ops=aten_ops or [],
        line=line,
        end_line=line,
    )


@dataclass
class _Scan:
    """What one pass over a wrapper's lines collects."""

    kernels: list[KernelSource] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    graph_inputs: list[str] | None = None


def _scan(lines: list[str]) -> _Scan:
    """Kernel definitions, code lines outside embedded kernel sources, and `call`'s unpacked inputs."""
    scan = _Scan()
    comments: list[str] = []
    in_string = in_call = False
    for index, text in enumerate(lines):
        if in_string:
            if text.startswith(_STRING_QUOTES):
                in_string = False
                scan.kernels[-1] = scan.kernels[-1].model_copy(update={"end_line": index + 1})
            continue
        if text.startswith("#"):
            comments.append(text)
        elif "= async_compile." in text and (match := _DEFINITION.match(text)):
            scan.kernels.append(_kernel(match, comments, index + 1))
            in_string = text.count(_STRING_QUOTES) % 2 == 1
            comments = []
        elif text.strip():
            comments = []
            if text.lstrip().startswith("#"):
                continue
            scan.code.append(text)
            if "def call(" in text and _CALL_DEF.match(text):
                in_call = True
            elif in_call and scan.graph_inputs is None and (unpack := _UNPACK.match(text)):
                scan.graph_inputs = _split_list(unpack.group(1))
    return scan


def _kind(graph_inputs: list[str] | None, aot_id: str | None) -> WrapperKind:
    if graph_inputs is not None:
        if any(n.startswith("tangents_") for n in graph_inputs):
            return "backward"
        return "forward" if any(n.startswith("primals_") for n in graph_inputs) else "inference"
    for kind in ("backward", "forward"):
        if aot_id is not None and aot_id.endswith(kind):
            return kind
    return "inference"


def _extern_calls(code: list[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for text in code:
        if "(" not in text:
            continue
        for name in _EXTERN_CALL.findall(text):
            counts["torch.ops." + name if name.startswith("aten.") else name] += 1
    return counts


def parse_wrapper(source: str) -> WrapperInfo:
    """Kernels, kind and extern calls of a wrapper module's source text."""
    lines = source.splitlines()
    aot = _AOT_ID.match(lines[0]) if lines else None
    aot_id = aot.group(1) if aot else None
    scan = _scan(lines)
    counts = _extern_calls(scan.code)
    return WrapperInfo(
        kind=_kind(scan.graph_inputs, aot_id),
        kernels=scan.kernels,
        extern_calls=list(counts),
        extern_call_counts=dict(counts),
        aot_id=aot_id,
    )


def embedded_source(wrapper_source: str, kernel: KernelSource) -> str:
    """The kernel's source as embedded in the wrapper (between the `'''` lines), else its definition."""
    lines = wrapper_source.splitlines()
    if kernel.end_line > kernel.line:
        return "\n".join(lines[kernel.line : kernel.end_line - 1])
    return lines[kernel.line - 1] if 0 < kernel.line <= len(lines) else ""


def kernel_module_name(source: str) -> str | None:
    """The `def triton_...(` name of a Triton kernel module, or None."""
    match = _TRITON_DEF.search(source)
    return match.group(1) if match else None


def kernel_estimates(source: str) -> tuple[int | None, str | None]:
    """Inductor's FLOP estimate per call (`inductor_meta['kernel_flop']`, with TORCHINDUCTOR_BENCHMARK_KERNEL: a
    template's matrix product, 0 for most other kernels) and the dtype of the first pointer of its signature."""
    flop = _FLOP.search(source)
    pointer = _POINTER.search(source)
    return (int(flop.group(1)) if flop else None), (_DTYPES[pointer.group(1)] if pointer else None)


def kernel_num_gb(source: str) -> float | None:
    """Inductor's estimate of GB a kernel moves per call (`inductor_meta['kernel_num_gb']`), or None."""
    match = _NUM_GB.search(source)
    if match is None or match.group(1) == "None":
        return None
    try:
        return float(match.group(1))
    except ValueError:
        return None
