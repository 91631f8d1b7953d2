// A small `compile` answer for the unit tests: the recorded recompile_shapes case's first
// two compiles (times as its log has them), cut down.

import type { Compile, CompileResponse } from '../../api/types';

export function compileRow(over: Partial<Compile> = {}): Compile {
  return {
    compile_id: '0/0',
    rank: null,
    log: 'torch_trace/dedicated_log_torch_trace_bvhklrj5.log.gz',
    frame: 'forward',
    file: '/repo/samples/record_compile_logs.py',
    line: 71,
    attempts: 1,
    status: 'compiled',
    reason: null,
    start_us: 1795460061032578,
    end_us: 1795460086634048,
    dur_us: 25601470,
    stages: {
      dynamo_us: 462865,
      aot_autograd_us: 1733885,
      inductor_us: 291944,
      code_gen_us: 23112776,
    },
    cache: {
      state: 'miss',
      inductor_hits: 0,
      inductor_misses: 1,
      aot_hits: 0,
      aot_misses: 1,
      time_saved_us: null,
    },
    backward: null,
    guard_count: 48,
    graph_op_count: 3,
    graph_breaks: 0,
    cudagraph_records: 0,
    cudagraph_skip_reason: null,
    kernels: ['cpp_fused_gelu_0'],
    worker: 'worker0',
    trace_start_us: 4603035033813,
    step: 0,
    ...over,
  };
}

export function compileView(over: Partial<CompileResponse> = {}): CompileResponse {
  return {
    run: 'recompile_shapes',
    state: 'ready',
    logs: [],
    compiles: [
      compileRow({
        backward: {
          start_us: 1795460086660000,
          dur_us: 5480007,
          inductor_us: 200000,
          code_gen_us: 5000000,
          cache: { ...compileRow().cache, aot_misses: 0 },
          failed: false,
        },
      }),
      compileRow({
        compile_id: '0/1',
        reason: "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 4",
        start_us: 1795460092380759,
        dur_us: 3989234,
        trace_start_us: 4603066380759,
        step: 2,
      }),
    ],
    recompiles: [],
    graph_breaks: [],
    failures: [],
    cudagraphs: [],
    alignments: [],
    steps: [
      {
        worker: 'worker0',
        step: 2,
        name: 'ProfilerStep#2',
        start_us: 1795460092370000,
        trace_start_us: 4603066370000,
        step_us: 9050329,
        compile_us: 9002751,
        compiles: [],
        text: 'step 2: 9.0 s compiling frame 0/1 (`forward`, record_compile_logs.py:71)',
      },
    ],
    kernels: [],
    events: [],
    events_total: 0,
    advice: [],
    total_compile_us: 0,
    ...over,
  };
}
