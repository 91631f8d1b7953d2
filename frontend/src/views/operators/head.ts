// The Operator page's head: notices, summary tiles, and the pies' metric pickers.

import type { OperatorsResponse } from '../../api/types';
import { h } from '../../components/dom';
import { formatCount, formatDuration } from '../../components/format';
import { selectField } from '../../components/table_tools';
import { pick } from '../../components/url_values';
import { partialNotice, tile } from '../page_kit';
import type { ViewContext } from '../types';
import {
  callStackSourceLabel,
  isReplayed,
  METRIC_LABEL,
  REPLAYED_HELP,
  type TimeMetric,
} from './model';

export function notices(ctx: ViewContext, data: OperatorsResponse, device: boolean): HTMLElement[] {
  const out: HTMLElement[] = [];
  const partial = partialNotice(ctx.status);
  if (partial) out.push(partial);
  if (!ctx.views.includes('kernels') && data.kernel_view_absent_reason) {
    out.push(
      h(
        'div',
        { class: 'ks-notice', testid: 'no-kernel-view', role: 'note' },
        h('strong', null, 'No Kernel view: '),
        `${data.kernel_view_absent_reason}.`,
        device ? null : ' Device time columns are left out.',
      ),
    );
  }
  const replayed = data.rows.filter(isReplayed).length;
  if (replayed) {
    out.push(
      h(
        'div',
        { class: 'ks-notice', testid: 'operators-replayed-note', role: 'note' },
        h('strong', null, `Replayed rows (${formatCount(replayed)}): `),
        `${REPLAYED_HELP}. A row of 0 calls was called only while the graph was captured: ` +
          'its work (roofline) is in the capture trace, not here.',
      ),
    );
  }
  return out;
}

export function tiles(data: OperatorsResponse, device: boolean): HTMLElement {
  return h(
    'div',
    { class: 'ks-tiles', testid: 'operators-summary' },
    tile('Operator calls', formatCount(data.op_count), 'aten ops and record_function ranges'),
    tile(
      'Host self time',
      formatDuration(data.host_self_us),
      'sum over all operators',
      'operators-host-self',
    ),
    device
      ? tile(
          'Device self time',
          formatDuration(data.device_self_us),
          'GPU time launched by operators',
          'operators-device-self',
        )
      : null,
    tile(
      'Call stacks',
      data.call_stack_source ? 'Recorded' : 'None',
      callStackSourceLabel(data.call_stack_source),
    ),
  );
}

/** A pie's metric picker; its label is in the card title, so the select stays compact. */
export function pieMetricSelect<M extends TimeMetric>(
  label: string,
  testid: string,
  metrics: readonly M[],
  value: M,
  onChange: (metric: M) => void,
): HTMLElement {
  const field = selectField(
    label,
    testid,
    metrics.map((m) => [m, METRIC_LABEL[m]] as const),
    value,
    (v) => onChange(pick(v, metrics, metrics[0] ?? value)),
  );
  field.el.querySelector('.ks-field-label')?.remove();
  return field.el;
}
