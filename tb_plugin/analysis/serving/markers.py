"""What a serving engine writes about an iteration, read from the name of one annotation
or Python frame (pure functions of a string: no model).

Annotations (`record_function`, category `user_annotation`; their `gpu_user_annotation`
copies are not read, so nothing counts twice):

- vLLM's iteration annotation: `execute_context_{R}({T})_generation_{R}({T})`, context
  (prefill) and generation (decode) requests and tokens of the iteration.
- vLLM's detailed annotation (`detailed_trace_annotation`, vllm-project/vllm#37524):
  `execute_{T}_context_{R}(sq{T}sk{K}sqsq{..}sqsk{..})_generation_{R}(sq{T}sk{K}...)`:
  the iteration's scheduled tokens, then per group its requests and `sq` (the sum of its
  query tokens) and `sk` (of its KV lengths).
- vLLM's first one (vllm-project/vllm#22496): `execute_new_{N}_cached_{M}`, requests
  scheduled for the first time (prefill) and running ones (taken as decode: a chunked
  prefill that goes on is counted with them); no token counts.
- SGLang's step span: `step[{MODE} bs={B}]`, EXTEND adding `toks={T}`, and with roofline
  annotations (sgl-project/sglang#24911) `c_sq=`, `g_sq=` ... (`c=`, `g=` for MIXED).
- Not iterations, said so: graph captures (`capture_{B}_{MODE}`, vLLM's and SGLang's
  capture traces) and xDiT's diffusion requests (`execute_diffusion_{N}_{W}x{H}`).

Python frames (`with_stack=True`): vLLM v1's `execute_model` of its worker or model
runner, SGLang's `tp_worker.py: forward_batch_generation` (its model runner's
`forward_extend` / `forward_decode` / `forward_idle` inside it say the phase).
"""

from __future__ import annotations

import functools
import re

import msgspec
from msgspec.structs import replace

PHASES = ("prefill", "decode", "mixed", "idle", "unknown")

_VLLM_ITERATION = re.compile(r"^execute_context_(\d+)\((\d+)\)_generation_(\d+)\((\d+)\)$")
_VLLM_DETAILED = re.compile(
    r"^execute_(\d+)_context_(\d+)\(([a-z0-9]*)\)_generation_(\d+)\(([a-z0-9]*)\)$"
)
_GROUP_FIELDS = re.compile(r"^sq(\d+)sk(\d+)")
_VLLM_NEW_CACHED = re.compile(r"^execute_new_(\d+)_cached_(\d+)$")
_SGLANG_STEP = re.compile(r"^step\[([A-Z][A-Z0-9_]*)((?: [a-z_]+=\d+)*)\]$")
_CAPTURE = re.compile(r"^capture_(\d+)_([A-Z][A-Z0-9_]*)$")
_DIFFUSION = re.compile(r"^execute_diffusion_(\d+)_(\d+)x(\d+)$")
_VLLM_FRAME = re.compile(
    r"(?:^|/)vllm/(?:[\w.]+/)*[\w]*worker[\w]*/[\w]+\.py\(\d+\): execute_model$"
)
_SGLANG_FRAME = re.compile(
    r"(?:^|/)sglang/srt/managers/tp_worker\.py\(\d+\): forward_batch_generation$"
)
_SGLANG_FORWARD = re.compile(
    r"(?:^|/)sglang/srt/model_executor/model_runner\.py\(\d+\): "
    r"forward_(extend|split_prefill|decode|idle)$"
)
_SGLANG_MODES = {
    "EXTEND": "prefill",
    "SPLIT_PREFILL": "prefill",
    "DECODE": "decode",
    # Speculative decoding's steps produce output tokens of running requests.
    "TARGET_VERIFY": "decode",
    "DRAFT_EXTEND": "decode",
    "DRAFT_EXTEND_V2": "decode",
    "MIXED": "mixed",
    "IDLE": "idle",
}


class Marker(msgspec.Struct, frozen=True):
    """What one name says. `kind`: iteration, frame (an iteration's Python frame),
    capture or diffusion. Counts are None where the name does not give them."""

    kind: str
    engine: str
    dialect: str
    phase: str | None = None
    phase_from: str | None = None
    tokens: int | None = None
    requests: int | None = None
    context_requests: int | None = None
    context_tokens: int | None = None
    generation_requests: int | None = None
    generation_tokens: int | None = None
    batch: int | None = None  # a capture's batch size
    mode: str | None = None  # a capture's or an SGLang step's mode

    def merged(self, inner: Marker) -> Marker:
        """This (outer) marker with what an inner marker of the same iteration adds."""
        fields = {}
        for name in (
            "phase",
            "phase_from",
            "tokens",
            "requests",
            "context_requests",
            "context_tokens",
            "generation_requests",
            "generation_tokens",
            "mode",
        ):
            if getattr(self, name) is None and getattr(inner, name) is not None:
                fields[name] = getattr(inner, name)
        return replace(self, **fields) if fields else self


def phase_of_counts(context: int, generation: int) -> str:
    """prefill, decode, mixed or idle from how many context and generation requests (or
    tokens) an iteration carries."""
    if context and generation:
        return "mixed"
    if context:
        return "prefill"
    return "decode" if generation else "idle"


@functools.lru_cache(maxsize=1 << 16)
def parse(name: str) -> Marker | None:
    """The marker a name is, or None (kept per name: a trace repeats its markers' names,
    once an iteration)."""
    if name.startswith("execute_"):
        return _vllm(name) or _diffusion(name)
    if name.startswith("step["):
        return _sglang_step(name)
    if name.startswith("capture_"):
        m = _CAPTURE.match(name)
        if m:
            return Marker("capture", "", "capture", batch=int(m[1]), mode=m[2])
        return None
    return _frame(name) if name.endswith(("execute_model", "forward_batch_generation")) else None


def sglang_forward(name: str) -> str | None:
    """The function of an SGLang model-runner `forward_*` frame (`forward_decode` ...),
    whose phase is FORWARD_PHASES'; None for other names."""
    if not name.endswith(tuple(FORWARD_PHASES)):
        return None
    m = _SGLANG_FORWARD.search(name)
    return f"forward_{m[1]}" if m else None


FORWARD_PHASES = {
    "forward_extend": "prefill",  # SGLang runs a mixed batch as an extend too
    "forward_split_prefill": "prefill",
    "forward_decode": "decode",
    "forward_idle": "idle",
}


def is_marker_name(name: str) -> bool:
    """Whether a name is any marker (an iteration, its frame, a capture, a diffusion)."""
    return parse(name) is not None


def _vllm(name: str) -> Marker | None:
    m = _VLLM_ITERATION.match(name)
    if m:
        cr, ct, gr, gt = (int(x) for x in m.groups())
        return _counts("vllm_iteration", cr, ct, gr, gt, ct + gt)
    m = _VLLM_DETAILED.match(name)
    if m:
        ctx, gen = _GROUP_FIELDS.match(m[3]), _GROUP_FIELDS.match(m[5])
        return _counts(
            "vllm_detailed",
            int(m[2]),
            int(ctx[1]) if ctx else None,
            int(m[4]),
            int(gen[1]) if gen else None,
            int(m[1]),
        )
    m = _VLLM_NEW_CACHED.match(name)
    if m:
        new, cached = int(m[1]), int(m[2])
        phase = phase_of_counts(new, cached)
        said = (
            f"engine annotation: {new} new (prefill) and {cached} running (taken as "
            "decode) requests"
        )
        return Marker(
            "iteration",
            "vllm",
            "vllm_new_cached",
            phase,
            said,
            requests=new + cached,
            context_requests=new,
            generation_requests=cached,
        )
    return None


def _counts(
    dialect: str, cr: int, ct: int | None, gr: int, gt: int | None, tokens: int | None
) -> Marker:
    said = f"engine annotation: {cr} context (prefill) and {gr} generation (decode) requests"
    return Marker(
        "iteration",
        "vllm",
        dialect,
        phase_of_counts(cr, gr),
        said,
        tokens=tokens,
        requests=cr + gr,
        context_requests=cr,
        context_tokens=ct,
        generation_requests=gr,
        generation_tokens=gt,
    )


def _sglang_step(name: str) -> Marker | None:
    m = _SGLANG_STEP.match(name)
    if m is None:
        return None
    mode = m[1]
    fields = {k: int(v) for k, v in (f.split("=") for f in m[2].split())}
    bs = fields.get("bs")
    phase = _SGLANG_MODES.get(mode, "unknown")
    c_sq, g_sq = fields.get("c_sq"), fields.get("g_sq")
    ctx_req = gen_req = ctx_tok = gen_tok = None
    if phase == "prefill":
        ctx_req, ctx_tok = bs, fields.get("toks", c_sq)
    elif phase == "decode":
        # One query token per running request, unless the roofline fields say more
        # (speculative decoding verifies several).
        gen_req, gen_tok = bs, g_sq if g_sq is not None else bs
    elif phase == "mixed":
        ctx_req, gen_req, ctx_tok, gen_tok = fields.get("c"), fields.get("g"), c_sq, g_sq
    tokens = _sum(ctx_tok, gen_tok) if phase != "idle" else 0
    return Marker(
        "iteration",
        "sglang",
        "sglang_step",
        phase,
        f"SGLang step span: forward mode {mode}",
        tokens=tokens,
        requests=bs,
        context_requests=ctx_req,
        context_tokens=ctx_tok,
        generation_requests=gen_req,
        generation_tokens=gen_tok,
        mode=mode,
    )


def _sum(a: int | None, b: int | None) -> int | None:
    if a is None and b is None:
        return None
    return (a or 0) + (b or 0)


def _diffusion(name: str) -> Marker | None:
    m = _DIFFUSION.match(name)
    if m is None:
        return None
    return Marker("diffusion", "xdit", "diffusion", batch=int(m[1]), mode=f"{m[2]}x{m[3]}")


def _frame(name: str) -> Marker | None:
    if _VLLM_FRAME.search(name):
        return Marker("frame", "vllm", "vllm_frame")
    if _SGLANG_FRAME.search(name):
        return Marker("frame", "sglang", "sglang_frame")
    return None
