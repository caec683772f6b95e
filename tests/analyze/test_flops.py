"""FLOP formulas against counts worked out by hand (issue 31), and the trace arguments they are read from: the
argument lists below are those torch 2.13's profiler recorded (`record_shapes=True`) for these calls."""

from __future__ import annotations

import pytest

from reportgen.analyze.flops import (
    OpCost,
    attention_backward_flops,
    attention_flops,
    conv_flops,
    conv_output_size,
    matmul_flops,
    op_cost,
)


def test_a_matrix_product_is_two_flops_per_multiply_add() -> None:
    assert matmul_flops([64, 32], [32, 10]) == 2 * 64 * 32 * 10 == 40_960
    assert matmul_flops([8, 64, 32], [8, 32, 16]) == 8 * 2 * 64 * 32 * 16 == 524_288  # batched: per batch element
    with pytest.raises(ValueError, match="not a matrix product"):
        matmul_flops([4, 5], [4, 5])


def test_mm_addmm_and_bmm_from_their_trace_arguments() -> None:
    # a (4, 5) @ (5, 4) product: 4 x 4 outputs of 5 multiply-adds; reads 20 + 20 floats, writes 16
    assert op_cost("aten::mm", [[4, 5], [5, 4]], ["float", "float"], ["", ""]) == OpCost(
        160, (20 + 20 + 16) * 4, "float"
    )
    # Linear(5, 3) on (4, 5): the bias is not counted
    cost = op_cost("aten::addmm", [[3], [4, 5], [5, 3], [], []], ["float"] * 3 + ["Scalar"] * 2, ["", "", "", "1", "1"])
    assert cost == OpCost(2 * 4 * 5 * 3, (20 + 15 + 12) * 4, "float")
    cost = op_cost("aten::bmm", [[2, 10, 16], [2, 16, 20]], ["c10::BFloat16"] * 2, ["", ""])
    assert cost == OpCost(2 * 2 * 10 * 16 * 20, (320 + 640 + 400) * 2, "c10::BFloat16")


def test_a_convolution_counts_its_output_elements_times_the_taps_each_one_sums() -> None:
    # (8, 3, 32, 32) * (16, 3, 3, 3), padding 1: 8 x 16 x 32 x 32 outputs of 3 x 9 = 27 multiply-adds
    assert conv_flops([8, 3, 32, 32], [16, 3, 3, 3], [32, 32]) == 2 * 8 * 16 * 1024 * 27 == 7_077_888
    # groups 4, stride 2, padding 1, dilation 2 on 17 x 17: (17 + 2 - 2 * 2 - 1) // 2 + 1 = 8 per side;
    # each output sums 32 / 4 = 8 channels x 9 taps = 72 multiply-adds; 2 x 64 x 8 x 8 = 8192 outputs
    assert conv_output_size(17, 3, stride=2, padding=1, dilation=2) == 8
    assert conv_flops([2, 32, 17, 17], [64, 8, 3, 3], [8, 8]) == 2 * 8192 * 72 == 1_179_648
    # depthwise (groups = channels): one channel x 9 taps per output
    assert conv_flops([1, 32, 10, 10], [32, 1, 3, 3], [10, 10]) == 2 * 32 * 100 * 9
    # transposed: each of 4 x 25 input elements is scattered to 2 channels x 9 taps
    assert conv_flops([1, 4, 5, 5], [4, 2, 3, 3], [10, 10], transposed=True) == 2 * 100 * 18 == 3_600


def test_convolutions_from_their_trace_arguments() -> None:
    types = ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]
    dims: list[list[int]] = [[2, 3, 16, 16], [8, 3, 3, 3], [], [], [], [], [], [], []]
    # stride 2, padding 1: 8 x 8 outputs per channel, 2 x 8 x 64 of them, 27 multiply-adds each
    cost = op_cost("aten::convolution", dims, types, ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"])
    assert cost == OpCost(2 * 2 * 8 * 64 * 27, (2 * 3 * 256 + 8 * 27 + 2 * 8 * 64) * 4, "float")
    # transposed, stride 2, padding 1, output padding 1, groups 2: (5 - 1) * 2 - 2 + 2 + 1 + 1 = 10 per side
    dims = [[1, 4, 5, 5], [4, 1, 3, 3], [], [], [], [], [], [], []]
    cost = op_cost("aten::convolution", dims, types, ["", "", "", "[2]", "[1]", "[1]", "True", "[1]", "2"])
    assert cost is not None and cost.flops == 2 * 100 * 1 * 9
    assert cost.bytes == (100 + 36 + 1 * 2 * 10 * 10) * 4  # output: 1 x (1 x 2 groups) x 10 x 10


def test_a_convolutions_backward_costs_the_forward_once_per_gradient_asked_for() -> None:
    dims: list[list[int]] = [[2, 8, 8, 8], [2, 3, 16, 16], [8, 3, 3, 3], [], [], [], [], [], [], [], []]
    types = ["float"] * 3 + ["ScalarList"] * 4 + ["Scalar", "ScalarList", "Scalar", "ScalarList"]
    concrete = ["", "", "", "[0]", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"]
    forward = 2 * 2 * 8 * 64 * 27
    both = op_cost("aten::convolution_backward", dims, types, concrete)
    assert both is not None and both.flops == 2 * forward
    assert both.bytes == (2 * 8 * 64 + 2 * 3 * 256 + 216 + 2 * 3 * 256 + 216) * 4  # reads 3, writes 2 gradients
    concrete[-1] = "[False, True, False]"  # (a first layer: no input gradient)
    weight_only = op_cost("aten::convolution_backward", dims, types, concrete)
    assert weight_only is not None and weight_only.flops == forward


def test_attention_counts_two_products_forward_and_four_backward() -> None:
    # (2, 8, 128, 64): Q K^T and P V are each 16 x 128 x 128 x 64 multiply-adds
    assert attention_flops([2, 8, 128, 64], [2, 8, 128, 64], [2, 8, 128, 64]) == 2 * 2 * 16 * 128 * 128 * 64
    # cross-attention, B H 2, S_q 10, S_k 20, D_qk 16, D_v 32: 2 FLOPs x 2 x 10 x 20 x (16 + 32)
    assert attention_flops([1, 2, 10, 16], [1, 2, 20, 16], [1, 2, 20, 32]) == 38_400
    assert attention_backward_flops([1, 2, 10, 16], [1, 2, 20, 16], [1, 2, 20, 32]) == 76_800
    q, k, v = [1, 2, 10, 16], [1, 2, 20, 16], [1, 2, 20, 32]
    forward = op_cost("aten::_scaled_dot_product_flash_attention", [q, k, v, [], []], ["c10::Half"] * 3 + ["", ""], [])
    assert forward == OpCost(38_400, (320 + 640 + 1280 + 640) * 2, "c10::Half")
    backward = op_cost(
        "aten::_scaled_dot_product_efficient_attention_backward", [[1, 2, 10, 32], q, k, v], ["c10::Half"] * 4, []
    )
    assert backward == OpCost(76_800, (640 + 320 + 640 + 1280 + 640 + 320 + 640 + 1280) * 2, "c10::Half")


def test_ops_without_a_formula_are_not_counted_and_a_malformed_one_says_so() -> None:
    assert op_cost("aten::add", [[4], [4]], ["float", "float"], ["", ""]) is None
    assert (
        op_cost("aten::_convolution", [[2, 3, 16, 16], [8, 3, 3, 3]], ["float"] * 2, []) is None
    )  # (its parent counts)
    with pytest.raises(ValueError):
        op_cost("aten::mm", [[4, 5], [4, 5]], ["float", "float"], ["", ""])
    assert op_cost("aten::mm", [[4, 5], [5, 4]], ["c10::Float4"] * 2, ["", ""]) == OpCost(160, None, "c10::Float4")
