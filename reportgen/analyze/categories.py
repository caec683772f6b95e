"""Kernel categories: one ordered rule table, first match wins.

GPU rules classify device activity (Kineto `cat` = kernel, gpu_memcpy, gpu_memset) by kernel name and
event category; CPU rules classify CPU op names (`cpu_op` events) of CPU runs. A name no rule matches is
`other`.

Order matters where names overlap: cuDNN convolution kernels contain `implicit_gemm`/`xmma`/`cutlass`
(`sm80_xmma_wgrad_implicit_gemm_..._cudnn`, `cutlass__5x_cudnn::Kernel<...dgrad...>`), so `conv` is
tested before `extern_gemm`; attention kernels may contain `cutlass` or `cudnn`, so `attention` comes first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from reportgen.bundle import OTHER

__all__ = ["COMPUTE_CATEGORIES", "RULES", "Rule", "categorize", "is_compute"]

Device = Literal["cuda", "cpu"]


@dataclass(frozen=True)
class Rule:
    """One categorisation rule.

    :param category: the category assigned on a match
    :param pattern: searched in the kernel / op name (`re.search`)
    :param description: what the rule is meant to catch, with real examples
    :param device: `cuda` rules apply to GPU activity, `cpu` rules to CPU ops
    :param cats: Kineto event categories that match regardless of the name
    """

    category: str
    pattern: re.Pattern[str]
    description: str
    device: Device = "cuda"
    cats: frozenset[str] = frozenset()

    def matches(self, name: str, cat: str) -> bool:
        """Whether this rule claims the event."""
        return cat in self.cats or self.pattern.search(name) is not None


def _rule(category: str, pattern: str, description: str, device: Device = "cuda", *cats: str) -> Rule:
    return Rule(category, re.compile(pattern), description, device, frozenset(cats))


RULES: tuple[Rule, ...] = (
    # --- GPU ---------------------------------------------------------------------------------------
    _rule("memcpy", r"^Memcpy\b", "copies: cat gpu_memcpy, `Memcpy DtoD (Device -> Device)`", "cuda", "gpu_memcpy"),
    _rule("memset", r"^Memset\b", "fills: cat gpu_memset, `Memset (Device)`", "cuda", "gpu_memset"),
    _rule("triton_pointwise", r"^triton_poi_", "Inductor pointwise: `triton_poi_fused_add_0`"),
    _rule("triton_reduction", r"^triton_red_", "Inductor reduction: `triton_red_fused_sum_1`"),
    _rule("triton_persistent_reduction", r"^triton_per_", "Inductor persistent reduction: `triton_per_fused_...`"),
    _rule("triton_template", r"^triton_tem_", "Inductor GEMM/conv template (max-autotune): `triton_tem_fused_mm_0`"),
    _rule("triton_foreach", r"^triton_for_", "Inductor foreach (optimizer): `triton_for_fused_0`"),
    _rule("triton_split_scan", r"^triton_spl_", "Inductor split scan: `triton_spl_fused_cumsum_0`"),
    _rule("triton_other", r"^triton_", "other Triton: `triton_unk_...`, plain `triton_` (unique names off)"),
    _rule("collective", r"(?i)nccl", "NCCL collectives: `ncclDevKernel_AllReduce_Sum_f32_RING_LL`"),
    _rule(
        "attention",
        r"(?i)flash|fmha|efficient_attention|attentionkernel|sdpa",
        "SDPA kernels: `pytorch_flash::flash_fwd_kernel`, `fmha_cutlassF_*`, cuDNN `*_sdpa_*`",
    ),
    _rule(
        "conv",
        r"(?i)cudnn|conv[23]d_|convolve|convolution|conv_depthwise|fprop|dgrad|wgrad",
        "convolutions: `*cudnn*` (incl. cuDNN's xmma/cutlass/tensorTransform), `conv2d_c1_k1_nhwc`, "
        "`dgrad2d_*`, `wgrad2d_*`, `implicit_convolve_sgemm`, `sm90_xmma_depthwise_convolution_*`",
    ),
    _rule(
        "extern_gemm",
        r"(?i)gemm|gemv|cutlass|nvjet|sm\d+_xmma|ampere_|volta_|turing_|splitKreduce|cublas|^Cijk_",
        "cuBLAS/cuBLASLt GEMMs: `nvjet_sm90_*`, `cutlass::Kernel2<cutlass_80_*gemm*>`, `sm90_xmma_gemm_*`, "
        "`ampere_*gemm*`, `gemv*`, `cublasLt::splitKreduce_kernel`; ROCm Tensile GEMMs: `Cijk_Ailk_Bljk_*`",
    ),
    _rule(
        "aten_native",
        r"\bat::|at_cuda_detail",
        "ATen's own CUDA kernels: `at::native::vectorized_elementwise_kernel`, `at_cuda_detail::cub::*`",
    ),
    # --- CPU ---------------------------------------------------------------------------------------
    _rule(
        "cpp_fused",
        r"^(graph_\d+_)?cpp_fused_",
        "Inductor C++ kernels: `cpp_fused_add_mul_0`, profiled as `graph_0_cpp_fused_add_mul_0`",
        "cpu",
    ),
    _rule(
        "cpp_template",
        r"^graph_\d+_\w*(gemm|bmm|conv|flex_attention)\w*_kernel$",
        "Inductor C++ templates (max-autotune with freezing): a GEMM with its epilogue, wrapped as "
        "`cpp_fused_addmm_relu_0` but profiled as `graph_0_gemm_m16n16k16_kernel`",
        "cpu",
    ),
    _rule(
        "extern_gemm",
        r"^aten::(mm|addmm|bmm|baddbmm|matmul|linear|addmv|mv|_addmm_activation)$"
        r"|^(mkldnn|onednn|mkl)::\w*(linear|matmul|mm)|^aten::(mkldnn|_mkl)_?\w*(linear|matmul|mm)",
        "GEMM ops: `aten::mm`, `aten::addmm`, `aten::bmm`, `mkldnn::_linear_pointwise`, `onednn::qlinear_*`",
        "cpu",
    ),
    _rule(
        "conv",
        r"^(aten|mkldnn|onednn)::\w*conv(?!ert)",
        "convolution ops: `aten::convolution`, `aten::_convolution`, `aten::mkldnn_convolution`, "
        "`mkldnn::_convolution_pointwise`",
        "cpu",
    ),
    _rule("aten_native", r"^aten::", "other ATen ops: `aten::add`, `aten::copy_`", "cpu"),
)
"""The rule table; `categorize` returns the category of the first matching rule for the device."""


def categorize(name: str, cat: str, device: str) -> str:
    """The category of a kernel (device `cuda`) or CPU op (device `cpu`).

    :param name: kernel or op name as in the trace
    :param cat: the event's Kineto category (`kernel`, `gpu_memcpy`, `cpu_op`, ...)
    :param device: `cuda` or `cpu`: which half of `RULES` applies
    :raises ValueError: for another device
    """
    if device not in ("cuda", "cpu"):
        raise ValueError(f"unknown device {device!r}, expected 'cuda' or 'cpu'")
    for rule in RULES:
        if rule.device == device and rule.matches(name, cat):
            return rule.category
    return OTHER


COMPUTE_CATEGORIES = frozenset({"extern_gemm", "conv", "attention", "triton_template", "cpp_template"})
"""Categories whose kernels do an op's arithmetic (a GEMM, a convolution, attention), as opposed to the copies,
fills and elementwise kernels the same op may launch beside it."""
_LAYOUT = re.compile(r"tensorTransform|nchwToNhwc|nhwcToNchw", re.I)
"""Layout transforms that cuDNN launches under a convolution: categorised `conv`, but moving bytes only."""


def is_compute(name: str, cat: str, device: Device) -> bool:
    """Whether a kernel (or CPU op) does arithmetic of a counted op (`COMPUTE_CATEGORIES`, not a layout transform)."""
    return categorize(name, cat, device) in COMPUTE_CATEGORIES and _LAYOUT.search(name) is None
