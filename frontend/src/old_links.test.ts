import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { kinetoscopeHash } from './old_links';
import { readState, readTab } from './shell/url_state';

describe('old links', () => {
  it('opens our tab for a bare #pytorch_profiler', () => {
    assert.equal(kinetoscopeHash('#pytorch_profiler'), '#kinetoscope');
    assert.equal(kinetoscopeHash(''), '#kinetoscope');
  });

  it("carries the old plugin's run, worker, span and view over", () => {
    const hash = kinetoscopeHash(
      '#pytorch_profiler&p.pytorch_profiler.run=resnet%2050&p.pytorch_profiler.worker=w0' +
        '&p.pytorch_profiler.span=2&p.pytorch_profiler.view=GPU%20Kernel&smoothing=0.6',
    );
    assert.equal(readTab(hash), 'kinetoscope');
    assert.deepEqual(readState(hash), {
      run: 'resnet 50',
      worker: 'w0',
      span: '2',
      view: 'kernels',
    });
    assert.ok(hash.includes('&smoothing=0.6'), hash); // TensorBoard's own keys stay
  });

  it('accepts bare keys and our own view ids; drops views without a counterpart', () => {
    assert.deepEqual(readState(kinetoscopeHash('#pytorch_profiler&run=r&view=Operator')), {
      run: 'r',
      view: 'operators',
    });
    assert.deepEqual(readState(kinetoscopeHash('#pytorch_profiler&view=memory')), {
      view: 'memory',
    });
    const module = kinetoscopeHash('#pytorch_profiler&p.pytorch_profiler.view=Module&run=r');
    assert.deepEqual(readState(module), { run: 'r' });
    assert.ok(!module.includes('pytorch_profiler'), module);
  });
});
