// The side bar's "Compare with…": picks the target of the Diff page among every span of
// every worker of every run in the listing. The choice lives in the URL
// (p.kinetoscope.target_{run,worker,span}, views/diff/state.ts) like the rest of the
// selection; while one is chosen the shell offers the Diff page beside the worker's views.

import type { RunInfo } from '../api/types';
import { h, replaceChildren } from '../components/dom';
import { HashParamStore } from '../components/hash_params';
import { selectField, type SelectField } from '../components/table_tools';
import { diffView } from '../views/diff';
import { inListOrder } from '../views/registry';
import {
  NO_TARGET as NONE,
  readTarget,
  TARGET_KEYS,
  targetFromOption as parseOption,
  targetOption as optionValue,
  targetUpdate,
  type Target,
} from '../views/diff/state';
import { findWorker, runLabel, spanLabel, workerLabel } from './selection';

/** The view the control opens. */
export const DIFF_VIEW = diffView.id;

/** One group of options per run: "run · worker · span" (the closed box shows the run). */
function targetOptions(runs: readonly RunInfo[]): HTMLElement[] {
  return runs.map((run) =>
    h(
      'optgroup',
      { attrs: { label: runLabel(run) } },
      run.workers.flatMap((worker) =>
        worker.spans.map((span) =>
          h(
            'option',
            {
              attrs: {
                value: optionValue({ run: run.name, worker: worker.name, span: span.name }),
              },
            },
            `${run.name} · ${workerLabel(worker)} · ${spanLabel(span)}`,
          ),
        ),
      ),
    ),
  );
}

/** The chosen target, whole, for the line under the box (the box shows only its option's
 * text, cut at the side bar's width, and no run). */
function targetText(runs: readonly RunInfo[], target: Target, span: string | undefined): string {
  const run = runs.find((r) => r.name === target.run);
  const worker = run?.workers.find((w) => w.name === target.worker);
  const spanInfo = worker?.spans.find((s) => s.name === span);
  return [
    run ? runLabel(run) : target.run,
    worker ? workerLabel(worker) : target.worker,
    spanInfo ? `span ${spanLabel(spanInfo)}` : span ? `span ${span}` : 'first span',
  ].join(' · ');
}

export class CompareControl {
  readonly field: SelectField;
  private readonly store = new HashParamStore(TARGET_KEYS);
  private listed = '';
  private readonly chosen = h('div', { class: 'ks-side-target', testid: 'compare-target' });

  /** `onChange` runs after the URL holds the new target (or none). */
  constructor(onChange: () => void) {
    this.field = selectField('Compare with…', 'compare-select', [], NONE, (value) => {
      this.store.write(targetUpdate(parseOption(value)));
      onChange();
    });
    this.field.el.title = 'Compare the shown trace (the base) with another: opens the Diff page';
    this.field.el.append(this.chosen);
    this.chosen.hidden = true;
  }

  /** The target in the URL, or null. */
  target(): Target | null {
    return readTarget(this.store.read());
  }

  /** A link naming the target run alone (`kinetoscope diff --target RUN`'s way) gets its
   *  first worker, as the CLI and the route default it. */
  private defaultWorker(runs: readonly RunInfo[]): void {
    const named = this.store.read();
    if (!named.target_run || named.target_worker) return;
    const first = runs.find((r) => r.name === named.target_run)?.workers[0]?.name;
    if (first) this.store.write({ target_worker: first });
  }

  /** The worker's views, with the Diff page while a target is chosen, in the Views list's
   *  order (the old plugin's, whatever order `status.views` has). */
  offer(views: readonly string[]): string[] {
    return inListOrder(this.target() ? [...views, DIFF_VIEW] : views);
  }

  /** The choices from the listing (rebuilt only when it changed), the URL's target chosen;
   *  whether the chosen target changed (the URL was edited, or went back or forward). */
  render(runs: readonly RunInfo[]): boolean {
    this.defaultWorker(runs);
    const select = this.field.select;
    const before = select.value;
    const listed = JSON.stringify(
      runs.map((r) => [r.name, r.workers.map((w) => [w.name, w.spans.map((s) => s.name)])]),
    );
    if (listed !== this.listed) {
      this.listed = listed;
      replaceChildren(
        select,
        h('option', { attrs: { value: NONE } }, '— nothing —'),
        targetOptions(runs),
      );
    }
    const target = this.target();
    // A target without a span is the worker's first span, as everywhere.
    const first = target && !target.span ? findWorker(runs, { ...target, span: '' }) : undefined;
    const span = target?.span ?? first?.spans[0]?.name;
    const value = target ? optionValue({ ...target, ...(span ? { span } : {}) }) : NONE;
    select.value = value;
    // A target whose span is left out (the first) or is not listed: add it as it is.
    if (select.value !== value && target) {
      select.append(h('option', { attrs: { value } }, `${target.run} · ${target.worker}`));
      select.value = value;
    }
    select.disabled = runs.length === 0;
    this.chosen.hidden = !target;
    this.chosen.textContent = target ? `Target: ${targetText(runs, target, span)}` : '';
    select.title = this.chosen.textContent;
    return select.value !== before;
  }
}
