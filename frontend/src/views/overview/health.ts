// The Overview's "Trace health" section, fed by the `health` route: what in this trace
// cannot be trusted, check by check (count, severity, effect on the numbers), with links
// into the trace view at the first examples. Its own request, after the rest of the page;
// `data-state` says where it is (loading, ready, error); `data-status` the route's status.

import { describeError, isAbort } from '../../api/client';
import type { HealthCheck, HealthExample, HealthView } from '../../api/types';
import { h, replaceChildren } from '../../components/dom';
import { formatCount, formatDuration } from '../../components/format';
import { section } from '../page_kit';
import type { ViewContext } from '../types';
import { checkLabel, effectText, healthHeadline, splitChecks } from './health_model';
import { traceWindow } from './idle_model';

/** Example links shown per check (the route sends up to 20). */
const EXAMPLES_SHOWN = 5;
/** Time shown at least either side of an example: a 0 µs event is not a 2 µs window. */
const EXAMPLE_PAD_US = 20;

export class HealthSection {
  readonly element: HTMLElement;
  private readonly body = h('div', null, h('p', { class: 'ks-muted ks-note' }, 'Checking…'));
  private disposed = false;

  constructor(private readonly ctx: ViewContext) {
    this.element = section(
      {
        anchor: 'health',
        testid: 'overview-health',
        title: 'Trace health',
        intro:
          'What in this trace cannot be trusted. Errors distort the numbers above; events marked "left out" are not counted in time-based numbers.',
      },
      this.body,
    );
    this.element.dataset.state = 'loading';
  }

  /** Loads and shows the report; never rejects: a failure shows in the section. */
  async start(): Promise<void> {
    try {
      const view = await this.ctx.api.getReady('health', { ...this.ctx.key }, this.ctx.signal);
      if (this.disposed) return;
      this.element.dataset.status = view.status;
      this.show('ready', this.report(view));
    } catch (error) {
      if (isAbort(error) || this.disposed) return;
      this.show(
        'error',
        h(
          'div',
          { class: 'ks-notice ks-notice-warn', role: 'alert', testid: 'health-error' },
          `Could not check the trace's health: ${describeError(error)}`,
        ),
      );
    }
  }

  dispose(): void {
    this.disposed = true;
  }

  private report(view: HealthView): HTMLElement {
    const { found, clean, unknown } = splitChecks(view);
    return h(
      'div',
      null,
      h('p', { testid: 'health-headline' }, healthHeadline(view)),
      found.length
        ? h(
            'ul',
            { class: 'ks-health-checks' },
            found.map((c) => this.item(c)),
          )
        : null,
      clean.length
        ? h(
            'p',
            { class: 'ks-muted ks-small', testid: 'health-clean' },
            `None found: ${clean.map((c) => checkLabel(c.id).toLowerCase()).join(', ')}.`,
          )
        : null,
      unknown.map((c) =>
        h(
          'p',
          { class: 'ks-muted ks-small', testid: `health-unknown-${c.id}` },
          `Not checked: ${checkLabel(c.id).toLowerCase()} (${c.unknown ?? 'no reason given'}).`,
        ),
      ),
    );
  }

  private item(check: HealthCheck): HTMLElement {
    return h(
      'li',
      {
        class: `ks-health-check ks-health-${check.severity}`,
        testid: `health-check-${check.id}`,
        dataset: { count: String(check.count), severity: check.severity },
      },
      h('strong', null, `${checkLabel(check.id)}: ${formatCount(check.count ?? 0)}`),
      h('span', { class: 'ks-muted' }, ` (${check.severity}; ${effectText(check)})`),
      h('div', { class: 'ks-small' }, check.description),
      check.examples.length
        ? h(
            'div',
            { class: 'ks-small' },
            'e.g. ',
            check.examples
              .slice(0, EXAMPLES_SHOWN)
              .flatMap((e, i) => (i ? [', ', this.exampleLink(e)] : [this.exampleLink(e)])),
          )
        : null,
    );
  }

  private exampleLink(example: HealthExample): HTMLElement {
    const end = example.ts_us + Math.max(example.dur_us ?? 0, 0);
    const dur = example.dur_us ? `, ${formatDuration(example.dur_us)}` : '';
    return h(
      'a',
      {
        class: 'ks-health-link',
        testid: 'health-trace-link',
        title: `event row ${example.row} on process/thread ${example.lane}${dur}: open the trace view on it, selected`,
        attrs: {
          href: this.ctx.link({
            ...this.ctx.key,
            view: 'trace',
            ...traceWindow(example.ts_us, end, EXAMPLE_PAD_US),
            sel: String(example.row),
          }),
          target: '_top',
        },
      },
      example.name.slice(0, 40),
    );
  }

  private show(state: string, child: HTMLElement): void {
    replaceChildren(this.body, child);
    this.element.dataset.state = state;
  }
}
