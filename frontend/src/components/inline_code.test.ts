import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { codeRuns } from './inline_code';

describe('inline code', () => {
  it('makes the backticked runs code and keeps the rest text', () => {
    assert.deepEqual(codeRuns('step 1: 11.7 s compiling frame 0/0 (`forward`, model.py:5)'), [
      { code: false, text: 'step 1: 11.7 s compiling frame 0/0 (' },
      { code: true, text: 'forward' },
      { code: false, text: ', model.py:5)' },
    ]);
  });

  it('leaves an unpaired backtick as text', () => {
    assert.deepEqual(codeRuns('a ` b'), [{ code: false, text: 'a ` b' }]);
    assert.deepEqual(codeRuns('plain'), [{ code: false, text: 'plain' }]);
  });
});
