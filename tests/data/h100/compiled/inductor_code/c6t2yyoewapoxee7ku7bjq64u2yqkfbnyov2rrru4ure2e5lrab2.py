# AOT ID: ['0_backward']
from ctypes import c_void_p, c_long, c_int
import torch
import math
import random
import os
import tempfile
from math import inf, nan
from cmath import nanj
from torch._inductor.hooks import run_intermediate_hooks
from torch._inductor.utils import maybe_profile
from torch._inductor.codegen.memory_planning import _align as align
from torch import device, empty_strided
from torch._inductor.async_compile import AsyncCompile
from torch._inductor.select_algorithm import extern_kernels
import triton
import triton.language as tl
from torch._inductor.runtime.triton_heuristics import start_graph, end_graph
from torch._C import _cuda_getCurrentRawStream as get_raw_stream

aten = torch.ops.aten
inductor_ops = torch.ops.inductor
_quantized = torch.ops._quantized
assert_size_stride = torch._C._dynamo.guards.assert_size_stride
assert_alignment = torch._C._dynamo.guards.assert_alignment
empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu
empty_strided_cpu_pinned = torch._C._dynamo.guards._empty_strided_cpu_pinned
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
empty_strided_xpu = torch._C._dynamo.guards._empty_strided_xpu
empty_strided_mtia = torch._C._dynamo.guards._empty_strided_mtia
reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor
alloc_from_pool = torch.ops.inductor._alloc_from_pool
async_compile = AsyncCompile()
empty_strided_p2p = torch._C._distributed_c10d._SymmetricMemory.empty_strided_p2p


# kernel path: /tmp/ind/fe/cfemy6tkugbo2dn3mfmit6eagz7sqhj6d35x7xsbzbfa2l2lnv6m.py
# Topologically Sorted Source Nodes: [view_17, convert_element_type_29, linear_2, gelu, mul_8, mul_9, mul_10, exp, mul_11, mul_12, add_8, mul_13, convert_element_type_31], Original ATen: [aten.view, aten.gelu_backward, aten.gelu]
# Source node to ATen node mapping:
#   add_8 => add_8
#   convert_element_type_29 => convert_element_type_29
#   convert_element_type_31 => convert_element_type_31
#   exp => exp
#   gelu => add_5, convert_element_type_13, erf, mul_5
#   linear_2 => view_7
#   mul_10 => mul_10
#   mul_11 => mul_11
#   mul_12 => mul_12
#   mul_13 => mul_13
#   mul_8 => mul_8
#   mul_9 => mul_9
#   view_17 => view_17
# Graph fragment:
#   %mm_2 : Tensor "bf16[1024, 2048][2048, 1]cuda:0" = PlaceHolder[target=mm_2]
#   %addmm_2 : Tensor "bf16[1024, 2048][2048, 1]cuda:0" = PlaceHolder[target=addmm_2]
#   %view_17 : Tensor "bf16[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_2, [4, 256, 2048]), kwargs = {})
#   %convert_element_type_29 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_17, torch.float32), kwargs = {})
#   %view_7 : Tensor "bf16[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%addmm_2, [4, 256, 2048]), kwargs = {})
#   %convert_element_type_13 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_7, torch.float32), kwargs = {})
#   %mul_5 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_13, 0.7071067811865476), kwargs = {})
#   %erf : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.erf.default](args = (%mul_5,), kwargs = {})
#   %add_5 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%erf, 1), kwargs = {})
#   %mul_8 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%add_5, 0.5), kwargs = {})
#   %mul_9 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_13, %convert_element_type_13), kwargs = {})
#   %mul_10 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_9, -0.5), kwargs = {})
#   %exp : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.exp.default](args = (%mul_10,), kwargs = {})
#   %mul_11 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%exp, 0.3989422804014327), kwargs = {})
#   %mul_12 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_13, %mul_11), kwargs = {})
#   %add_8 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_8, %mul_12), kwargs = {})
#   %mul_13 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_29, %add_8), kwargs = {})
#   %convert_element_type_31 : Tensor "bf16[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%mul_13, torch.bfloat16), kwargs = {})
#   return %convert_element_type_31
triton_poi_fused_gelu_gelu_backward_view_0 = async_compile.triton('triton_poi_fused_gelu_gelu_backward_view_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 2097152}, 
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*bf16', 'in_ptr0': '*bf16', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_gelu_gelu_backward_view_0', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 2, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 16777216}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_gelu_gelu_backward_view_0(in_out_ptr0, in_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 2097152
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp0 = tl.load(in_out_ptr0 + (x0), None).to(tl.float32)
    tmp2 = tl.load(in_ptr0 + (x0), None).to(tl.float32)
    tmp1 = tmp0.to(tl.float32)
    tmp3 = tmp2.to(tl.float32)
    tmp4 = tl.full([1], 0.7071067811865476, tl.float32)
    tmp5 = tmp3 * tmp4
    tmp6 = libdevice.erf(tmp5)
    tmp7 = tl.full([1], 1.0, tl.float32)
    tmp8 = tmp6 + tmp7
    tmp9 = tl.full([1], 0.5, tl.float32)
    tmp10 = tmp8 * tmp9
    tmp11 = tmp3 * tmp3
    tmp12 = tl.full([1], -0.5, tl.float32)
    tmp13 = tmp11 * tmp12
    tmp14 = libdevice.exp(tmp13)
    tmp15 = tl.full([1], 0.3989422804014327, tl.float32)
    tmp16 = tmp14 * tmp15
    tmp17 = tmp3 * tmp16
    tmp18 = tmp10 + tmp17
    tmp19 = tmp1 * tmp18
    tmp20 = tmp19.to(tl.float32)
    tl.store(in_out_ptr0 + (x0), tmp20, None)
''', device_str='cuda')


# kernel path: /tmp/ind/nj/cnjbwpsfpaibucxg3nfknf54fdhqm46wz64r7nfo3nrb4ivffb7c.py
# Topologically Sorted Source Nodes: [view_14, view_20, convert_element_type_36, convert_element_type_38, mul_15, mul_16, sum_4, linear_1, x, layer_norm_1, mul_17, sum_5, mul_18, sub_3, sub_4, div, mul_19, convert_element_type_40, add_9], Original ATen: [aten.view, aten.native_layer_norm_backward, aten.add, aten.native_layer_norm]
# Source node to ATen node mapping:
#   add_9 => add_9
#   convert_element_type_36 => convert_element_type_36
#   convert_element_type_38 => convert_element_type_38
#   convert_element_type_40 => convert_element_type_40
#   div => div
#   layer_norm_1 => convert_element_type_8, mul_2, sub_1
#   linear_1 => view_5
#   mul_15 => mul_15
#   mul_16 => mul_16
#   mul_17 => mul_17
#   mul_18 => mul_18
#   mul_19 => mul_19
#   sub_3 => sub_3
#   sub_4 => sub_4
#   sum_4 => sum_4
#   sum_5 => sum_5
#   view_14 => view_14
#   view_20 => view_20
#   x => add_2
# Graph fragment:
#   %mm_4 : Tensor "bf16[1024, 512][512, 1]cuda:0" = PlaceHolder[target=mm_4]
#   %primals_9 : Tensor "bf16[512][1]cuda:0" = PlaceHolder[target=primals_9]
#   %embedding : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0" = PlaceHolder[target=embedding]
#   %addmm_1 : Tensor "bf16[1024, 512][512, 1]cuda:0" = PlaceHolder[target=addmm_1]
#   %getitem_12 : Tensor "f32[4, 256, 1][256, 1, 1]cuda:0" = PlaceHolder[target=getitem_12]
#   %rsqrt_1 : Tensor "f32[4, 256, 1][256, 1, 1]cuda:0" = PlaceHolder[target=rsqrt_1]
#   %mm : Tensor "bf16[1024, 512][512, 1]cuda:0" = PlaceHolder[target=mm]
#   %sum_4 : Tensor "f32[4, 256, 1][256, 1, 1024]cuda:0" = PlaceHolder[target=sum_4]
#   %sum_5 : Tensor "f32[4, 256, 1][256, 1, 1024]cuda:0" = PlaceHolder[target=sum_5]
#   %view_14 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.reshape.default](args = (%mm, [4, 256, 512]), kwargs = {})
#   %view_20 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_4, [4, 256, 512]), kwargs = {})
#   %convert_element_type_36 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_20, torch.float32), kwargs = {})
#   %convert_element_type_38 : Tensor "f32[512][1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%primals_9, torch.float32), kwargs = {})
#   %mul_15 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_36, %convert_element_type_38), kwargs = {})
#   %mul_16 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_15, 512), kwargs = {})
#   %sum_4 : Tensor "f32[4, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_15, [2], True), kwargs = {})
#   %view_5 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%addmm_1, [4, 256, 512]), kwargs = {})
#   %add_2 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%embedding, %view_5), kwargs = {})
#   %convert_element_type_8 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%add_2, torch.float32), kwargs = {})
#   %sub_1 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%convert_element_type_8, %getitem_12), kwargs = {})
#   %mul_2 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_1, %rsqrt_1), kwargs = {})
#   %mul_17 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_15, %mul_2), kwargs = {})
#   %sum_5 : Tensor "f32[4, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_17, [2], True), kwargs = {})
#   %mul_18 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_2, %sum_5), kwargs = {})
#   %sub_3 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%mul_16, %sum_4), kwargs = {})
#   %sub_4 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%sub_3, %mul_18), kwargs = {})
#   %div : Tensor "f32[4, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%rsqrt_1, 512), kwargs = {})
#   %mul_19 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%div, %sub_4), kwargs = {})
#   %convert_element_type_40 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%mul_19, torch.bfloat16), kwargs = {})
#   %add_9 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.add.Tensor](args = (%view_14, %convert_element_type_40), kwargs = {})
#   return %sum_4,%sum_5,%add_9
triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_1 = async_compile.triton('triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_1', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 1024, 'r0_': 512},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*bf16', 'in_ptr2': '*bf16', 'in_ptr3': '*bf16', 'in_ptr4': '*fp32', 'in_ptr5': '*fp32', 'in_ptr6': '*bf16', 'out_ptr2': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]], (8,): [['tt.divisibility', 16]], (9,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_1', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 7, 'num_store': 1, 'num_reduction': 2, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 8192, 'r0_': 6292480}}
)
@triton.jit
def triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_1(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, in_ptr6, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 1024
    r0_numel = 512
    R0_BLOCK: tl.constexpr = 512
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 512*x0), xmask, other=0.0).to(tl.float32)
    tmp2 = tl.load(in_ptr1 + (r0_1), None, eviction_policy='evict_last').to(tl.float32)
    tmp9 = tl.load(in_ptr2 + (r0_1 + 512*x0), xmask, other=0.0).to(tl.float32)
    tmp10 = tl.load(in_ptr3 + (r0_1 + 512*x0), xmask, other=0.0).to(tl.float32)
    tmp13 = tl.load(in_ptr4 + (x0), xmask, eviction_policy='evict_last')
    tmp15 = tl.load(in_ptr5 + (x0), xmask, eviction_policy='evict_last')
    tmp22 = tl.load(in_ptr6 + (r0_1 + 512*x0), xmask, other=0.0).to(tl.float32)
    tmp1 = tmp0.to(tl.float32)
    tmp3 = tmp2.to(tl.float32)
    tmp4 = tmp1 * tmp3
    tmp5 = tl.broadcast_to(tmp4, [XBLOCK, R0_BLOCK])
    tmp7 = tl.where(xmask, tmp5, 0)
    tmp8 = tl.sum(tmp7, 1)[:, None].to(tl.float32)
    tmp11 = tmp9 + tmp10
    tmp12 = tmp11.to(tl.float32)
    tmp14 = tmp12 - tmp13
    tmp16 = tmp14 * tmp15
    tmp17 = tmp4 * tmp16
    tmp18 = tl.broadcast_to(tmp17, [XBLOCK, R0_BLOCK])
    tmp20 = tl.where(xmask, tmp18, 0)
    tmp21 = tl.sum(tmp20, 1)[:, None].to(tl.float32)
    tmp23 = tl.full([1, 1], 0.001953125, tl.float32)
    tmp24 = tmp15 * tmp23
    tmp25 = tl.full([1, 1], 512.0, tl.float32)
    tmp26 = tmp4 * tmp25
    tmp27 = tmp26 - tmp8
    tmp28 = tmp16 * tmp21
    tmp29 = tmp27 - tmp28
    tmp30 = tmp24 * tmp29
    tmp31 = tmp30.to(tl.float32)
    tmp32 = tmp22 + tmp31
    tl.store(out_ptr2 + (r0_1 + 512*x0), tmp32, xmask)
''', device_str='cuda')


# kernel path: /tmp/ind/ik/cikgeefpwxjcstgnvjfamqb4ykldocopjcxwq6gea546venho72u.py
# Topologically Sorted Source Nodes: [view_14, view_15, sum_2], Original ATen: [aten.view, aten.sum]
# Source node to ATen node mapping:
#   sum_2 => sum_2
#   view_14 => view_14
#   view_15 => view_15
# Graph fragment:
#   %mm : Tensor "bf16[1024, 512][512, 1]cuda:0" = PlaceHolder[target=mm]
#   %view_14 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.reshape.default](args = (%mm, [4, 256, 512]), kwargs = {})
#   %view_15 : Tensor "bf16[1024, 512][512, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%view_14, [1024, 512]), kwargs = {})
#   %sum_2 : Tensor "bf16[1, 512][512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%view_15, [0], True), kwargs = {})
#   return %buf6
triton_red_fused_sum_view_2 = async_compile.triton('triton_red_fused_sum_view_2', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.reduction(
    size_hints={'x': 4096, 'r0_': 128},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused_sum_view_2', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 1081344, 'r0_': 0}}
)
@triton.jit
def triton_red_fused_sum_view_2(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 4096
    r0_numel = 128
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = (xindex % 512)
    x1 = xindex // 512
    _tmp2 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    x3 = xindex
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_2 = r0_index
        tmp0 = tl.load(in_ptr0 + (x0 + 512*r0_2 + 65536*x1), r0_mask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        tmp3 = _tmp2 + tmp1
        _tmp2 = tl.where(r0_mask, tmp3, _tmp2)
    tmp2 = tl.sum(_tmp2, 1)[:, None]
    tl.store(out_ptr0 + (x3), tmp2, None)
''', device_str='cuda')


# kernel path: /tmp/ind/if/cifdxqyd2shtt2dpbxehjo3fre5333vet2udgz76b42ao6n36dhi.py
# Topologically Sorted Source Nodes: [view_14, view_15, sum_2], Original ATen: [aten.view, aten.sum]
# Source node to ATen node mapping:
#   sum_2 => sum_2
#   view_14 => view_14
#   view_15 => view_15
# Graph fragment:
#   %buf6 : Tensor "f32[1, 512, 8][4096, 1, 512]cuda:0" = PlaceHolder[target=buf6]
#   %view_14 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.reshape.default](args = (%mm, [4, 256, 512]), kwargs = {})
#   %view_15 : Tensor "bf16[1024, 512][512, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%view_14, [1024, 512]), kwargs = {})
#   %sum_2 : Tensor "bf16[1, 512][512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%view_15, [0], True), kwargs = {})
#   return %sum_2
triton_per_fused_sum_view_3 = async_compile.triton('triton_per_fused_sum_view_3', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 512, 'r0_': 8},
    reduction_hint=ReductionHint.OUTER_TINY,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_sum_view_3', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 18432, 'r0_': 0}}
)
@triton.jit
def triton_per_fused_sum_view_3(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 512
    r0_numel = 8
    R0_BLOCK: tl.constexpr = 8
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 512*r0_1), xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(xmask, tmp1, 0)
    tmp4 = tl.sum(tmp3, 1)[:, None].to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp4, xmask)
''', device_str='cuda')


# kernel path: /tmp/ind/et/cethq76tlxhhh25dbzpd4o3j2c4fa643ud6y7nxzztqegimopfg2.py
# Topologically Sorted Source Nodes: [full_default, add_10, add_11, permute_24, clone_4], Original ATen: [aten.select_backward, aten.add, aten.permute, aten.clone]
# Source node to ATen node mapping:
#   add_10 => add_10
#   add_11 => add_11
#   clone_4 => clone_4
#   full_default => full_default
#   permute_24 => permute_24
# Graph fragment:
#   %getitem_15 : Tensor "bf16[4, 8, 256, 64][131072, 64, 512, 1]cuda:0" = PlaceHolder[target=getitem_15]
#   %getitem_14 : Tensor "bf16[4, 8, 256, 64][131072, 64, 512, 1]cuda:0" = PlaceHolder[target=getitem_14]
#   %getitem_13 : Tensor "bf16[4, 8, 256, 64][131072, 64, 512, 1]cuda:0" = PlaceHolder[target=getitem_13]
#   %full_default : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.full.default](args = ([3, 4, 8, 256, 64], 0), kwargs = {dtype: torch.bfloat16, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %select_scatter_default : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.select_scatter.default](args = (%full_default, %getitem_15, 0, 2), kwargs = {})
#   %select_scatter_default_1 : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.select_scatter.default](args = (%full_default, %getitem_14, 0, 1), kwargs = {})
#   %add_10 : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%select_scatter_default, %select_scatter_default_1), kwargs = {})
#   %select_scatter_default_2 : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.select_scatter.default](args = (%full_default, %getitem_13, 0, 0), kwargs = {})
#   %add_11 : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_10, %select_scatter_default_2), kwargs = {})
#   %permute_24 : Tensor "bf16[4, 256, 3, 8, 64][131072, 64, 524288, 16384, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%add_11, [1, 3, 0, 2, 4]), kwargs = {})
#   %clone_4 : Tensor "bf16[4, 256, 3, 8, 64][393216, 1536, 512, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.clone.default](args = (%permute_24,), kwargs = {memory_format: torch.contiguous_format})
#   return %clone_4
triton_poi_fused_add_clone_permute_select_backward_4 = async_compile.triton('triton_poi_fused_add_clone_permute_select_backward_4', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 2097152}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*bf16', 'in_ptr2': '*bf16', 'out_ptr0': '*bf16', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_add_clone_permute_select_backward_4', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 3, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 9437184}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_add_clone_permute_select_backward_4(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 1572864
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x1 = ((xindex // 512) % 3)
    x0 = (xindex % 512)
    x2 = xindex // 1536
    x3 = xindex
    tmp3 = tl.load(in_ptr0 + (x0 + 512*x2), None, eviction_policy='evict_last').to(tl.float32)
    tmp8 = tl.load(in_ptr1 + (x0 + 512*x2), None, eviction_policy='evict_last').to(tl.float32)
    tmp13 = tl.load(in_ptr2 + (x0 + 512*x2), None, eviction_policy='evict_last').to(tl.float32)
    tmp0 = x1
    tmp1 = tl.full([1], 2, tl.int32)
    tmp2 = tmp0 == tmp1
    tmp4 = tl.full([1], 0.0, tl.float32)
    tmp5 = tl.where(tmp2, tmp3, tmp4)
    tmp6 = tl.full([1], 1, tl.int32)
    tmp7 = tmp0 == tmp6
    tmp9 = tl.where(tmp7, tmp8, tmp4)
    tmp10 = tmp5 + tmp9
    tmp11 = tl.full([1], 0, tl.int32)
    tmp12 = tmp0 == tmp11
    tmp14 = tl.where(tmp12, tmp13, tmp4)
    tmp15 = tmp10 + tmp14
    tl.store(out_ptr0 + (x3), tmp15, None)
''', device_str='cuda')


# kernel path: /tmp/ind/q7/cq7bt5x5rhcjm7ny7nhx46zlrct2rcs5o2a324vass37iraajyf5.py
# Topologically Sorted Source Nodes: [view_20, convert_element_type_36, linear_1, x, layer_norm_1, mul_20, sum_6, sum_7, view_28, convert_element_type_51, layer_norm, mul_27, sum_12, sum_13], Original ATen: [aten.view, aten.native_layer_norm_backward, aten.add, aten.native_layer_norm]
# Source node to ATen node mapping:
#   convert_element_type_36 => convert_element_type_36
#   convert_element_type_51 => convert_element_type_51
#   layer_norm => convert_element_type, mul, sub
#   layer_norm_1 => convert_element_type_8, mul_2, sub_1
#   linear_1 => view_5
#   mul_20 => mul_20
#   mul_27 => mul_27
#   sum_12 => sum_12
#   sum_13 => sum_13
#   sum_6 => sum_6
#   sum_7 => sum_7
#   view_20 => view_20
#   view_28 => view_28
#   x => add_2
# Graph fragment:
#   %mm_4 : Tensor "bf16[1024, 512][512, 1]cuda:0" = PlaceHolder[target=mm_4]
#   %embedding : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0" = PlaceHolder[target=embedding]
#   %addmm_1 : Tensor "bf16[1024, 512][512, 1]cuda:0" = PlaceHolder[target=addmm_1]
#   %getitem_12 : Tensor "f32[4, 256, 1][256, 1, 1]cuda:0" = PlaceHolder[target=getitem_12]
#   %rsqrt_1 : Tensor "f32[4, 256, 1][256, 1, 1]cuda:0" = PlaceHolder[target=rsqrt_1]
#   %mm_8 : Tensor "bf16[1024, 512][512, 1]cuda:0" = PlaceHolder[target=mm_8]
#   %getitem_1 : Tensor "f32[4, 256, 1][256, 1, 1]cuda:0" = PlaceHolder[target=getitem_1]
#   %rsqrt : Tensor "f32[4, 256, 1][256, 1, 1]cuda:0" = PlaceHolder[target=rsqrt]
#   %view_20 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_4, [4, 256, 512]), kwargs = {})
#   %convert_element_type_36 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_20, torch.float32), kwargs = {})
#   %view_5 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%addmm_1, [4, 256, 512]), kwargs = {})
#   %add_2 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%embedding, %view_5), kwargs = {})
#   %convert_element_type_8 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%add_2, torch.float32), kwargs = {})
#   %sub_1 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%convert_element_type_8, %getitem_12), kwargs = {})
#   %mul_2 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_1, %rsqrt_1), kwargs = {})
#   %mul_20 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_36, %mul_2), kwargs = {})
#   %sum_6 : Tensor "f32[512][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_20, [0, 1]), kwargs = {})
#   %sum_7 : Tensor "f32[512][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%convert_element_type_36, [0, 1]), kwargs = {})
#   %view_28 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_8, [4, 256, 512]), kwargs = {})
#   %convert_element_type_51 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_28, torch.float32), kwargs = {})
#   %convert_element_type : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%embedding, torch.float32), kwargs = {})
#   %sub : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%convert_element_type, %getitem_1), kwargs = {})
#   %mul : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub, %rsqrt), kwargs = {})
#   %mul_27 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_51, %mul), kwargs = {})
#   %sum_12 : Tensor "f32[512][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_27, [0, 1]), kwargs = {})
#   %sum_13 : Tensor "f32[512][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%convert_element_type_51, [0, 1]), kwargs = {})
#   return %buf15,%buf17,%buf37,%buf39
triton_red_fused_add_native_layer_norm_native_layer_norm_backward_view_5 = async_compile.triton('triton_red_fused_add_native_layer_norm_native_layer_norm_backward_view_5', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.reduction(
    size_hints={'x': 4096, 'r0_': 128},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*bf16', 'in_ptr2': '*bf16', 'in_ptr3': '*fp32', 'in_ptr4': '*fp32', 'in_ptr5': '*bf16', 'in_ptr6': '*fp32', 'in_ptr7': '*fp32', 'out_ptr0': '*fp32', 'out_ptr1': '*fp32', 'out_ptr2': '*fp32', 'out_ptr3': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]], (8,): [['tt.divisibility', 16]], (9,): [['tt.divisibility', 16]], (10,): [['tt.divisibility', 16]], (11,): [['tt.divisibility', 16]], (12,): [['tt.divisibility', 16]], (13,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused_add_native_layer_norm_native_layer_norm_backward_view_5', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 8, 'num_store': 4, 'num_reduction': 4, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 4325376, 'r0_': 16384}}
)
@triton.jit
def triton_red_fused_add_native_layer_norm_native_layer_norm_backward_view_5(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, in_ptr6, in_ptr7, out_ptr0, out_ptr1, out_ptr2, out_ptr3, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 4096
    r0_numel = 128
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = (xindex % 512)
    x1 = xindex // 512
    _tmp12 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    x3 = xindex
    _tmp15 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    _tmp26 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    _tmp29 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_2 = r0_index
        tmp0 = tl.load(in_ptr0 + (x0 + 512*r0_2 + 65536*x1), r0_mask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp2 = tl.load(in_ptr1 + (x0 + 512*r0_2 + 65536*x1), r0_mask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp3 = tl.load(in_ptr2 + (x0 + 512*r0_2 + 65536*x1), r0_mask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp6 = tl.load(in_ptr3 + (r0_2 + 128*x1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp8 = tl.load(in_ptr4 + (r0_2 + 128*x1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp17 = tl.load(in_ptr5 + (x0 + 512*r0_2 + 65536*x1), r0_mask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp20 = tl.load(in_ptr6 + (r0_2 + 128*x1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp22 = tl.load(in_ptr7 + (r0_2 + 128*x1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp1 = tmp0.to(tl.float32)
        tmp4 = tmp2 + tmp3
        tmp5 = tmp4.to(tl.float32)
        tmp7 = tmp5 - tmp6
        tmp9 = tmp7 * tmp8
        tmp10 = tmp1 * tmp9
        tmp11 = tl.broadcast_to(tmp10, [XBLOCK, R0_BLOCK])
        tmp13 = _tmp12 + tmp11
        _tmp12 = tl.where(r0_mask, tmp13, _tmp12)
        tmp14 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])
        tmp16 = _tmp15 + tmp14
        _tmp15 = tl.where(r0_mask, tmp16, _tmp15)
        tmp18 = tmp17.to(tl.float32)
        tmp19 = tmp2.to(tl.float32)
        tmp21 = tmp19 - tmp20
        tmp23 = tmp21 * tmp22
        tmp24 = tmp18 * tmp23
        tmp25 = tl.broadcast_to(tmp24, [XBLOCK, R0_BLOCK])
        tmp27 = _tmp26 + tmp25
        _tmp26 = tl.where(r0_mask, tmp27, _tmp26)
        tmp28 = tl.broadcast_to(tmp18, [XBLOCK, R0_BLOCK])
        tmp30 = _tmp29 + tmp28
        _tmp29 = tl.where(r0_mask, tmp30, _tmp29)
    tmp12 = tl.sum(_tmp12, 1)[:, None]
    tmp15 = tl.sum(_tmp15, 1)[:, None]
    tmp26 = tl.sum(_tmp26, 1)[:, None]
    tmp29 = tl.sum(_tmp29, 1)[:, None]
    tl.store(out_ptr0 + (x3), tmp12, None)
    tl.store(out_ptr1 + (x3), tmp15, None)
    tl.store(out_ptr2 + (x3), tmp26, None)
    tl.store(out_ptr3 + (x3), tmp29, None)
''', device_str='cuda')


# kernel path: /tmp/ind/bw/cbwjornkwz7gj6kqwref5pe225oxmt4ul2yy6xpxbb2l3p3z2okn.py
# Topologically Sorted Source Nodes: [view_20, convert_element_type_36, linear_1, x, layer_norm_1, mul_20, sum_6, convert_element_type_41], Original ATen: [aten.view, aten.native_layer_norm_backward, aten.add, aten.native_layer_norm]
# Source node to ATen node mapping:
#   convert_element_type_36 => convert_element_type_36
#   convert_element_type_41 => convert_element_type_41
#   layer_norm_1 => convert_element_type_8, mul_2, sub_1
#   linear_1 => view_5
#   mul_20 => mul_20
#   sum_6 => sum_6
#   view_20 => view_20
#   x => add_2
# Graph fragment:
#   %buf15 : Tensor "f32[512, 8][1, 512]cuda:0" = PlaceHolder[target=buf15]
#   %sum_6 : Tensor "f32[512][1]cuda:0" = PlaceHolder[target=sum_6]
#   %view_20 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_4, [4, 256, 512]), kwargs = {})
#   %convert_element_type_36 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_20, torch.float32), kwargs = {})
#   %view_5 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%addmm_1, [4, 256, 512]), kwargs = {})
#   %add_2 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%embedding, %view_5), kwargs = {})
#   %convert_element_type_8 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%add_2, torch.float32), kwargs = {})
#   %sub_1 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%convert_element_type_8, %getitem_12), kwargs = {})
#   %mul_2 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_1, %rsqrt_1), kwargs = {})
#   %mul_20 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_36, %mul_2), kwargs = {})
#   %sum_6 : Tensor "f32[512][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_20, [0, 1]), kwargs = {})
#   %convert_element_type_41 : Tensor "bf16[512][1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%sum_6, torch.bfloat16), kwargs = {})
#   return %sum_6,%convert_element_type_41
triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_6 = async_compile.triton('triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_6', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 512, 'r0_': 8},
    reduction_hint=ReductionHint.OUTER_TINY,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr1': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_6', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 18432, 'r0_': 0}}
)
@triton.jit
def triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_6(in_ptr0, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 512
    r0_numel = 8
    R0_BLOCK: tl.constexpr = 8
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 512*r0_1), xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(xmask, tmp1, 0)
    tmp4 = tl.sum(tmp3, 1)[:, None].to(tl.float32)
    tmp5 = tmp4.to(tl.float32)
    tl.store(out_ptr1 + (x0), tmp5, xmask)
''', device_str='cuda')


# kernel path: /tmp/ind/mz/cmzch3mtu2w3yvplgl537thlwgpmju6psgwkwd3dqz3c4noconge.py
# Topologically Sorted Source Nodes: [full_default, add_10, add_11, permute_24, clone_4, view_25, view_26, sum_9], Original ATen: [aten.select_backward, aten.add, aten.permute, aten.clone, aten._unsafe_view, aten.view, aten.sum]
# Source node to ATen node mapping:
#   add_10 => add_10
#   add_11 => add_11
#   clone_4 => clone_4
#   full_default => full_default
#   permute_24 => permute_24
#   sum_9 => sum_9
#   view_25 => view_25
#   view_26 => view_26
# Graph fragment:
#   %clone_4 : Tensor "bf16[4, 256, 3, 8, 64][393216, 1536, 512, 64, 1]cuda:0" = PlaceHolder[target=clone_4]
#   %full_default : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.full.default](args = ([3, 4, 8, 256, 64], 0), kwargs = {dtype: torch.bfloat16, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %select_scatter_default : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.select_scatter.default](args = (%full_default, %getitem_15, 0, 2), kwargs = {})
#   %select_scatter_default_1 : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.select_scatter.default](args = (%full_default, %getitem_14, 0, 1), kwargs = {})
#   %add_10 : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%select_scatter_default, %select_scatter_default_1), kwargs = {})
#   %select_scatter_default_2 : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.select_scatter.default](args = (%full_default, %getitem_13, 0, 0), kwargs = {})
#   %add_11 : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_10, %select_scatter_default_2), kwargs = {})
#   %permute_24 : Tensor "bf16[4, 256, 3, 8, 64][131072, 64, 524288, 16384, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%add_11, [1, 3, 0, 2, 4]), kwargs = {})
#   %clone_4 : Tensor "bf16[4, 256, 3, 8, 64][393216, 1536, 512, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.clone.default](args = (%permute_24,), kwargs = {memory_format: torch.contiguous_format})
#   %view_25 : Tensor "bf16[4, 256, 1536][393216, 1536, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%clone_4, [4, 256, 1536]), kwargs = {})
#   %view_26 : Tensor "bf16[1024, 1536][1536, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%view_25, [1024, 1536]), kwargs = {})
#   %sum_9 : Tensor "bf16[1, 1536][1536, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%view_26, [0], True), kwargs = {})
#   return %buf33
triton_red_fused__unsafe_view_add_clone_permute_select_backward_sum_view_7 = async_compile.triton('triton_red_fused__unsafe_view_add_clone_permute_select_backward_sum_view_7', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.reduction(
    size_hints={'x': 16384, 'r0_': 128},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused__unsafe_view_add_clone_permute_select_backward_sum_view_7', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 3244032, 'r0_': 0}}
)
@triton.jit
def triton_red_fused__unsafe_view_add_clone_permute_select_backward_sum_view_7(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 12288
    r0_numel = 128
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = (xindex % 1536)
    x1 = xindex // 1536
    _tmp2 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    x3 = xindex
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_2 = r0_index
        tmp0 = tl.load(in_ptr0 + (x0 + 1536*r0_2 + 196608*x1), r0_mask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        tmp3 = _tmp2 + tmp1
        _tmp2 = tl.where(r0_mask, tmp3, _tmp2)
    tmp2 = tl.sum(_tmp2, 1)[:, None]
    tl.store(out_ptr0 + (x3), tmp2, None)
''', device_str='cuda')


# kernel path: /tmp/ind/5v/c5vdxj4w44msv4uclw7tzlaptzrmw2rz6yoii3ealplwv6zvisph.py
# Topologically Sorted Source Nodes: [full_default, add_10, add_11, permute_24, clone_4, view_25, view_26, sum_9], Original ATen: [aten.select_backward, aten.add, aten.permute, aten.clone, aten._unsafe_view, aten.view, aten.sum]
# Source node to ATen node mapping:
#   add_10 => add_10
#   add_11 => add_11
#   clone_4 => clone_4
#   full_default => full_default
#   permute_24 => permute_24
#   sum_9 => sum_9
#   view_25 => view_25
#   view_26 => view_26
# Graph fragment:
#   %buf33 : Tensor "f32[1, 1536, 8][12288, 1, 1536]cuda:0" = PlaceHolder[target=buf33]
#   %full_default : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.full.default](args = ([3, 4, 8, 256, 64], 0), kwargs = {dtype: torch.bfloat16, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %select_scatter_default : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.select_scatter.default](args = (%full_default, %getitem_15, 0, 2), kwargs = {})
#   %select_scatter_default_1 : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.select_scatter.default](args = (%full_default, %getitem_14, 0, 1), kwargs = {})
#   %add_10 : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%select_scatter_default, %select_scatter_default_1), kwargs = {})
#   %select_scatter_default_2 : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.select_scatter.default](args = (%full_default, %getitem_13, 0, 0), kwargs = {})
#   %add_11 : Tensor "bf16[3, 4, 8, 256, 64][524288, 131072, 16384, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_10, %select_scatter_default_2), kwargs = {})
#   %permute_24 : Tensor "bf16[4, 256, 3, 8, 64][131072, 64, 524288, 16384, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%add_11, [1, 3, 0, 2, 4]), kwargs = {})
#   %clone_4 : Tensor "bf16[4, 256, 3, 8, 64][393216, 1536, 512, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.clone.default](args = (%permute_24,), kwargs = {memory_format: torch.contiguous_format})
#   %view_25 : Tensor "bf16[4, 256, 1536][393216, 1536, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%clone_4, [4, 256, 1536]), kwargs = {})
#   %view_26 : Tensor "bf16[1024, 1536][1536, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%view_25, [1024, 1536]), kwargs = {})
#   %sum_9 : Tensor "bf16[1, 1536][1536, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%view_26, [0], True), kwargs = {})
#   return %sum_9
triton_per_fused__unsafe_view_add_clone_permute_select_backward_sum_view_8 = async_compile.triton('triton_per_fused__unsafe_view_add_clone_permute_select_backward_sum_view_8', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 2048, 'r0_': 8},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused__unsafe_view_add_clone_permute_select_backward_sum_view_8', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 55296, 'r0_': 0}}
)
@triton.jit
def triton_per_fused__unsafe_view_add_clone_permute_select_backward_sum_view_8(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 1536
    r0_numel = 8
    R0_BLOCK: tl.constexpr = 8
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 1536*r0_1), xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(xmask, tmp1, 0)
    tmp4 = tl.sum(tmp3, 1)[:, None].to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp4, xmask)
''', device_str='cuda')


# kernel path: /tmp/ind/st/cstwnu3f5hv526lagwn54t2a4hnca7viosdr6mqaaq3bk3lt2wxd.py
# Topologically Sorted Source Nodes: [view_17, convert_element_type_29, linear_2, gelu, mul_8, mul_9, mul_10, exp, mul_11, mul_12, add_8, mul_13, convert_element_type_31, view_18, sum_3], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.sum]
# Source node to ATen node mapping:
#   add_8 => add_8
#   convert_element_type_29 => convert_element_type_29
#   convert_element_type_31 => convert_element_type_31
#   exp => exp
#   gelu => add_5, convert_element_type_13, erf, mul_5
#   linear_2 => view_7
#   mul_10 => mul_10
#   mul_11 => mul_11
#   mul_12 => mul_12
#   mul_13 => mul_13
#   mul_8 => mul_8
#   mul_9 => mul_9
#   sum_3 => sum_3
#   view_17 => view_17
#   view_18 => view_18
# Graph fragment:
#   %convert_element_type_31 : Tensor "bf16[4, 256, 2048][524288, 2048, 1]cuda:0" = PlaceHolder[target=convert_element_type_31]
#   %view_17 : Tensor "bf16[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_2, [4, 256, 2048]), kwargs = {})
#   %convert_element_type_29 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_17, torch.float32), kwargs = {})
#   %view_7 : Tensor "bf16[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%addmm_2, [4, 256, 2048]), kwargs = {})
#   %convert_element_type_13 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_7, torch.float32), kwargs = {})
#   %mul_5 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_13, 0.7071067811865476), kwargs = {})
#   %erf : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.erf.default](args = (%mul_5,), kwargs = {})
#   %add_5 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%erf, 1), kwargs = {})
#   %mul_8 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%add_5, 0.5), kwargs = {})
#   %mul_9 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_13, %convert_element_type_13), kwargs = {})
#   %mul_10 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_9, -0.5), kwargs = {})
#   %exp : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.exp.default](args = (%mul_10,), kwargs = {})
#   %mul_11 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%exp, 0.3989422804014327), kwargs = {})
#   %mul_12 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_13, %mul_11), kwargs = {})
#   %add_8 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_8, %mul_12), kwargs = {})
#   %mul_13 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_29, %add_8), kwargs = {})
#   %convert_element_type_31 : Tensor "bf16[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%mul_13, torch.bfloat16), kwargs = {})
#   %view_18 : Tensor "bf16[1024, 2048][2048, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%convert_element_type_31, [1024, 2048]), kwargs = {})
#   %sum_3 : Tensor "bf16[1, 2048][2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%view_18, [0], True), kwargs = {})
#   return %buf11
triton_red_fused_gelu_gelu_backward_sum_view_9 = async_compile.triton('triton_red_fused_gelu_gelu_backward_sum_view_9', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.reduction(
    size_hints={'x': 16384, 'r0_': 128},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused_gelu_gelu_backward_sum_view_9', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 4325376, 'r0_': 0}}
)
@triton.jit
def triton_red_fused_gelu_gelu_backward_sum_view_9(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 16384
    r0_numel = 128
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = (xindex % 2048)
    x1 = xindex // 2048
    _tmp2 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    x3 = xindex
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_2 = r0_index
        tmp0 = tl.load(in_ptr0 + (x0 + 2048*r0_2 + 262144*x1), r0_mask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        tmp3 = _tmp2 + tmp1
        _tmp2 = tl.where(r0_mask, tmp3, _tmp2)
    tmp2 = tl.sum(_tmp2, 1)[:, None]
    tl.store(out_ptr0 + (x3), tmp2, None)
''', device_str='cuda')


# kernel path: /tmp/ind/l3/cl3nynrlsaml67nmigjlbrm2uaikar46cqp55w4ps3l2i3wt3mwe.py
# Topologically Sorted Source Nodes: [view_17, convert_element_type_29, linear_2, gelu, mul_8, mul_9, mul_10, exp, mul_11, mul_12, add_8, mul_13, convert_element_type_31, view_18, sum_3], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.sum]
# Source node to ATen node mapping:
#   add_8 => add_8
#   convert_element_type_29 => convert_element_type_29
#   convert_element_type_31 => convert_element_type_31
#   exp => exp
#   gelu => add_5, convert_element_type_13, erf, mul_5
#   linear_2 => view_7
#   mul_10 => mul_10
#   mul_11 => mul_11
#   mul_12 => mul_12
#   mul_13 => mul_13
#   mul_8 => mul_8
#   mul_9 => mul_9
#   sum_3 => sum_3
#   view_17 => view_17
#   view_18 => view_18
# Graph fragment:
#   %buf11 : Tensor "f32[1, 2048, 8][16384, 1, 2048]cuda:0" = PlaceHolder[target=buf11]
#   %view_17 : Tensor "bf16[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_2, [4, 256, 2048]), kwargs = {})
#   %convert_element_type_29 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_17, torch.float32), kwargs = {})
#   %view_7 : Tensor "bf16[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%addmm_2, [4, 256, 2048]), kwargs = {})
#   %convert_element_type_13 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_7, torch.float32), kwargs = {})
#   %mul_5 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_13, 0.7071067811865476), kwargs = {})
#   %erf : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.erf.default](args = (%mul_5,), kwargs = {})
#   %add_5 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%erf, 1), kwargs = {})
#   %mul_8 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%add_5, 0.5), kwargs = {})
#   %mul_9 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_13, %convert_element_type_13), kwargs = {})
#   %mul_10 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_9, -0.5), kwargs = {})
#   %exp : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.exp.default](args = (%mul_10,), kwargs = {})
#   %mul_11 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%exp, 0.3989422804014327), kwargs = {})
#   %mul_12 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_13, %mul_11), kwargs = {})
#   %add_8 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_8, %mul_12), kwargs = {})
#   %mul_13 : Tensor "f32[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_29, %add_8), kwargs = {})
#   %convert_element_type_31 : Tensor "bf16[4, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%mul_13, torch.bfloat16), kwargs = {})
#   %view_18 : Tensor "bf16[1024, 2048][2048, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%convert_element_type_31, [1024, 2048]), kwargs = {})
#   %sum_3 : Tensor "bf16[1, 2048][2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%view_18, [0], True), kwargs = {})
#   return %sum_3
triton_per_fused_gelu_gelu_backward_sum_view_10 = async_compile.triton('triton_per_fused_gelu_gelu_backward_sum_view_10', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 2048, 'r0_': 8},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_gelu_gelu_backward_sum_view_10', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 73728, 'r0_': 0}}
)
@triton.jit
def triton_per_fused_gelu_gelu_backward_sum_view_10(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 2048
    r0_numel = 8
    R0_BLOCK: tl.constexpr = 8
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 2048*r0_1), xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(xmask, tmp1, 0)
    tmp4 = tl.sum(tmp3, 1)[:, None].to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp4, xmask)
''', device_str='cuda')


# kernel path: /tmp/ind/dj/cdjrkn3lqlu6ed4aejjbt2sm5rolp2f6ukqjw23e2iz6spnxpzba.py
# Topologically Sorted Source Nodes: [view_12, sum_1], Original ATen: [aten.view, aten.sum]
# Source node to ATen node mapping:
#   sum_1 => sum_1
#   view_12 => view_12
# Graph fragment:
#   %tangents_1 : Tensor "bf16[4, 256, 4096][1048576, 4096, 1]cuda:0" = PlaceHolder[target=tangents_1]
#   %view_12 : Tensor "bf16[1024, 4096][4096, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%tangents_1, [1024, 4096]), kwargs = {})
#   %sum_1 : Tensor "bf16[1, 4096][4096, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%view_12, [0], True), kwargs = {})
#   return %buf2
triton_red_fused_sum_view_11 = async_compile.triton('triton_red_fused_sum_view_11', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.reduction(
    size_hints={'x': 32768, 'r0_': 128},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused_sum_view_11', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 8650752, 'r0_': 0}}
)
@triton.jit
def triton_red_fused_sum_view_11(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 32768
    r0_numel = 128
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = (xindex % 4096)
    x1 = xindex // 4096
    _tmp2 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    x3 = xindex
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_2 = r0_index
        tmp0 = tl.load(in_ptr0 + (x0 + 4096*r0_2 + 524288*x1), r0_mask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        tmp3 = _tmp2 + tmp1
        _tmp2 = tl.where(r0_mask, tmp3, _tmp2)
    tmp2 = tl.sum(_tmp2, 1)[:, None]
    tl.store(out_ptr0 + (x3), tmp2, None)
''', device_str='cuda')


# kernel path: /tmp/ind/uo/cuo7fyczbw52qwlnirjqcwomauz2zurijz5pxmpf5rfyalbjruzd.py
# Topologically Sorted Source Nodes: [view_12, sum_1], Original ATen: [aten.view, aten.sum]
# Source node to ATen node mapping:
#   sum_1 => sum_1
#   view_12 => view_12
# Graph fragment:
#   %buf2 : Tensor "f32[1, 4096, 8][32768, 1, 4096]cuda:0" = PlaceHolder[target=buf2]
#   %view_12 : Tensor "bf16[1024, 4096][4096, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%tangents_1, [1024, 4096]), kwargs = {})
#   %sum_1 : Tensor "bf16[1, 4096][4096, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%view_12, [0], True), kwargs = {})
#   return %sum_1
triton_per_fused_sum_view_12 = async_compile.triton('triton_per_fused_sum_view_12', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 4096, 'r0_': 8},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_sum_view_12', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 147456, 'r0_': 0}}
)
@triton.jit
def triton_per_fused_sum_view_12(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 4096
    r0_numel = 8
    R0_BLOCK: tl.constexpr = 8
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 4096*r0_1), None)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.sum(tmp1, 1)[:, None].to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp3, None)
''', device_str='cuda')


# kernel path: /tmp/ind/jv/cjvxpq5qi4bzgg62ip4l4mozg3knlpjjbl7mq5bxbxgwbkysz5lw.py
# Topologically Sorted Source Nodes: [full_default_4], Original ATen: [aten.embedding_dense_backward]
# Source node to ATen node mapping:
#   full_default_4 => full_default_4
# Graph fragment:
#   %full_default_4 : Tensor "f32[4096, 512][512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([4096, 512], 0), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   return %index_put
triton_poi_fused_embedding_dense_backward_13 = async_compile.triton('triton_poi_fused_embedding_dense_backward_13', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 2097152}, 
    filename=__file__,
    triton_meta={'signature': {'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_embedding_dense_backward_13', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 0, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 16777216}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_embedding_dense_backward_13(out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 2097152
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp0 = tl.full([1], 0.0, tl.float32)
    tl.store(out_ptr0 + (x0), tmp0, None)
''', device_str='cuda')


# kernel path: /tmp/ind/gg/cggowm5t62l5clchc4d3isr4wv7muimipri6e64tbozucxqv5dng.py
# Topologically Sorted Source Nodes: [view_28, convert_element_type_51, convert_element_type_53, mul_22, mul_23, sum_10, layer_norm, mul_24, sum_11, mul_25, sub_6, sub_7, div_1, mul_26, convert_element_type_55, add_12, convert_element_type_58, eq, unsqueeze, full_default_3, where, full_default_4, index_put], Original ATen: [aten.view, aten.native_layer_norm_backward, aten.native_layer_norm, aten.add, aten.embedding_dense_backward]
# Source node to ATen node mapping:
#   add_12 => add_12
#   convert_element_type_51 => convert_element_type_51
#   convert_element_type_53 => convert_element_type_53
#   convert_element_type_55 => convert_element_type_55
#   convert_element_type_58 => convert_element_type_58
#   div_1 => div_1
#   eq => eq
#   full_default_3 => full_default_3
#   full_default_4 => full_default_4
#   index_put => index_put
#   layer_norm => convert_element_type, mul, sub
#   mul_22 => mul_22
#   mul_23 => mul_23
#   mul_24 => mul_24
#   mul_25 => mul_25
#   mul_26 => mul_26
#   sub_6 => sub_6
#   sub_7 => sub_7
#   sum_10 => sum_10
#   sum_11 => sum_11
#   unsqueeze => unsqueeze
#   view_28 => view_28
#   where => where
# Graph fragment:
#   %mm_8 : Tensor "bf16[1024, 512][512, 1]cuda:0" = PlaceHolder[target=mm_8]
#   %primals_3 : Tensor "bf16[512][1]cuda:0" = PlaceHolder[target=primals_3]
#   %embedding : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0" = PlaceHolder[target=embedding]
#   %getitem_1 : Tensor "f32[4, 256, 1][256, 1, 1]cuda:0" = PlaceHolder[target=getitem_1]
#   %rsqrt : Tensor "f32[4, 256, 1][256, 1, 1]cuda:0" = PlaceHolder[target=rsqrt]
#   %primals_2 : Tensor "i64[4, 256][256, 1]cuda:0" = PlaceHolder[target=primals_2]
#   %add_9 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0" = PlaceHolder[target=add_9]
#   %sum_10 : Tensor "f32[4, 256, 1][256, 1, 1024]cuda:0" = PlaceHolder[target=sum_10]
#   %sum_11 : Tensor "f32[4, 256, 1][256, 1, 1024]cuda:0" = PlaceHolder[target=sum_11]
#   %where : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0" = PlaceHolder[target=where]
#   %index_put : Tensor "f32[4096, 512][512, 1]cuda:0" = PlaceHolder[target=index_put]
#   %view_28 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_8, [4, 256, 512]), kwargs = {})
#   %convert_element_type_51 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_28, torch.float32), kwargs = {})
#   %convert_element_type_53 : Tensor "f32[512][1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%primals_3, torch.float32), kwargs = {})
#   %mul_22 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_51, %convert_element_type_53), kwargs = {})
#   %mul_23 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_22, 512), kwargs = {})
#   %sum_10 : Tensor "f32[4, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_22, [2], True), kwargs = {})
#   %convert_element_type : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%embedding, torch.float32), kwargs = {})
#   %sub : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%convert_element_type, %getitem_1), kwargs = {})
#   %mul : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub, %rsqrt), kwargs = {})
#   %mul_24 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_22, %mul), kwargs = {})
#   %sum_11 : Tensor "f32[4, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_24, [2], True), kwargs = {})
#   %mul_25 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul, %sum_11), kwargs = {})
#   %sub_6 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%mul_23, %sum_10), kwargs = {})
#   %sub_7 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%sub_6, %mul_25), kwargs = {})
#   %div_1 : Tensor "f32[4, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%rsqrt, 512), kwargs = {})
#   %mul_26 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%div_1, %sub_7), kwargs = {})
#   %convert_element_type_55 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%mul_26, torch.bfloat16), kwargs = {})
#   %add_12 : Tensor "bf16[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_9, %convert_element_type_55), kwargs = {})
#   %convert_element_type_58 : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%add_12, torch.float32), kwargs = {})
#   %eq : Tensor "b8[4, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.eq.Scalar](args = (%primals_2, -1), kwargs = {})
#   %unsqueeze : Tensor "b8[4, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%eq, -1), kwargs = {})
#   %full_default_3 : Tensor "f32[][]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([], 0.0), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %where : Tensor "f32[4, 256, 512][131072, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.where.self](args = (%unsqueeze, %full_default_3, %convert_element_type_58), kwargs = {})
#   %full_default_4 : Tensor "f32[4096, 512][512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([4096, 512], 0), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %index_put : Tensor "f32[4096, 512][512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.index_put_.default](args = (%full_default_4, [%primals_2], %where, True), kwargs = {})
#   return %sum_10,%sum_11,%where,%buf45
triton_per_fused_add_embedding_dense_backward_native_layer_norm_native_layer_norm_backward_view_14 = async_compile.triton('triton_per_fused_add_embedding_dense_backward_native_layer_norm_native_layer_norm_backward_view_14', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 1024, 'r0_': 512},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*bf16', 'in_ptr2': '*bf16', 'in_ptr3': '*fp32', 'in_ptr4': '*fp32', 'in_ptr5': '*i64', 'in_ptr6': '*bf16', 'out_ptr3': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]], (8,): [['tt.divisibility', 16]], (9,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_add_embedding_dense_backward_native_layer_norm_native_layer_norm_backward_view_14', 'mutated_arg_names': ['out_ptr3'], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': True, 'num_load': 7, 'num_store': 1, 'num_reduction': 2, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 16384, 'r0_': 3146752}}
)
@triton.jit
def triton_per_fused_add_embedding_dense_backward_native_layer_norm_native_layer_norm_backward_view_14(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, in_ptr6, out_ptr3, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 1024
    r0_numel = 512
    R0_BLOCK: tl.constexpr = 512
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 512*x0), xmask, other=0.0).to(tl.float32)
    tmp2 = tl.load(in_ptr1 + (r0_1), None, eviction_policy='evict_last').to(tl.float32)
    tmp9 = tl.load(in_ptr2 + (r0_1 + 512*x0), xmask, other=0.0).to(tl.float32)
    tmp11 = tl.load(in_ptr3 + (x0), xmask, eviction_policy='evict_last')
    tmp13 = tl.load(in_ptr4 + (x0), xmask, eviction_policy='evict_last')
    tmp20 = tl.load(in_ptr5 + (x0), xmask, eviction_policy='evict_last')
    tmp23 = tl.load(in_ptr6 + (r0_1 + 512*x0), xmask, other=0.0).to(tl.float32)
    tmp1 = tmp0.to(tl.float32)
    tmp3 = tmp2.to(tl.float32)
    tmp4 = tmp1 * tmp3
    tmp5 = tl.broadcast_to(tmp4, [XBLOCK, R0_BLOCK])
    tmp7 = tl.where(xmask, tmp5, 0)
    tmp8 = tl.sum(tmp7, 1)[:, None].to(tl.float32)
    tmp10 = tmp9.to(tl.float32)
    tmp12 = tmp10 - tmp11
    tmp14 = tmp12 * tmp13
    tmp15 = tmp4 * tmp14
    tmp16 = tl.broadcast_to(tmp15, [XBLOCK, R0_BLOCK])
    tmp18 = tl.where(xmask, tmp16, 0)
    tmp19 = tl.sum(tmp18, 1)[:, None].to(tl.float32)
    tmp21 = tl.full([1, 1], -1, tl.int64)
    tmp22 = tmp20 == tmp21
    tmp24 = tl.full([1, 1], 0.001953125, tl.float32)
    tmp25 = tmp13 * tmp24
    tmp26 = tl.full([1, 1], 512.0, tl.float32)
    tmp27 = tmp4 * tmp26
    tmp28 = tmp27 - tmp8
    tmp29 = tmp14 * tmp19
    tmp30 = tmp28 - tmp29
    tmp31 = tmp25 * tmp30
    tmp32 = tmp31.to(tl.float32)
    tmp33 = tmp23 + tmp32
    tmp34 = tmp33.to(tl.float32)
    tmp35 = tl.full([1, 1], 0.0, tl.float32)
    tmp36 = tl.where(tmp22, tmp35, tmp34)
    tmp37 = tl.full([1, 1], 4096, tl.int32)
    tmp38 = tmp20 + tmp37
    tmp39 = tmp20 < 0
    tmp40 = tl.where(tmp39, tmp38, tmp20)
    tl.device_assert(((0 <= tmp40) & (tmp40 < 4096)) | ~(xmask), "index out of bounds: 0 <= tmp40 < 4096")
    tl.atomic_add(out_ptr3 + (tl.broadcast_to(r0_1 + 512*tmp40, [XBLOCK, R0_BLOCK])), tmp36, xmask, sem='relaxed')
''', device_str='cuda')


# kernel path: /tmp/ind/sb/csbrqs7nwep5kmxpzm2w3hz7bvfv2ugx65y6w6ur6zxmkoex7coz.py
# Topologically Sorted Source Nodes: [convert_element_type_59], Original ATen: [aten.embedding_dense_backward]
# Source node to ATen node mapping:
#   convert_element_type_59 => convert_element_type_59
# Graph fragment:
#   %buf45 : Tensor "f32[4096, 512][512, 1]cuda:0" = PlaceHolder[target=buf45]
#   %convert_element_type_59 : Tensor "bf16[4096, 512][512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%index_put, torch.bfloat16), kwargs = {})
#   return %convert_element_type_59
triton_poi_fused_embedding_dense_backward_15 = async_compile.triton('triton_poi_fused_embedding_dense_backward_15', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 2097152}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*bf16', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_embedding_dense_backward_15', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 8388608}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_embedding_dense_backward_15(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 2097152
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), None)
    tmp1 = tmp0.to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp1, None)
''', device_str='cuda')


async_compile.wait(globals())
del async_compile

class Runner:
    def __init__(self, partitions):
        self.partitions = partitions

    def recursively_apply_fns(self, fns):
        new_callables = []
        for fn, c in zip(fns, self.partitions):
            new_callables.append(fn(c))
        self.partitions = new_callables

    def call(self, args):
        primals_2, primals_3, primals_5, primals_7, primals_9, primals_11, primals_13, primals_15, embedding, getitem_1, rsqrt, view, select, select_1, select_2, getitem_2, getitem_3, getitem_8, getitem_9, addmm_1, getitem_12, rsqrt_1, view_6, addmm_2, view_8, view_10, tangents_1 = args
        args.clear()
        assert_size_stride(primals_2, (4, 256), (256, 1))
        assert_size_stride(primals_3, (512, ), (1, ))
        assert_size_stride(primals_5, (1536, 512), (512, 1))
        assert_size_stride(primals_7, (512, 512), (512, 1))
        assert_size_stride(primals_9, (512, ), (1, ))
        assert_size_stride(primals_11, (2048, 512), (512, 1))
        assert_size_stride(primals_13, (512, 2048), (2048, 1))
        assert_size_stride(primals_15, (4096, 512), (512, 1))
        assert_size_stride(embedding, (4, 256, 512), (131072, 512, 1))
        assert_size_stride(getitem_1, (4, 256, 1), (256, 1, 1))
        assert_size_stride(rsqrt, (4, 256, 1), (256, 1, 1))
        assert_size_stride(view, (1024, 512), (512, 1))
        assert_size_stride(select, (4, 8, 256, 64), (393216, 64, 1536, 1))
        assert_size_stride(select_1, (4, 8, 256, 64), (393216, 64, 1536, 1))
        assert_size_stride(select_2, (4, 8, 256, 64), (393216, 64, 1536, 1))
        assert_size_stride(getitem_2, (4, 8, 256, 64), (131072, 64, 512, 1))
        assert_size_stride(getitem_3, (4, 8, 256, 1), (2048, 256, 1, 1))
        assert_size_stride(getitem_8, (), ())
        assert_size_stride(getitem_9, (), ())
        assert_size_stride(addmm_1, (1024, 512), (512, 1))
        assert_size_stride(getitem_12, (4, 256, 1), (256, 1, 1))
        assert_size_stride(rsqrt_1, (4, 256, 1), (256, 1, 1))
        assert_size_stride(view_6, (1024, 512), (512, 1))
        assert_size_stride(addmm_2, (1024, 2048), (2048, 1))
        assert_size_stride(view_8, (1024, 2048), (2048, 1))
        assert_size_stride(view_10, (1024, 512), (512, 1))
        assert_size_stride(tangents_1, (4, 256, 4096), (1048576, 4096, 1))
        with torch.cuda._DeviceGuard(0):
            torch.cuda.set_device(0)
            buf0 = empty_strided_cuda((1024, 512), (512, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_12, linear_4, permute_7, mm], Original ATen: [aten.view, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(tangents_1, (1024, 4096), (4096, 1), 0), primals_15, out=buf0)
            del primals_15
            buf4 = empty_strided_cuda((1024, 2048), (2048, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_14, view_15, linear_3, permute_11, mm_2], Original ATen: [aten.view, aten.t, aten.mm]
            extern_kernels.mm(buf0, primals_13, out=buf4)
            del primals_13
            buf8 = reinterpret_tensor(buf4, (4, 256, 2048), (524288, 2048, 1), 0); del buf4  # reuse
            # Topologically Sorted Source Nodes: [view_17, convert_element_type_29, linear_2, gelu, mul_8, mul_9, mul_10, exp, mul_11, mul_12, add_8, mul_13, convert_element_type_31], Original ATen: [aten.view, aten.gelu_backward, aten.gelu]
            stream0 = get_raw_stream(0)
            triton_poi_fused_gelu_gelu_backward_view_0.run(buf8, addmm_2, 2097152, stream=stream0)
            del addmm_2
            buf9 = empty_strided_cuda((1024, 512), (512, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_17, convert_element_type_29, linear_2, gelu, mul_8, mul_9, mul_10, exp, mul_11, mul_12, add_8, mul_13, convert_element_type_31, view_18, permute_15, mm_4], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf8, (1024, 2048), (2048, 1), 0), primals_11, out=buf9)
            del primals_11
            buf21 = empty_strided_cuda((4, 256, 512), (131072, 512, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_14, view_20, convert_element_type_36, convert_element_type_38, mul_15, mul_16, sum_4, linear_1, x, layer_norm_1, mul_17, sum_5, mul_18, sub_3, sub_4, div, mul_19, convert_element_type_40, add_9], Original ATen: [aten.view, aten.native_layer_norm_backward, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_1.run(buf9, primals_9, embedding, addmm_1, getitem_12, rsqrt_1, buf0, buf21, 1024, 512, stream=stream0)
            del primals_9
            buf22 = empty_strided_cuda((1024, 512), (512, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_21, linear_1, permute_19, mm_6], Original ATen: [aten.view, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf21, (1024, 512), (512, 1), 0), primals_7, out=buf22)
            del primals_7
            # Topologically Sorted Source Nodes: [view_23, view_24, permute_23, _scaled_dot_product_cudnn_attention_backward], Original ATen: [aten.view, aten.transpose, aten._scaled_dot_product_cudnn_attention_backward]
            buf26 = torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default(reinterpret_tensor(buf22, (4, 8, 256, 64), (131072, 64, 512, 1), 0), select, select_1, select_2, getitem_2, getitem_3, getitem_8, getitem_9, None, None, None, 256, 256, 0.0, True)
            del buf22
            del getitem_3
            del getitem_8
            del getitem_9
            del select
            del select_1
            del select_2
            buf27 = buf26[0]
            assert_size_stride(buf27, (4, 8, 256, 64), (131072, 64, 512, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
            assert_alignment(buf27, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
            buf28 = buf26[1]
            assert_size_stride(buf28, (4, 8, 256, 64), (131072, 64, 512, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
            assert_alignment(buf28, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
            buf29 = buf26[2]
            assert_size_stride(buf29, (4, 8, 256, 64), (131072, 64, 512, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
            assert_alignment(buf29, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
            del buf26
            buf6 = empty_strided_cuda((1, 512, 8), (4096, 1, 512), torch.float32)
            # Topologically Sorted Source Nodes: [view_14, view_15, sum_2], Original ATen: [aten.view, aten.sum]
            stream0 = get_raw_stream(0)
            triton_red_fused_sum_view_2.run(buf0, buf6, 4096, 128, stream=stream0)
            buf7 = empty_strided_cuda((1, 512), (512, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_14, view_15, sum_2], Original ATen: [aten.view, aten.sum]
            stream0 = get_raw_stream(0)
            triton_per_fused_sum_view_3.run(buf6, buf7, 512, 8, stream=stream0)
            buf24 = buf6; del buf6  # reuse
            # Topologically Sorted Source Nodes: [view_21, sum_8], Original ATen: [aten.view, aten.sum]
            stream0 = get_raw_stream(0)
            triton_red_fused_sum_view_2.run(buf21, buf24, 4096, 128, stream=stream0)
            buf25 = empty_strided_cuda((1, 512), (512, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_21, sum_8], Original ATen: [aten.view, aten.sum]
            stream0 = get_raw_stream(0)
            triton_per_fused_sum_view_3.run(buf24, buf25, 512, 8, stream=stream0)
            buf30 = empty_strided_cuda((4, 256, 3, 8, 64), (393216, 1536, 512, 64, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [full_default, add_10, add_11, permute_24, clone_4], Original ATen: [aten.select_backward, aten.add, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_clone_permute_select_backward_4.run(buf29, buf28, buf27, buf30, 1572864, stream=stream0)
            del buf27
            del buf28
            buf31 = reinterpret_tensor(buf29, (1024, 512), (512, 1), 0); del buf29  # reuse
            # Topologically Sorted Source Nodes: [full_default, add_10, add_11, permute_24, clone_4, view_25, view_26, linear, permute_25, mm_8], Original ATen: [aten.select_backward, aten.add, aten.permute, aten.clone, aten._unsafe_view, aten.view, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf30, (1024, 1536), (1536, 1), 0), primals_5, out=buf31)
            del primals_5
            buf15 = reinterpret_tensor(buf24, (512, 8), (1, 512), 0); del buf24  # reuse
            buf17 = empty_strided_cuda((512, 8), (1, 512), torch.float32)
            buf37 = empty_strided_cuda((512, 8), (1, 512), torch.float32)
            buf39 = empty_strided_cuda((512, 8), (1, 512), torch.float32)
            # Topologically Sorted Source Nodes: [view_20, convert_element_type_36, linear_1, x, layer_norm_1, mul_20, sum_6, sum_7, view_28, convert_element_type_51, layer_norm, mul_27, sum_12, sum_13], Original ATen: [aten.view, aten.native_layer_norm_backward, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_red_fused_add_native_layer_norm_native_layer_norm_backward_view_5.run(buf9, embedding, addmm_1, getitem_12, rsqrt_1, buf31, getitem_1, rsqrt, buf15, buf17, buf37, buf39, 4096, 128, stream=stream0)
            del addmm_1
            del buf9
            del getitem_12
            del rsqrt_1
            buf19 = empty_strided_cuda((512, ), (1, ), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_20, convert_element_type_36, linear_1, x, layer_norm_1, mul_20, sum_6, convert_element_type_41], Original ATen: [aten.view, aten.native_layer_norm_backward, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_6.run(buf15, buf19, 512, 8, stream=stream0)
            del buf15
            buf20 = empty_strided_cuda((512, ), (1, ), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_20, convert_element_type_36, sum_7, convert_element_type_42], Original ATen: [aten.view, aten.native_layer_norm_backward]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_6.run(buf17, buf20, 512, 8, stream=stream0)
            del buf17
            buf41 = empty_strided_cuda((512, ), (1, ), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_28, convert_element_type_51, layer_norm, mul_27, sum_12, convert_element_type_56], Original ATen: [aten.view, aten.native_layer_norm_backward, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_6.run(buf37, buf41, 512, 8, stream=stream0)
            del buf37
            buf42 = empty_strided_cuda((512, ), (1, ), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_28, convert_element_type_51, sum_13, convert_element_type_57], Original ATen: [aten.view, aten.native_layer_norm_backward]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_6.run(buf39, buf42, 512, 8, stream=stream0)
            del buf39
            buf33 = empty_strided_cuda((1, 1536, 8), (12288, 1, 1536), torch.float32)
            # Topologically Sorted Source Nodes: [full_default, add_10, add_11, permute_24, clone_4, view_25, view_26, sum_9], Original ATen: [aten.select_backward, aten.add, aten.permute, aten.clone, aten._unsafe_view, aten.view, aten.sum]
            stream0 = get_raw_stream(0)
            triton_red_fused__unsafe_view_add_clone_permute_select_backward_sum_view_7.run(buf30, buf33, 12288, 128, stream=stream0)
            buf34 = empty_strided_cuda((1, 1536), (1536, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [full_default, add_10, add_11, permute_24, clone_4, view_25, view_26, sum_9], Original ATen: [aten.select_backward, aten.add, aten.permute, aten.clone, aten._unsafe_view, aten.view, aten.sum]
            stream0 = get_raw_stream(0)
            triton_per_fused__unsafe_view_add_clone_permute_select_backward_sum_view_8.run(buf33, buf34, 1536, 8, stream=stream0)
            del buf33
            buf11 = empty_strided_cuda((1, 2048, 8), (16384, 1, 2048), torch.float32)
            # Topologically Sorted Source Nodes: [view_17, convert_element_type_29, linear_2, gelu, mul_8, mul_9, mul_10, exp, mul_11, mul_12, add_8, mul_13, convert_element_type_31, view_18, sum_3], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.sum]
            stream0 = get_raw_stream(0)
            triton_red_fused_gelu_gelu_backward_sum_view_9.run(buf8, buf11, 16384, 128, stream=stream0)
            buf12 = empty_strided_cuda((1, 2048), (2048, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_17, convert_element_type_29, linear_2, gelu, mul_8, mul_9, mul_10, exp, mul_11, mul_12, add_8, mul_13, convert_element_type_31, view_18, sum_3], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.sum]
            stream0 = get_raw_stream(0)
            triton_per_fused_gelu_gelu_backward_sum_view_10.run(buf11, buf12, 2048, 8, stream=stream0)
            del buf11
            buf2 = empty_strided_cuda((1, 4096, 8), (32768, 1, 4096), torch.float32)
            # Topologically Sorted Source Nodes: [view_12, sum_1], Original ATen: [aten.view, aten.sum]
            stream0 = get_raw_stream(0)
            triton_red_fused_sum_view_11.run(tangents_1, buf2, 32768, 128, stream=stream0)
            buf3 = empty_strided_cuda((1, 4096), (4096, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_12, sum_1], Original ATen: [aten.view, aten.sum]
            stream0 = get_raw_stream(0)
            triton_per_fused_sum_view_12.run(buf2, buf3, 4096, 8, stream=stream0)
            del buf2
            buf23 = empty_strided_cuda((512, 512), (512, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_21, permute_20, transpose, reshape, linear_1, mm_7], Original ATen: [aten.view, aten.t, aten.transpose, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf21, (512, 1024), (1, 512), 0), reinterpret_tensor(getitem_2, (1024, 512), (512, 1), 0), out=buf23)
            del getitem_2
            buf1 = empty_strided_cuda((4096, 512), (512, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_12, permute_8, mm_1], Original ATen: [aten.view, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(tangents_1, (4096, 1024), (1, 4096), 0), view_10, out=buf1)
            del tangents_1
            del view_10
            buf32 = empty_strided_cuda((1536, 512), (512, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [full_default, add_10, add_11, permute_24, clone_4, view_25, view_26, permute_26, mm_9], Original ATen: [aten.select_backward, aten.add, aten.permute, aten.clone, aten._unsafe_view, aten.view, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf30, (1536, 1024), (1, 1536), 0), view, out=buf32)
            del buf30
            del view
            buf5 = empty_strided_cuda((512, 2048), (2048, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_14, view_15, permute_12, mm_3], Original ATen: [aten.view, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf0, (512, 1024), (1, 512), 0), view_8, out=buf5)
            del buf0
            del view_8
            buf10 = empty_strided_cuda((2048, 512), (512, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_17, convert_element_type_29, linear_2, gelu, mul_8, mul_9, mul_10, exp, mul_11, mul_12, add_8, mul_13, convert_element_type_31, view_18, permute_16, mm_5], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf8, (2048, 1024), (1, 2048), 0), view_6, out=buf10)
            del buf8
            del view_6
            buf44 = empty_strided_cuda((4096, 512), (512, 1), torch.float32)
            # Topologically Sorted Source Nodes: [full_default_4], Original ATen: [aten.embedding_dense_backward]
            stream0 = get_raw_stream(0)
            triton_poi_fused_embedding_dense_backward_13.run(buf44, 2097152, stream=stream0)
            # Topologically Sorted Source Nodes: [view_28, convert_element_type_51, convert_element_type_53, mul_22, mul_23, sum_10, layer_norm, mul_24, sum_11, mul_25, sub_6, sub_7, div_1, mul_26, convert_element_type_55, add_12, convert_element_type_58, eq, unsqueeze, full_default_3, where, full_default_4, index_put], Original ATen: [aten.view, aten.native_layer_norm_backward, aten.native_layer_norm, aten.add, aten.embedding_dense_backward]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_embedding_dense_backward_native_layer_norm_native_layer_norm_backward_view_14.run(buf31, primals_3, embedding, getitem_1, rsqrt, primals_2, buf21, buf44, 1024, 512, stream=stream0)
            del buf21
            del buf31
            del embedding
            del getitem_1
            del primals_2
            del primals_3
            del rsqrt
            buf46 = empty_strided_cuda((4096, 512), (512, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [convert_element_type_59], Original ATen: [aten.embedding_dense_backward]
            stream0 = get_raw_stream(0)
            triton_poi_fused_embedding_dense_backward_15.run(buf44, buf46, 2097152, stream=stream0)
            del buf44
        return (buf46, None, buf41, buf42, buf32, reinterpret_tensor(buf34, (1536, ), (1, ), 0), buf23, reinterpret_tensor(buf25, (512, ), (1, ), 0), buf19, buf20, buf10, reinterpret_tensor(buf12, (2048, ), (1, ), 0), buf5, reinterpret_tensor(buf7, (512, ), (1, ), 0), buf1, reinterpret_tensor(buf3, (4096, ), (1, ), 0), )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    primals_2 = rand_strided((4, 256), (256, 1), device='cuda:0', dtype=torch.int64)
    primals_3 = rand_strided((512, ), (1, ), device='cuda:0', dtype=torch.bfloat16)
    primals_5 = rand_strided((1536, 512), (512, 1), device='cuda:0', dtype=torch.bfloat16)
    primals_7 = rand_strided((512, 512), (512, 1), device='cuda:0', dtype=torch.bfloat16)
    primals_9 = rand_strided((512, ), (1, ), device='cuda:0', dtype=torch.bfloat16)
    primals_11 = rand_strided((2048, 512), (512, 1), device='cuda:0', dtype=torch.bfloat16)
    primals_13 = rand_strided((512, 2048), (2048, 1), device='cuda:0', dtype=torch.bfloat16)
    primals_15 = rand_strided((4096, 512), (512, 1), device='cuda:0', dtype=torch.bfloat16)
    embedding = rand_strided((4, 256, 512), (131072, 512, 1), device='cuda:0', dtype=torch.bfloat16)
    getitem_1 = rand_strided((4, 256, 1), (256, 1, 1), device='cuda:0', dtype=torch.float32)
    rsqrt = rand_strided((4, 256, 1), (256, 1, 1), device='cuda:0', dtype=torch.float32)
    view = rand_strided((1024, 512), (512, 1), device='cuda:0', dtype=torch.bfloat16)
    select = rand_strided((4, 8, 256, 64), (393216, 64, 1536, 1), device='cuda:0', dtype=torch.bfloat16)
    select_1 = rand_strided((4, 8, 256, 64), (393216, 64, 1536, 1), device='cuda:0', dtype=torch.bfloat16)
    select_2 = rand_strided((4, 8, 256, 64), (393216, 64, 1536, 1), device='cuda:0', dtype=torch.bfloat16)
    getitem_2 = rand_strided((4, 8, 256, 64), (131072, 64, 512, 1), device='cuda:0', dtype=torch.bfloat16)
    getitem_3 = rand_strided((4, 8, 256, 1), (2048, 256, 1, 1), device='cuda:0', dtype=torch.float32)
    getitem_8 = rand_strided((), (), device='cuda:0', dtype=torch.int64)
    getitem_9 = rand_strided((), (), device='cuda:0', dtype=torch.int64)
    addmm_1 = rand_strided((1024, 512), (512, 1), device='cuda:0', dtype=torch.bfloat16)
    getitem_12 = rand_strided((4, 256, 1), (256, 1, 1), device='cuda:0', dtype=torch.float32)
    rsqrt_1 = rand_strided((4, 256, 1), (256, 1, 1), device='cuda:0', dtype=torch.float32)
    view_6 = rand_strided((1024, 512), (512, 1), device='cuda:0', dtype=torch.bfloat16)
    addmm_2 = rand_strided((1024, 2048), (2048, 1), device='cuda:0', dtype=torch.bfloat16)
    view_8 = rand_strided((1024, 2048), (2048, 1), device='cuda:0', dtype=torch.bfloat16)
    view_10 = rand_strided((1024, 512), (512, 1), device='cuda:0', dtype=torch.bfloat16)
    tangents_1 = rand_strided((4, 256, 4096), (1048576, 4096, 1), device='cuda:0', dtype=torch.bfloat16)
    return [primals_2, primals_3, primals_5, primals_7, primals_9, primals_11, primals_13, primals_15, embedding, getitem_1, rsqrt, view, select, select_1, select_2, getitem_2, getitem_3, getitem_8, getitem_9, addmm_1, getitem_12, rsqrt_1, view_6, addmm_2, view_8, view_10, tangents_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('compiled', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
