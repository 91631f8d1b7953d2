"""The kernel taxonomy: every family's real example names, the launching-op rule, unknowns,
and the pages agreeing on one classification (built traces and corpus traces per vendor)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from builders import TraceBuilder
from corpus import corpus_model
from kinetoscope.analysis.core.kernel_classes import kernel_classes
from kinetoscope.analysis.core.taxonomy import (
    MATRIX_NO,
    MATRIX_UNKNOWN,
    MATRIX_YES,
    WORKS,
    NamePattern,
    _foldable,
    classify_name,
    families,
    lowered_name,
    taxonomy_version,
)
from kinetoscope.analysis.kernels.view import kernels
from kinetoscope.analysis.overview.view import overview

FAMILY_EXAMPLES = [
    (family.id, vendor, name)
    for family in families()
    for vendor in (sorted(family.vendors - {"any"}) or ["unknown"])
    for name in family.examples
]


@pytest.mark.parametrize(("family", "vendor", "name"), FAMILY_EXAMPLES)
def test_every_example_belongs_to_its_family(family: str, vendor: str, name: str) -> None:
    assert classify_name(name, vendor).family == family


def test_every_family_has_examples_and_a_version() -> None:
    assert taxonomy_version() >= 1
    assert all(f.examples for f in families())
    ids = [f.id for f in families()]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(
    ("name", "collective"),
    [
        ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "all_gather"),
        ("void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*)", "all_to_all"),
        ("void vllm::cross_device_reduce_1stage<c10::BFloat16, 8>(vllm::RankData*)", "all_reduce"),
        (
            "void c10d::symmetric_memory::(anonymous namespace)::multimem_all_reduce_kernel"
            "<c10::BFloat16, 8>(c10::BFloat16*)",
            "all_reduce",
        ),
    ],
)
def test_communication_kernels_carry_their_collective(name: str, collective: str) -> None:
    cls = classify_name(name)
    assert (cls.work, cls.collective, cls.matrix_core) == ("communication", collective, MATRIX_NO)


def test_miopen_subtensorop_is_not_a_tensor_core_kernel() -> None:
    # the 2021 substring list matched `tensorop` inside MIOpen's elementwise kernels
    for vendor in ("amd", "unknown"):
        assert classify_name("SubTensorOpWithScalar1d", vendor).matrix_core == MATRIX_NO
        assert classify_name("SubTensorOpWithSubTensor2d", vendor).matrix_core == MATRIX_NO


def test_tensile_kernels_without_an_mfma_instruction_are_not_matrix_work() -> None:
    name = "Cijk_Ailk_Bljk_SB_MT64x64x8_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_GRVW1"
    assert classify_name(name, "amd").matrix_core == MATRIX_NO


@pytest.mark.parametrize("name", ["pe_exe", "dma_request", "my_custom_kernel", "kernel_A"])
def test_names_no_rule_knows_are_unknown(name: str) -> None:
    cls = classify_name(name)
    assert cls.family is None and cls.matrix_core == MATRIX_UNKNOWN and cls.work == "other"


# --- the launching op chain ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "collective"),
    [
        ("record_param_comms", None),
        ("_c10d_functional::all_reduce", "all_reduce"),
        ("c10d::allgather_", "all_gather"),
        ("vllm::all_reduce", "all_reduce"),
        ("symm_mem::multimem_all_reduce_", "all_reduce"),
    ],
)
def test_kernels_launched_inside_communication_ops(
    tmp_path: Path, op: str, collective: str | None
) -> None:
    t = TraceBuilder()
    t.step(1, 0, 1000)
    outer = t.op(op, 10, 100)
    # an annotation between the op and its launch does not hide the op
    t.annotation("## inner ##", 12, 50)
    t.launch(20, 5, outer, gpu_ts=200, gpu_dur=300, name="my_custom_kernel")
    mm = t.op("aten::mm", 200, 50)
    t.launch(210, 5, mm, gpu_ts=600, gpu_dur=100, name="another_kernel")
    model = t.model(tmp_path)
    classes = kernel_classes(model)
    names = model.names_of(classes.rows)
    comm = dict(zip(names, classes.comm.tolist()))
    assert comm == {"my_custom_kernel": True, "another_kernel": False}
    at = names.index("my_custom_kernel")
    assert classes.collective[at] == collective and bool(classes.via_op[at])
    view = overview(model)
    assert view["breakdown_us"]["communication"] == 300
    assert view["breakdown_us"]["kernel"] == 100
    rows = {r["name"]: r for r in kernels(model)["rows"]}
    assert rows["my_custom_kernel"]["work"] == "communication"
    assert rows["my_custom_kernel"]["tensor_cores_used"] is False
    assert rows["another_kernel"]["tensor_cores_used"] is None


def test_no_communication_op_no_op_tree(tmp_path: Path) -> None:
    """Without a communication op among the names, no launching chain holds one: the
    classes are the names' alone, and the op tree is not built for them (a one-GPU
    trace's Overview). With one elsewhere, the same kernels get the same classes."""

    def trace(with_comm_op: bool) -> TraceBuilder:
        t = TraceBuilder()
        t.step(1, 0, 1000)
        mm = t.op("aten::mm", 10, 100)
        t.launch(20, 5, mm, gpu_ts=200, gpu_dur=300, name="my_custom_kernel")
        t.launch(40, 5, mm, gpu_ts=600, gpu_dur=100, name=GEMM)
        if with_comm_op:
            t.op("c10d::allgather_", 400, 50)
        return t

    (tmp_path / "alone").mkdir()
    (tmp_path / "beside").mkdir()
    alone = trace(False).model(tmp_path / "alone")
    classes = kernel_classes(alone)
    assert "_op_tree" not in alone.__dict__
    assert not classes.via_op.any()
    beside = trace(True).model(tmp_path / "beside")
    with_tree = kernel_classes(beside)
    assert "_op_tree" in beside.__dict__
    assert alone.names_of(classes.rows) == beside.names_of(with_tree.rows)
    assert np.array_equal(classes.work, with_tree.work)
    assert np.array_equal(classes.matrix, with_tree.matrix)
    assert classes.collective == with_tree.collective and classes.family == with_tree.family


DEEPEP = "void deep_ep::internode::combine<false, 2, 4, 4, 8>(int4*, float*, bool const*)"
SYMM = "void c10d::symmetric_memory::multimem_all_reduce_kernel<float, 4>(float*)"
AR = "void vllm::cross_device_reduce_2stage<__nv_bfloat16, 8>(vllm::RankData*)"
GEMM = "nvjet_hsh_256x128_64x4_2x1_v_bz_coopB_NNT"


def test_overview_kernel_and_gpu_pages_agree(tmp_path: Path) -> None:
    """A 2025-style step: GEMM, DeepEP, symmetric-memory and custom all-reduce kernels.
    The Overview used to call all of it computation; Communication was 0."""
    t = TraceBuilder()
    t.header = {"schemaVersion": 1, "cupti_version": 24}
    t.step(1, 0, 2000)
    op = t.op("aten::mm", 10, 40)
    t.launch(12, 2, op, gpu_ts=100, gpu_dur=400, name=GEMM)
    for i, name in enumerate([DEEPEP, SYMM, AR]):
        other = t.op("my_ext::op", 60 + 20 * i, 10)
        t.launch(62 + 20 * i, 2, other, gpu_ts=600 + 200 * i, gpu_dur=100, name=name)
    model = t.model(tmp_path)
    view = overview(model)
    assert view["breakdown_us"]["communication"] == 300
    assert view["breakdown_us"]["kernel"] == 400
    (dev,) = view["devices"]
    assert dev["tensor_core_pct"] == pytest.approx(100 * 400 / 700, abs=0.01)
    assert dev["matrix_core_unknown_pct"] == 0.0
    assert dev["matrix_core_name"] == "Tensor Cores" and dev["vendor"] == "nvidia"
    kview = kernels(model)
    comm_total = sum(r["total_us"] for r in kview["rows"] if r["work"] == "communication")
    assert comm_total == view["breakdown_us"]["communication"]
    assert kview["tensor_core_time_us"] == 400 and kview["non_tensor_core_time_us"] == 300


# --- corpus traces per vendor --------------------------------------------------------------

MI300X = "tracelens/tests/traces/inference"


@pytest.mark.parametrize(
    "rel",
    [
        f"{MI300X}/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz",
        f"{MI300X}/vllm_prefilldecode_piecewise/graph_execution.json.gz",
        f"{MI300X}/xdit_sd_3.5/profile_trace_rank_0.json.gz",
    ],
)
def test_mi300x_serving_traces_use_mfma(rel: str) -> None:
    """Tensile `Cijk_..._MI16x16x1_...`, CK/ck_tile FMHA and Triton GEMM/attention
    kernels dominate these traces; the old list saw none of them."""
    view = overview(corpus_model(rel))
    (dev,) = view["devices"]
    assert dev["vendor"] == "amd" and dev["matrix_core_name"] == "Matrix cores (MFMA)"
    assert dev["tensor_core_pct"] is not None and dev["tensor_core_pct"] > 80
    assert dev["matrix_core_unknown_pct"] is not None and dev["matrix_core_unknown_pct"] < 1
    assert dev["achieved_occupancy_pct"] is None  # the trace gives none: unknown, not 0 %


def test_h100_trace_counts_hopper_gemm_and_flash_attention() -> None:
    model = corpus_model("tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")
    (dev,) = overview(model)["devices"]
    # sm90_xmma GEMMs (28.2 % of kernel time) + FlashAttention 2 (8.5 %)
    assert dev["tensor_core_pct"] == pytest.approx(36.4, abs=0.3)
    assert dev["name"] == "NVIDIA H100 80GB HBM3" and dev["vendor"] == "nvidia"
    classes = kernel_classes(model)
    assert int((classes.matrix == MATRIX_UNKNOWN).sum()) == 0
    assert int((classes.matrix == MATRIX_YES).sum()) > 0


def test_nccl_ranks_count_communication() -> None:
    model = corpus_model("hta/tests/data/trace_filter/sampled_rank-0.json.gz")
    view = overview(model)
    assert view["average_breakdown_us"]["communication"] > 0.2 * view["average_step_us"]


def test_mangled_cutlass_convolutions_with_tensor_op_layouts() -> None:
    """cuDNN's CUTLASS convolutions in the HTA `nccl_data` trace have mangled names whose
    operand layouts are tensor-op ones (`...TensorOpMultiplicand...`): matrix-core work.
    A generic substring of the elementwise family once called them "no"."""
    model = corpus_model("hta/tests/data/nccl_parser_config/nccl_data.json.gz")
    rows = [r for r in kernels(model)["rows"] if "ImplicitGemmConvolution" in r["name"]]
    assert len(rows) == 2 and all(r["tensor_cores_used"] is True for r in rows)


def test_rocm_paged_attention_named_for_mfma_is_matrix_core_work(tmp_path: Path) -> None:
    """vLLM/SGLang's ROCm `paged_attention_ll4mi_QKV_mfma16_kernel` names the MFMA
    instruction it is built on (20 % of an MI300X serving trace's kernel time); its
    partition-reduce sibling does no matrix work."""
    qkv = "paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16>(float*)"
    for vendor in ("amd", "unknown"):
        cls = classify_name(qkv, vendor)
        assert (cls.family, cls.work, cls.matrix_core) == (
            "amd_mfma_attention",
            "attention",
            MATRIX_YES,
        )
    reduce = "paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128>(float*)"
    assert classify_name(reduce, "amd").matrix_core != MATRIX_YES
    t = TraceBuilder()
    t.header = {"schemaVersion": 1, "roctracer_version": 4}
    t.step(1, 0, 2000)
    op = t.op("sgl_kernel::paged_attention", 10, 40)
    t.launch(12, 2, op, gpu_ts=100, gpu_dur=300, name=qkv)
    (row,) = kernels(t.model(tmp_path))["rows"]
    assert row["tensor_cores_used"] is True and row["work"] == "attention"


# --- version 4: attention is its own class on every vendor ---------------------------------


@pytest.mark.parametrize(
    ("name", "vendor", "matrix"),
    [
        # counted as GEMM before version 4 (Triton and Composable Kernel attention on AMD)
        ("kernel_unified_attention_2d", "amd", MATRIX_YES),
        ("attn_fwd", "amd", MATRIX_YES),
        ("_ZN7ck_tile6kentryILi256ELi2ENS_13FmhaFwdKernelINS_2", "amd", MATRIX_YES),
        ("_ZN5aiter24fmha_fwd_hd128_bf16_rtneE", "amd", MATRIX_YES),
        ("triton_tem_fused_flex_attention_0", "nvidia", MATRIX_YES),
        # FlashAttention on AMD (ROCm builds keep the names); the family was NVIDIA-only
        (
            "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>>(Flash_fwd_params)",
            "amd",
            MATRIX_YES,
        ),
        # the parts that do no matrix work, which the matrix-core patterns also match
        (
            "void cutlass::device_kernel<flash::FlashAttnFwdCombine<cute::C<8>>>(x)",
            "nvidia",
            MATRIX_NO,
        ),
        ("_ZN7ck_tile6kentryILi2ENS_22FmhaBwdOGradDotOKernelIN", "amd", MATRIX_NO),
        ("fmha_cutlassF_f32_aligned_64x64_rf_sm50(x)", "nvidia", MATRIX_NO),
    ],
)
def test_attention_is_attention_on_every_vendor(name: str, vendor: str, matrix: int) -> None:
    cls = classify_name(name, vendor)
    assert (cls.work, cls.matrix_core) == ("attention", matrix)


@pytest.mark.parametrize(
    ("name", "work"),
    [
        # `fill` inside a word is not a fill kernel
        ("void flashinfer::BatchPrefillWithPagedKVCacheKernel<T>(P)", "attention"),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>()",
            "other",
        ),
        ("void kernelPointwiseApply2<TensorMaskedFillOp<float, bool>, float, bool>(x)", "other"),
        # an Inductor pointwise kernel fused around an attention op is pointwise work
        ("triton_poi_fused__scaled_dot_product_flash_attention_cat_transpose_view_10", "other"),
    ],
)
def test_word_patterns_do_not_catch_other_kernels(name: str, work: str) -> None:
    for vendor in ("nvidia", "amd", "unknown"):
        assert classify_name(name, vendor).work == work


def test_rocm_flashinfer_prefill_is_not_a_fill_kernel() -> None:
    """Before version 4 the NVIDIA-only attention family left FlashInfer prefill on an AMD
    trace to the elementwise family's `fill` substring: `no` matrix cores, `other` work."""
    cls = classify_name("void flashinfer::BatchPrefillWithRaggedKVCacheKernel<T>(P)", "amd")
    assert (cls.family, cls.work, cls.matrix_core) == (
        "flashinfer_tensor_core_attention",
        "attention",
        MATRIX_YES,
    )


def test_every_work_class_is_drawn_by_the_serving_page() -> None:
    """The Serving page's class bars list the taxonomy's work classes by hand, each with a
    colour: a class added to the table must be added there too, or its time goes unseen."""
    source = (
        Path(__file__).resolve().parents[1] / "frontend/src/views/serving/model.ts"
    ).read_text()
    order = re.search(r"CLASS_ORDER = \[([^\]]*)\]", source)
    colours = re.search(r"CLASS_COLOR[^=]*= \{([^}]*)\}", source)
    assert order is not None and colours is not None
    assert set(re.findall(r"'(\w+)'", order.group(1))) == set(WORKS)
    assert set(re.findall(r"(\w+):", colours.group(1))) == set(WORKS)
    assert {f.work for f in families()} <= set(WORKS)


def _case_variants(name: str) -> list[str]:
    """The name, all capitals, case swapped, every other letter a capital, and with a
    character whose case folds outside ASCII (the Kelvin sign folds to `k`)."""
    mixed = "".join(c.upper() if i % 2 else c for i, c in enumerate(name))
    return [name, name.upper(), name.swapcase(), mixed, name + "\u212a", "\u212a" + name.lower()]


def test_patterns_search_a_lowered_name_as_they_search_any_case() -> None:
    """An ASCII name is searched lowercased by the patterns that allow it (`NamePattern`):
    every pattern of the table finds in every example name, in any case, what its
    case-insensitive search finds."""
    names = [v for f in families() for n in f.examples for v in _case_variants(n)]
    for family in families():
        for pattern in family.patterns:
            reference = re.compile(pattern.text, re.IGNORECASE)
            for name in names:
                expected = reference.search(name) is not None
                assert pattern.search(name, lowered_name(name)) is expected, (pattern.text, name)


@pytest.mark.parametrize(
    ("text", "name", "found"),
    [
        ("(?-i:^_splitK_reduce$)", "_splitK_reduce", True),  # case-sensitive in part
        ("(?-i:^_splitK_reduce$)", "_splitk_reduce", False),
        ("mori::moe::Ep(?:Dispatch|Combine)", "MORI::MOE::EPDISPATCH", True),  # capitals
        ("\\x4bernel", "KERNEL", True),  # an escape standing for a capital
        ("[^A-Z]gemm", "XGEMM", False),  # a class of capitals
        ("\\bgemm\\d", "sm80_XGEMM_1 GEMM2", True),
        ("^[!-_]+$", "ab", True),  # a range holding the capitals without naming one
        ("x[0-_]", "xa", True),
        ("[a-z0-9]gemm", "XGEMM", True),  # lowercase and digit ranges: lowered search
    ],
)
def test_a_pattern_that_case_could_change_is_searched_as_written(
    text: str, name: str, found: bool
) -> None:
    assert (re.search(text, name, re.IGNORECASE) is not None) is found
    assert NamePattern(text).search(name, lowered_name(name)) is found
    assert _foldable(text) is (text == "[a-z0-9]gemm" or text.startswith("\\b"))
