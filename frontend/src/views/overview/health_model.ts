// Pure helpers of the Overview's "Trace health" section and the side bar's mark: which
// checks to show, how to say their count and effect, and the mark of a status.

import type { HealthCheck, HealthView } from '../../api/types';

export type HealthStatus = HealthView['status'];

/** What the side bar shows beside a worker: a symbol and words for screen readers. */
export const STATUS_MARK: Record<HealthStatus, { symbol: string; label: string }> = {
  ok: { symbol: '✓', label: 'trace health: ok' },
  warnings: { symbol: '!', label: 'trace health: warnings' },
  errors: { symbol: '✕', label: 'trace health: errors' },
};

export const CHECK_LABEL: Record<string, string> = {
  truncated_file: 'File cut short',
  zero_timestamps: 'Zero timestamps',
  negative_duration: 'Negative durations',
  duplicate_events: 'Duplicate events',
  clock_outlier: 'Events on another clock',
  kernel_before_launch: 'GPU work before its launch',
  overlapping_events: 'Overlapping slices',
  outside_profiling_window: 'Outside the profiling window',
  unmatched_flows: 'Flows missing a start or an end',
  kernel_overruns_next: 'Kernels overrunning the next on their stream',
  kernel_overlap_maybe_pdl: 'Overlapping kernels (maybe launched early on purpose)',
  kernels_not_recorded: 'Launches whose kernels were not recorded',
  kernel_before_launch_call: 'Kernel before its launch (torch validator)',
  stream_wait_without_record: 'Stream waits without their record',
  stream_sync_during_kernel: 'Stream syncs during a kernel',
  stream_wait_record_not_before: 'Stream waits on a later or missing record',
  collective_without_metadata: 'Collectives without their metadata',
  shared_backward_sequence: 'Backward ops sharing a sequence number',
  unread_categories: 'Events of a category no page reads',
};

export function checkLabel(id: string): string {
  return CHECK_LABEL[id] ?? id.replace(/_/g, ' ');
}

const SEVERITY_RANK: Record<HealthCheck['severity'], number> = { error: 0, warning: 1, info: 2 };

/** The checks that found something, errors first; the clean ones; the unknown ones. */
export function splitChecks(view: HealthView): {
  found: HealthCheck[];
  clean: HealthCheck[];
  unknown: HealthCheck[];
} {
  const found = view.checks
    .filter((c) => c.count !== null && c.count > 0)
    .sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity]);
  return {
    found,
    clean: view.checks.filter((c) => c.count === 0),
    unknown: view.checks.filter((c) => c.count === null),
  };
}

export function effectText(check: HealthCheck): string {
  const effect =
    check.effect === 'left_out'
      ? 'left out of time-based numbers'
      : 'kept in the numbers: read them with this in mind';
  return check.torch_rule ? `${effect} (torch's trace validator: ${check.torch_rule})` : effect;
}

/** A sentence for the section's head. */
export function healthHeadline(view: HealthView): string {
  const { found } = splitChecks(view);
  if (found.length === 0) return 'No problems found in this trace.';
  const errors = found.filter((c) => c.severity === 'error').length;
  const warnings = found.filter((c) => c.severity === 'warning').length;
  const parts = [];
  if (errors) parts.push(`${errors} check${errors === 1 ? '' : 's'} with errors`);
  if (warnings) parts.push(`${warnings} with warnings`);
  if (!parts.length) return 'Only notes: nothing here distorts the numbers.';
  const left = view.left_out_rows;
  const leftText = left
    ? `; ${left} event${left === 1 ? '' : 's'} left out of time-based numbers`
    : '';
  return `${parts.join(', ')}${leftText}.`;
}
