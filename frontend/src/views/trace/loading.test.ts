import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { TraceViewLoading } from '../../api/types';
import { loadingText } from './loading';

const status: TraceViewLoading = {
  run: 'r',
  worker: 'w0',
  span: '1',
  state: 'loading',
  bytes_done: 1024 * 1024,
  bytes_total: 4 * 1024 * 1024,
  partial: false,
  warnings: [],
  error: null,
  event_count: 0,
  views: [],
};

describe('trace view loading text', () => {
  it('says how much of the file is read while it loads', () => {
    assert.match(loadingText(status), /^Loading w0: .* of .* \(25 %\)…$/);
  });

  it('names the structure the server builds once the file is loaded (a 202 with building)', () => {
    const built = { ...status, state: 'ready' as const, building: 'flow pairs' };
    assert.equal(loadingText(built), 'Building the flow pairs of w0…');
  });
});
