"""Built traces of the shape vLLM V1 records by default (0.10+): no iteration annotation,
its workers' `execute_model` Python frames, piecewise graphs (a graph launch per layer
piece, the attention op eager between them), eager sampling kernels, and an empty
`execute_model` that ends the profile. A CUDA (H100) and a ROCm (MI300X) kernel set, with
or without op shapes (`record_shapes=True`). Times in µs; every answer is worked out in
each builder's doc."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from builders import TraceBuilder
from test_serving import graph_launch

WORKER = "vllm/v1/worker/gpu_worker.py(212): execute_model"
RUNNER = "vllm/v1/worker/gpu_model_runner.py(1344): execute_model"
LAYERS = 4
DECODES = 9
REQUESTS = 32
PROMPT = 1000  # tokens a request
HIDDEN, VOCAB_SHARD, QKV = 4096, 32000, 6144
ITERATION_GAP = 100_000.0  # iterations start this far apart


@dataclass(frozen=True)
class Vendor:
    gemm: str
    attention: str  # launched in every iteration
    prefill_attention: str | None  # launched only by the prefill
    norm: str
    launch: str
    graph_launch: str


CUDA = Vendor(
    gemm="sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"
    "_execute_segment_k_off_kernel__5x_cublas",
    attention="void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90"
    "<flash::CollectiveMainloopFwdSm90<2>>>>(flash::FlashAttnFwdSm90<...>::Params)",
    prefill_attention=None,
    norm="void vllm::rms_norm_kernel<c10::BFloat16, 8, 4>(c10::BFloat16*, c10::BFloat16 const*,"
    " long, c10::BFloat16 const*, float, int, int)",
    launch="cudaLaunchKernel",
    graph_launch="cudaGraphLaunch",
)
ROCM = Vendor(
    gemm="Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1_SN_LDSB1_AFC1",
    attention="paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, "
    "(vllm::Fp8KVCacheDataType)0, 1, 128, 256, false, 4, 1, ck_tile::ComposedAttention<0u, "
    "false> >(__hip_bfloat16 const*, float*)",
    prefill_attention="_fwd_kernel",
    norm="void vllm::rms_norm_kernel<c10::BFloat16, 8, 4>(c10::BFloat16*)",
    launch="hipLaunchKernel",
    graph_launch="hipGraphLaunch",
)
SAMPLING = [
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float>"
    "(float*, float const*, int)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
    "at::native::ArgMaxOps<float>>>()",
]


class _Builder:
    def __init__(self, vendor: Vendor, shapes: bool) -> None:
        self.t = TraceBuilder()
        self.vendor = vendor
        self.shapes = shapes
        self.gpu_at = 0.0  # where the stream is free

    def kernel(self, at: float, name: str, dur: float, op: int | None = None) -> None:
        ext = op if op is not None else self.t.new_id()
        start = max(at + 5, self.gpu_at)
        self.t.launch(at, 2, ext, gpu_ts=start, gpu_dur=dur, name=name, runtime=self.vendor.launch)
        self.gpu_at = start + dur

    def graph(self, at: float, kernels: list[tuple[str, float]]) -> None:
        start = max(at + 5, self.gpu_at)
        timed = []
        for name, dur in kernels:
            timed.append((name, start, dur))
            start += dur
        graph_launch(self.t, at, timed, self.vendor.graph_launch)
        self.gpu_at = start

    def op(self, name: str, at: float, dur: float, dims: list[list[int]]) -> int:
        args: dict[str, Any] = {"Input Dims": dims} if self.shapes else {}
        return self.t.op(name, at, dur, **args)


def vllm_v1_trace(vendor: Vendor = CUDA, shapes: bool = True) -> TraceBuilder:
    """One prefill then DECODES decodes of REQUESTS requests, then an empty call.

    - the prefill (iteration 0, eager): per layer a QKV GEMM (4,000 µs), the attention
      (4,000; ROCm: the Triton `_fwd_kernel` 3,000 and `paged_attention_ll4mi` 1,000), an
      MLP GEMM (12,000); then the logits GEMM (400) and sampling (2 x 50): 80,500 µs of
      kernels; shapes: 32,000 tokens (the first GEMM's rows), 32 requests (the logits');
    - each decode: per layer a graph launch replaying a GEMM (1,200), a norm (50) and a
      GEMM (2,400), the attention eager between (300; ROCm: ll4mi); then one more graph
      (the last norm, 50), the logits (400) and sampling (2 x 50): 16,350 µs of kernels,
      14,650 of them replayed (89.6 %); GEMM time 14,800 against the prefill's 64,400
      (4.4x); shapes: the attention op's 32 query rows, the logits' 32;
    - the last call launches nothing: idle.
    Phases: prefill 1, decode 9, idle 1; tokens 32,000 and 9 x 32 with shapes."""
    b = _Builder(vendor, shapes)
    b.t.header["baseTimeNanoseconds"] = 1_700_000_000_000_000_000
    _prefill(b, 0.0)
    for k in range(1, DECODES + 1):
        _decode(b, k * ITERATION_GAP)
    end = (DECODES + 1) * ITERATION_GAP
    b.t.python(WORKER, end, 140)
    b.t.python(RUNNER, end + 5, 130)
    return b.t


def _frames(b: _Builder, at: float, dur: float) -> None:
    b.t.python(WORKER, at, dur)
    b.t.python(RUNNER, at + 5, dur - 10)


def _prefill(b: _Builder, at: float) -> None:
    tokens = REQUESTS * PROMPT
    _frames(b, at, 2000)
    t = at + 20
    for _ in range(LAYERS):
        qkv = b.op("aten::mm", t, 10, [[tokens, HIDDEN], [HIDDEN, QKV]])
        b.kernel(t + 1, b.vendor.gemm, 4000, qkv)
        att = b.op("vllm::unified_attention_with_output", t + 20, 10, [[tokens, 32, 128]])
        if b.vendor.prefill_attention:
            b.kernel(t + 21, b.vendor.prefill_attention, 3000, att)
            b.kernel(t + 25, b.vendor.attention, 1000, att)
        else:
            b.kernel(t + 21, b.vendor.attention, 4000, att)
        mlp = b.op("aten::mm", t + 40, 10, [[tokens, HIDDEN], [HIDDEN, 2 * HIDDEN]])
        b.kernel(t + 41, b.vendor.gemm, 12000, mlp)
        t += 60
    _logits(b, t)


def _decode(b: _Builder, at: float) -> None:
    _frames(b, at, 1500)
    t = at + 20
    for _ in range(LAYERS):
        b.graph(t, [(b.vendor.gemm, 1200), (b.vendor.norm, 50), (b.vendor.gemm, 2400)])
        att = b.op("vllm::unified_attention_with_output", t + 10, 10, [[REQUESTS, 32, 128]])
        b.kernel(t + 11, b.vendor.attention, 300, att)
        t += 40
    b.graph(t, [(b.vendor.norm, 50)])
    _logits(b, t + 10)


def _logits(b: _Builder, at: float) -> None:
    logits = b.op("aten::linear", at, 10, [[REQUESTS, HIDDEN], [VOCAB_SHARD, HIDDEN]])
    b.kernel(at + 1, b.vendor.gemm, 400, logits)
    for j, name in enumerate(SAMPLING):
        b.kernel(at + 20 + j, name, 50)
