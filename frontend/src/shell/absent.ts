// The notice of a view the trace lacks: a link or the URL asked for a view this worker-span
// (or run) does not offer, and the shell shows another one instead; the notice says why,
// above the view shown, until a view it offers is chosen.

import { h } from '../components/dom';
import { RUN_VIEW_IDS, VIEW_IDS, viewAbsentReason, viewLabel } from '../views/registry';

export class AbsentNotice {
  readonly element = h('div', {
    class: 'ks-banner ks-absent',
    testid: 'view-absent',
    role: 'status',
  });

  constructor() {
    this.element.hidden = true;
  }

  /** Says why `wanted` is not on the page (`shown` is); hides the notice when `wanted` is
   *  undefined (or a view id the UI does not know). */
  note(wanted: string | undefined, shown: string | undefined): void {
    const known =
      wanted !== undefined && (VIEW_IDS.includes(wanted) || RUN_VIEW_IDS.includes(wanted));
    this.element.hidden = !known;
    if (!known) return;
    const instead = shown ? ` Showing the ${viewLabel(shown)} instead.` : '';
    this.element.textContent = `No ${viewLabel(wanted)} view for this trace: ${viewAbsentReason(wanted)}.${instead}`;
  }

  hide(): void {
    this.element.hidden = true;
  }
}
