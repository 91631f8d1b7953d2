// The Overview's "Compile time in steps" section, for a run with TORCH_TRACE compile logs
// (the run's `compile` view): each step of this trace that spent time compiling, as "step
// 3: 3.5 s compiling frame 0/1 (`forward`, model.py:71)", its share of the step, and a
// link to the Compile page. Shown only when the run has compile logs; its own request,
// after the rest of the page.

import { describeError, isAbort } from '../../api/client';
import type { CompileResponse, StepCompileTime } from '../../api/types';
import { h, replaceChildren } from '../../components/dom';
import { formatPercent, share } from '../../components/format';
import { inlineCode } from '../../components/inline_code';
import { section } from '../page_kit';
import type { ViewContext } from '../types';

/** This worker's steps that compiled, from the view (its logs placed on its trace). */
export function workerSteps(
  view: CompileResponse,
  worker: string,
  span: string,
): StepCompileTime[] {
  const aligned = view.alignments.some((a) => a.worker === worker && a.span === span);
  return aligned ? view.steps.filter((s) => s.worker === worker) : [];
}

export class CompileStepsSection {
  readonly element: HTMLElement;
  private readonly body = h('div', null, h('p', { class: 'ks-muted ks-note' }, 'Reading…'));
  private disposed = false;

  constructor(private readonly ctx: ViewContext) {
    this.element = section(
      {
        anchor: 'compile',
        testid: 'overview-compile',
        title: 'Compile time in steps',
        intro: 'From the run’s torch.compile logs (TORCH_TRACE), placed on this trace’s clock.',
      },
      this.body,
    );
    this.element.hidden = !ctx.runViews.includes('compile');
    this.element.dataset.state = 'loading';
  }

  /** Loads and shows the steps; never rejects: a failure shows in the section. */
  async start(): Promise<void> {
    if (this.element.hidden) return;
    const { run, worker, span } = this.ctx.key;
    try {
      const view = await this.ctx.api.getReady('compile', { run, span }, this.ctx.signal);
      if (this.disposed) return;
      this.show(workerSteps(view, worker, span));
    } catch (error) {
      if (isAbort(error) || this.disposed) return;
      const text = `Could not read the compile logs: ${describeError(error)}`;
      replaceChildren(
        this.body,
        h('p', { class: 'ks-notice ks-notice-warn', role: 'alert' }, text),
      );
      this.element.dataset.state = 'error';
    }
  }

  dispose(): void {
    this.disposed = true;
  }

  private show(steps: StepCompileTime[]): void {
    const link = h(
      'a',
      {
        testid: 'overview-compile-link',
        attrs: { href: this.ctx.link({ view: 'compile' }), target: '_top' },
      },
      'All compiles, recompiles and graph breaks ↗',
    );
    const list = steps.length
      ? h(
          'ul',
          { class: 'ks-compile-steps', testid: 'overview-compile-steps' },
          ...steps.map((s) =>
            h(
              'li',
              { dataset: { step: String(s.step) } },
              ...inlineCode(s.text),
              h(
                'span',
                { class: 'ks-muted' },
                ` (${formatPercent(share(s.compile_us, s.step_us), 0)} of the step)`,
              ),
            ),
          ),
        )
      : h('p', { class: 'ks-muted' }, 'No step of this trace spent time compiling.');
    replaceChildren(this.body, list, h('p', { class: 'ks-small' }, link));
    this.element.dataset.state = 'ready';
  }
}
