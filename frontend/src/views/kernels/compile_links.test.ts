import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KernelRow } from '../../api/types';
import { compileView } from '../compile/fixture';
import { kernelCompiles } from './compile_links';

function row(name: string, files: string[] = []): KernelRow {
  return {
    name,
    source: files.map((filename) => ({ filename, line: 1, name: 'call' })),
  } as unknown as KernelRow;
}

const VIEW = compileView({
  kernels: [
    {
      name: 'cpp_fused_gelu_0',
      compiles: [
        { compile_id: '0/0', rank: null, wrappers: ['cbav.py'] },
        { compile_id: '0/1', rank: null, wrappers: ['c5oz.py'] },
      ],
    },
  ],
});

describe('kernels and the compiles that made them', () => {
  it('matches by name: every compile defining a kernel so named', () => {
    assert.deepEqual(kernelCompiles([row('cpp_fused_gelu_0'), row('other')], VIEW), [
      { name: 'cpp_fused_gelu_0', compileIds: ['0/0', '0/1'], exact: false },
    ]);
  });

  it('names the one compile whose generated file the kernel ran from', () => {
    const ran = row('cpp_fused_gelu_0', ['/tmp/torchinductor/5o/c5oz.py']);
    assert.deepEqual(kernelCompiles([ran], VIEW), [
      { name: 'cpp_fused_gelu_0', compileIds: ['0/1'], exact: true },
    ]);
  });
});
