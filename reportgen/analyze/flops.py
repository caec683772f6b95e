"""FLOPs and minimum bytes of the ops that do matrix products, from their input shapes and dtypes.

A profiler trace recorded with `record_shapes=True` gives each ATen op its `Input Dims`, `Input type` and, for
scalar arguments, `Concrete Inputs` (as strings). The ops counted here are those a compiled graph calls through
`extern_kernels` and eager code dispatches to: matrix products (`aten::mm`, `addmm`, `bmm`, `baddbmm`,
`_scaled_mm`), convolutions (`aten::convolution` and `aten::convolution_backward`, the ops every convolution goes
through whatever its backend) and scaled dot-product attention (the flash, memory-efficient and cuDNN kernels,
forward and backward).

Conventions, those of `torch.utils.flop_counter`: a multiply-add is 2 FLOPs; a bias or `beta * input` is not
counted; attention counts its two matrix products forward and four backward (the scores a flash backward computes
again are not counted, nor is a causal mask's skipped half: both are what the algorithm needs, not what a kernel
did). Bytes are each input read once and the output written once: the least traffic the op needs, so its
arithmetic intensity is an upper bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "COUNTED_OPS",
    "DTYPE_BYTES",
    "OpCost",
    "attention_backward_flops",
    "attention_flops",
    "concrete_ints",
    "conv_flops",
    "conv_output_size",
    "matmul_flops",
    "op_cost",
]

DTYPE_BYTES: dict[str, int] = {
    "double": 8,
    "float": 4,
    "c10::Half": 2,
    "c10::BFloat16": 2,
    "c10::Float8_e4m3fn": 1,
    "c10::Float8_e5m2": 1,
    "c10::Float8_e4m3fnuz": 1,
    "c10::Float8_e5m2fnuz": 1,
    "long int": 8,
    "int": 4,
    "bool": 1,
}
"""Bytes per element of the profiler's `Input type` names (`c10::` spelling of torch 2.x traces)."""

Dims = Sequence[int]


@dataclass(frozen=True)
class OpCost:
    """What one call of an op costs: FLOPs, minimum bytes moved, and the dtype its products ran in."""

    flops: int
    bytes: int | None
    dtype: str


def matmul_flops(a: Dims, b: Dims) -> int:
    """`a @ b` for (m, k) x (k, n), or batched (..., m, k) x (..., k, n): 2 m n k per batch element."""
    if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
        raise ValueError(f"not a matrix product: {list(a)} x {list(b)}")
    batch = math.prod(a[:-2]) if len(a) > 2 else 1
    return 2 * batch * a[-2] * a[-1] * b[-1]


def conv_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """One spatial dimension of a convolution's output (`torch.nn.Conv2d`'s formula)."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def conv_flops(x: Dims, weight: Dims, out_spatial: Dims, *, transposed: bool = False) -> int:
    """A convolution of input `x` (N, C_in, *spatial) with `weight` whose output has `out_spatial` dims.

    Not transposed, the weight is (C_out, C_in / groups, *kernel): each output element is a dot product of
    C_in / groups x kernel terms, 2 N C_out prod(out) (C_in / groups) prod(kernel). Transposed, the weight is
    (C_in, C_out / groups, *kernel) and each input element is scattered to C_out / groups x kernel outputs:
    2 N prod(x spatial) C_in (C_out / groups) prod(kernel). Groups are in the weight's shape already.
    """
    if len(weight) < 3 or len(x) != len(weight):
        raise ValueError(f"not a convolution: input {list(x)}, weight {list(weight)}")
    kernel = math.prod(weight[2:])
    if transposed:
        return 2 * x[0] * math.prod(x[2:]) * weight[0] * weight[1] * kernel
    return 2 * x[0] * weight[0] * math.prod(out_spatial) * weight[1] * kernel


def attention_flops(query: Dims, key: Dims, value: Dims) -> int:
    """Scaled dot-product attention forward, (B, H, S, D) layout: Q K^T and P V, 2 B H S_q S_k (D_qk + D_v)."""
    batch_heads, s_q, d_qk = math.prod(query[:-2]), query[-2], query[-1]
    s_k, d_v = key[-2], value[-1]
    if key[-1] != d_qk or value[-2] != s_k:
        raise ValueError(f"not an attention: q {list(query)}, k {list(key)}, v {list(value)}")
    return 2 * batch_heads * s_q * s_k * (d_qk + d_v)


def attention_backward_flops(query: Dims, key: Dims, value: Dims) -> int:
    """Its backward: dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q: twice the forward's FLOPs."""
    return 2 * attention_flops(query, key, value)


_MATMULS = {"aten::mm": 0, "aten::addmm": 1, "aten::bmm": 0, "aten::baddbmm": 1, "aten::_scaled_mm": 0}
"""Matrix-product ops and where their two operands start among the inputs."""
_ATTENTION = frozenset(
    {
        "aten::_scaled_dot_product_flash_attention",
        "aten::_scaled_dot_product_efficient_attention",
        "aten::_scaled_dot_product_cudnn_attention",
        "aten::_scaled_dot_product_flash_attention_for_cpu",
    }
)
_ATTENTION_BACKWARD = frozenset(f"{name}_backward" for name in _ATTENTION)
COUNTED_OPS = frozenset(
    {*_MATMULS, "aten::convolution", "aten::convolution_backward", *_ATTENTION, *_ATTENTION_BACKWARD}
)
"""The ops `op_cost` counts."""


def concrete_ints(text: str) -> list[int]:
    """A `Concrete Inputs` list such as `[2, 2]` (an int alone is a one-element list)."""
    body = text.strip().strip("[]").strip()
    return [int(part) for part in body.split(",") if part.strip()] if body else []


def _size(dims: Dims, dtype: str) -> int | None:
    width = DTYPE_BYTES.get(dtype)
    return None if width is None else math.prod(dims) * width


def _bytes(tensors: Sequence[tuple[Dims, str]]) -> int | None:
    """The bytes of the tensors read and written; None when a dtype's width is not known."""
    sizes = [_size(dims, dtype) for dims, dtype in tensors]
    return None if any(size is None for size in sizes) else sum(size for size in sizes if size is not None)


def op_cost(name: str, dims: Sequence[Dims], types: Sequence[str], concrete: Sequence[str]) -> OpCost | None:
    """The cost of one call of op `name` from its trace arguments; None when it is not an op counted here.

    :raises ValueError: when the op is counted but its arguments are not what its schema says
    """
    if name in _MATMULS:
        first = _MATMULS[name]
        a, b = dims[first], dims[first + 1]
        out = [*a[:-1], b[-1]]
        dtype = types[first]
        return OpCost(matmul_flops(a, b), _bytes([(a, dtype), (b, types[first + 1]), (out, dtype)]), dtype)
    if name == "aten::convolution":
        return _convolution(dims, types, concrete)
    if name == "aten::convolution_backward":
        return _convolution_backward(dims, types, concrete)
    if name in _ATTENTION or name in _ATTENTION_BACKWARD:
        offset = 1 if name in _ATTENTION_BACKWARD else 0  # (grad_out first)
        query, key, value = dims[offset], dims[offset + 1], dims[offset + 2]
        out = [*query[:-1], value[-1]]
        dtype = types[offset]
        if name in _ATTENTION:  # reads Q, K, V; writes O
            flops = attention_flops(query, key, value)
            tensors = [(query, dtype), (key, dtype), (value, dtype), (out, dtype)]
        else:  # reads dO, Q, K, V, O; writes dQ, dK, dV
            flops = attention_backward_flops(query, key, value)
            tensors = [(out, dtype), (query, dtype), (key, dtype), (value, dtype), (out, dtype)]
            tensors += [(query, dtype), (key, dtype), (value, dtype)]
        return OpCost(flops, _bytes(tensors), dtype)
    return None


def _convolution(dims: Sequence[Dims], types: Sequence[str], concrete: Sequence[str]) -> OpCost:
    """`aten::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)`."""
    x, weight = dims[0], dims[1]
    stride, padding, dilation = (concrete_ints(concrete[i]) for i in (3, 4, 5))
    transposed = concrete[6].strip() == "True"
    spatial = len(x) - 2
    stride, padding, dilation = (_spread(v, spatial) for v in (stride, padding, dilation))
    if transposed:
        output_padding = _spread(concrete_ints(concrete[7]), spatial)
        groups = int(concrete[8])
        out_channels = weight[1] * groups
        out = [
            (x[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (weight[2 + i] - 1) + output_padding[i] + 1
            for i in range(spatial)
        ]
    else:
        out_channels = weight[0]
        out = [conv_output_size(x[2 + i], weight[2 + i], stride[i], padding[i], dilation[i]) for i in range(spatial)]
    flops = conv_flops(x, weight, out, transposed=transposed)
    out_dims = [x[0], out_channels, *out]
    return OpCost(flops, _bytes([(x, types[0]), (weight, types[1]), (out_dims, types[0])]), types[0])


def _convolution_backward(dims: Sequence[Dims], types: Sequence[str], concrete: Sequence[str]) -> OpCost:
    """`aten::convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
    output_padding, groups, output_mask)`: the input's gradient and the weight's each cost the forward's FLOPs
    (the bias's, a sum, is not counted). The output's spatial dims are grad_output's."""
    grad_out, x, weight = dims[0], dims[1], dims[2]
    transposed = concrete[7].strip() == "True"
    mask = [part.strip() == "True" for part in concrete[10].strip().strip("[]").split(",")]
    if len(mask) < 2:
        raise ValueError(f"output_mask {concrete[10]!r}")
    forward = conv_flops(x, weight, grad_out[2:], transposed=transposed)
    tensors = [(grad_out, types[0]), (x, types[1]), (weight, types[2])]  # read
    tensors += [(x, types[1])] * mask[0] + [(weight, types[2])] * mask[1]  # written: the gradients asked for
    return OpCost(forward * (mask[0] + mask[1]), _bytes(tensors), types[0])


def _spread(values: list[int], spatial: int) -> list[int]:
    """A stride, padding or dilation given once for every spatial dimension (`[2]`) spread to each."""
    if len(values) == spatial:
        return values
    if len(values) == 1:
        return values * spatial
    raise ValueError(f"{values} for {spatial} spatial dimensions")
