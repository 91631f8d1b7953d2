import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import type { HealthCheck, HealthView } from '../../api/types';
import { checkLabel, healthHeadline, splitChecks } from './health_model';

function check(id: string, count: number | null, severity: HealthCheck['severity']): HealthCheck {
  return {
    id,
    count,
    severity,
    effect: 'kept',
    description: '',
    unknown: count === null ? 'no window' : null,
    examples: [],
    torch_rule: null,
  };
}

const view: HealthView = {
  status: 'errors',
  checks: [
    check('unmatched_flows', 3, 'info'),
    check('zero_timestamps', 2, 'error'),
    check('overlapping_events', 0, 'warning'),
    check('outside_profiling_window', null, 'warning'),
  ],
  left_out_rows: 2,
  warnings: [],
  trace_start_us: 0,
};

test('found checks come errors first; clean and unknown apart', () => {
  const { found, clean, unknown } = splitChecks(view);
  assert.deepEqual(
    found.map((c) => c.id),
    ['zero_timestamps', 'unmatched_flows'],
  );
  assert.deepEqual(
    clean.map((c) => c.id),
    ['overlapping_events'],
  );
  assert.deepEqual(
    unknown.map((c) => c.id),
    ['outside_profiling_window'],
  );
});

test('the headline counts checks by severity and the rows left out', () => {
  assert.equal(
    healthHeadline(view),
    '1 check with errors; 2 events left out of time-based numbers.',
  );
  const notes: HealthView = { ...view, checks: [check('unmatched_flows', 3, 'info')] };
  assert.equal(healthHeadline(notes), 'Only notes: nothing here distorts the numbers.');
  assert.equal(healthHeadline({ ...view, checks: [] }), 'No problems found in this trace.');
});

test('labels name known checks and fall back to the id', () => {
  assert.equal(checkLabel('clock_outlier'), 'Events on another clock');
  assert.equal(checkLabel('new_check'), 'new check');
});
