// One recommendation as a card: severity, title, message, evidence, then actions (links).
// The Overview and the Distributed view both render their advice with it.

import type { Recommendation } from '../api/types';
import { h } from './dom';

export function recommendationCard(
  rec: Recommendation,
  evidence: readonly string[],
  ...actions: (HTMLElement | null)[]
): HTMLElement {
  const shown = actions.filter((a): a is HTMLElement => a !== null);
  return h(
    'article',
    {
      class: `ks-card ks-rec ks-sev-${rec.severity}`,
      testid: `recommendation-${rec.id}`,
    },
    h(
      'div',
      { class: 'ks-rec-head' },
      h('span', { class: 'ks-badge' }, rec.severity),
      h('h4', { class: 'ks-rec-title' }, rec.title),
    ),
    h('p', { class: 'ks-rec-message' }, rec.message),
    evidence.length
      ? h(
          'ul',
          { class: 'ks-evidence' },
          evidence.map((p) => h('li', null, p)),
        )
      : null,
    shown.length ? h('div', { class: 'ks-rec-actions' }, shown) : null,
  );
}
