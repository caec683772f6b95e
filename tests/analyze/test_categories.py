"""Tests of reportgen.analyze.categories: the rule table on real kernel and op names."""

from __future__ import annotations

import pytest

from reportgen.analyze.categories import RULES, categorize, is_compute
from reportgen.bundle import CATEGORY_ORDER, seed_category
from reportgen.formats.trace import load_trace
from tests.data import H100_FIXTURE

__all__: list[str] = []

FIXTURE = H100_FIXTURE

# (name, Kineto cat, device, expected category). GPU names are from the H100 fixture unless marked.
CASES: list[tuple[str, str, str, str]] = [
    ("triton_poi_fused_add_copy__240", "kernel", "cuda", "triton_pointwise"),
    ("triton_red_fused__native_batch_norm_legit_functional_0", "kernel", "cuda", "triton_reduction"),
    ("triton_per_fused_mean_1", "kernel", "cuda", "triton_persistent_reduction"),
    ("triton_tem_fused_mm_0", "kernel", "cuda", "triton_template"),  # field facts
    ("triton_for_fused_0", "kernel", "cuda", "triton_foreach"),  # field facts
    ("triton_spl_fused_cumsum_0", "kernel", "cuda", "triton_split_scan"),  # field facts
    ("triton_unk_fused_0", "kernel", "cuda", "triton_other"),  # field facts
    ("triton_", "kernel", "cuda", "triton_other"),  # unique_kernel_names off (torch < 2.6)
    ("Memcpy DtoD (Device -> Device)", "gpu_memcpy", "cuda", "memcpy"),
    ("Memset (Device)", "gpu_memset", "cuda", "memset"),
    ("Memcpy HtoD (Pageable -> Device)", "kernel", "cuda", "memcpy"),  # by name alone
    ("dgrad2d_c1_k1_nhwc_specialized", "kernel", "cuda", "conv"),
    ("conv2d_c1_k1_nhwc_specialized", "kernel", "cuda", "conv"),
    ("wgrad2d_c1_k1_nhwc_reduce", "kernel", "cuda", "conv"),
    ("wgrad2d_shmem_tiling", "kernel", "cuda", "conv"),
    (
        "void cudnn::cnn::conv2d_grouped_direct_kernel<false, true, false, true, false, false, 0, 0, int, float, "
        "__half, __half, __half, float, __half>(cudnn::cnn::GroupedDirectFpropParams, __half const*, "
        "__half const*, __half*, float, float, float const*, float const*, __half const*, __half const*, "
        "cudnnActivationStruct)",
        "kernel",
        "cuda",
        "conv",
    ),
    (
        "sm80_xmma_wgrad_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize64x64x64_stage4_"
        "warpsize1x1x4_g16_tensor16x8x16_execute_kernel__5x_cudnn",
        "kernel",
        "cuda",
        "conv",
    ),
    (
        "sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_warpgroupsize1x1x1_g1_"
        "execute_segment_k_off_kernel__5x_cudnn",
        "kernel",
        "cuda",
        "conv",
    ),
    (
        "sm90_xmma_depthwise_convolution_wgrad_tiling_f16f16_f32f32_f32_nhwckrsc_nhwc_tilesize1x8x8_1x3x3_1x1x1_"
        "1x1x1_stage4_warpsize4x1x1_g32_betaTrue_execute_kernel__5x_cudnn",
        "kernel",
        "cuda",
        "conv",
    ),
    (
        "void tensorTransformGeneric<__half, __half, float, true, false, false, (cudnnKernelDataType_t)0>"
        "(cudnnTensorTransformStruct, tensorTransformParams, int, unsigned long, __half const*, __half*, "
        "float, float)",
        "kernel",
        "cuda",
        "conv",
    ),
    (
        "void cutlass__5x_cudnn::Kernel<cutlass_tensorop_f16_s16816dgrad_optimized_f16_128x128_32x5_nhwc_"
        "unity_stride_align8>(cutlass_tensorop_f16_s16816dgrad_optimized_f16_128x128_32x5_nhwc_unity_stride_"
        "align8::Params)",
        "kernel",
        "cuda",
        "conv",
    ),
    (
        "void implicit_convolve_sgemm<__half, __half, 1024, 5, 5, 3, 3, 3, 1, false, true, true>(int, int, int, "
        "__half const*, int, __half*, __half const*, kernel_conv_params, unsigned long long, int, float, float, "
        "int, __half const*, __half const*, bool, bool, int, int)",
        "kernel",
        "cuda",
        "conv",
    ),
    (
        "void xmma__5x_cudnn::implicit_gemm::strided_dgrad_indexed::kernel_helper_stage_0<xmma__5x_cudnn::"
        "implicit_gemm::strided_dgrad_indexed::Params_pre_hopper>(xmma__5x_cudnn::implicit_gemm::"
        "strided_dgrad_indexed::Params_pre_hopper)",
        "kernel",
        "cuda",
        "conv",
    ),
    ("nvjet_sm90_hsh_96x384_64x3_1x2_h_bz_coopA_TNN", "kernel", "cuda", "extern_gemm"),
    ("nvjet_sm90_hsh_24x64_64x16_4x1_v_bz_bias_TNN", "kernel", "cuda", "extern_gemm"),
    (
        "void cutlass::Kernel2<cutlass_80_tensorop_f16_s16816gemm_f16_64x64_32x6_nt_align2>(cutlass_80_tensorop_"
        "f16_s16816gemm_f16_64x64_32x6_nt_align2::Params)",
        "kernel",
        "cuda",
        "extern_gemm",
    ),
    (
        "void cutlass::Kernel2<cutlass_80_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_nn_align2>(cutlass_80_"
        "wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_nn_align2::Params)",
        "kernel",
        "cuda",
        "extern_gemm",
    ),
    (
        "void cublasLt::splitKreduce_kernel<32, 16, int, __half, __half, float, __half, false, __half, __half, "
        "__half, true, false, false, false>(cublasLt::cublasSplitKParams<float>, __half const*)",
        "kernel",
        "cuda",
        "extern_gemm",
    ),
    (
        "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
        "kernel__5x_cublas",
        "kernel",
        "cuda",
        "extern_gemm",
    ),  # cuBLAS on H100
    ("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", "kernel", "cuda", "extern_gemm"),  # A100
    (
        "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>(float)",
        "kernel",
        "cuda",
        "extern_gemm",
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*,"
        " 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
        "kernel",
        "cuda",
        "aten_native",
    ),
    (
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
        "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}"
        ">, unsigned int, float, 4, 4> >(at::native::ReduceOp<float>)",
        "kernel",
        "cuda",
        "aten_native",
    ),
    ("void at_cuda_detail::cub::DeviceRadixSortOnesweepKernel<int>(int)", "kernel", "cuda", "aten_native"),
    (
        "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
        "cutlass::half_t> >(Flash_fwd_params)",
        "kernel",
        "cuda",
        "attention",
    ),
    (
        "fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::half_t, "
        "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
        "kernel",
        "cuda",
        "attention",
    ),
    ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "kernel", "cuda", "collective"),
    ("some_custom_kernel", "kernel", "cuda", "other"),
    # CPU ops (device "cpu")
    ("graph_0_cpp_fused_add_mul_0", "cpu_op", "cpu", "cpp_fused"),
    ("cpp_fused_add_mul_0", "cpu_op", "cpu", "cpp_fused"),
    ("graph_0_gemm_m16n16k16_kernel", "cpu_op", "cpu", "cpp_template"),
    ("graph_3_bmm_m32n64k16_kernel", "cpu_op", "cpu", "cpp_template"),
    ("graph_12_cpp_fused__native_batch_norm_legit_no_training_relu_3", "cpu_op", "cpu", "cpp_fused"),
    ("aten::mm", "cpu_op", "cpu", "extern_gemm"),
    ("aten::addmm", "cpu_op", "cpu", "extern_gemm"),
    ("aten::bmm", "cpu_op", "cpu", "extern_gemm"),
    ("aten::linear", "cpu_op", "cpu", "extern_gemm"),
    ("mkldnn::_linear_pointwise", "cpu_op", "cpu", "extern_gemm"),
    ("aten::convolution", "cpu_op", "cpu", "conv"),
    ("aten::_convolution", "cpu_op", "cpu", "conv"),
    ("aten::mkldnn_convolution", "cpu_op", "cpu", "conv"),
    ("aten::convolution_backward", "cpu_op", "cpu", "conv"),
    ("mkldnn::_convolution_pointwise", "cpu_op", "cpu", "conv"),
    ("aten::_convert_indices_from_coo_to_csr", "cpu_op", "cpu", "aten_native"),
    ("aten::add", "cpu_op", "cpu", "aten_native"),
    ("aten::mm_backward_not_an_op", "cpu_op", "cpu", "aten_native"),
    ("TorchDynamo Cache Lookup", "cpu_op", "cpu", "other"),
    ("triton_poi_fused_add_0", "cpu_op", "cpu", "other"),  # GPU rules never apply to CPU ops
]


@pytest.mark.parametrize(("name", "cat", "device", "expected"), CASES, ids=[case[0][:60] for case in CASES])
def test_categorize(name: str, cat: str, device: str, expected: str) -> None:
    assert categorize(name, cat, device) == expected


def test_enough_real_cases() -> None:
    assert len(CASES) >= 30
    assert {expected for *_, expected in CASES} == set(CATEGORY_ORDER)


def test_rules_are_documented_and_known() -> None:
    for rule in RULES:
        assert rule.category in CATEGORY_ORDER
        assert rule.description
        assert rule.device in ("cuda", "cpu")
    assert len(set(CATEGORY_ORDER)) == len(CATEGORY_ORDER)


def test_unknown_device() -> None:
    with pytest.raises(ValueError, match=r"^unknown device 'xpu', expected 'cuda' or 'cpu'$"):
        categorize("triton_poi_fused_add_0", "kernel", "xpu")


@pytest.mark.parametrize(
    ("category", "seed"),
    [
        ("triton_pointwise", "pointwise"),
        ("triton_reduction", "reduction"),
        ("triton_persistent_reduction", "persistent_reduction"),
        ("triton_template", "other"),
        ("triton_other", "other"),
        ("extern_gemm", "other"),
        ("conv", "other"),
        ("memcpy", "other"),
        ("cpp_fused", "other"),
        ("cpp_template", "other"),
        ("other", "other"),
    ],
)
def test_seed_category(category: str, seed: str) -> None:
    assert seed_category(category) == seed


def test_seed_category_unknown() -> None:
    with pytest.raises(ValueError, match=r"^unknown category 'pointwise'$"):
        seed_category("pointwise")


def test_fixture_kernels_all_land_in_a_known_bucket() -> None:
    """Every non-Triton kernel of the H100 run is a cuDNN conv, a cuBLAS GEMM, ATen, or a copy/fill."""
    path = FIXTURE / "trace.json.gz"
    assert path.is_file(), f"missing test fixture {path} (shared/ must sit beside the repository)"
    seen: dict[str, str] = {}
    for event in load_trace(path).events:
        if event.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            seen[event["name"]] = categorize(event["name"], event["cat"], "cuda")
    triton = {"poi": "triton_pointwise", "red": "triton_reduction", "per": "triton_persistent_reduction"}
    by_category: dict[str, int] = {}
    for name, category in seen.items():
        if name.startswith("triton_"):
            assert category == triton[name[7:10]], name
        by_category[category] = by_category.get(category, 0) + 1
    assert by_category == {
        "triton_pointwise": 339,
        "triton_reduction": 120,
        "triton_persistent_reduction": 46,
        "conv": 76,
        "extern_gemm": 51,
        "aten_native": 7,
        "memcpy": 1,
        "memset": 1,
    }


@pytest.mark.parametrize(
    ("name", "cat", "device", "expected"),
    [
        ("sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc", "kernel", "cuda", True),
        ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "kernel", "cuda", True),
        ("pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128>>", "kernel", "cuda", True),
        ("triton_tem_fused_mm_0", "kernel", "cuda", True),
        # cuDNN's layout transforms are categorised conv but move bytes only
        ("void tensorTransformGeneric<__half, __half, float, true, false, false>", "kernel", "cuda", False),
        ("void nchwToNhwcKernel<__half, __half, float, true, false>", "kernel", "cuda", False),
        ("void at::native::elementwise_kernel<128, 4>", "kernel", "cuda", False),
        ("Memset (Device)", "gpu_memset", "cuda", False),
        ("triton_poi_fused_add_0", "kernel", "cuda", False),
        ("aten::addmm", "cpu_op", "cpu", True),
        ("aten::copy_", "cpu_op", "cpu", False),
    ],
)
def test_only_kernels_that_do_an_ops_arithmetic_are_compute(name: str, cat: str, device: str, expected: bool) -> None:
    assert is_compute(name, cat, device) is expected  # type: ignore[arg-type]
