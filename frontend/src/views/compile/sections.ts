// The Compile page's parts: advice, the steps that compiled, the compiles table (time by
// stage, cache, status, a jump to the trace), recompiles with the guard that failed,
// graph breaks and failures with editor links to the user's line, and how each log was
// read and aligned.

import type {
  Compile,
  CompileAdvice,
  CompileFailure,
  CompileResponse,
  GraphBreak,
  Recompile,
  SourceLine,
} from '../../api/types';
import { h, type Children } from '../../components/dom';
import { sourceAnchor } from '../../components/editor_links';
import { formatDuration } from '../../components/format';
import { inlineCode } from '../../components/inline_code';
import { cacheText, fileLine, placeText, sourceText, stageParts } from './model';

/** Where a compile opens in the trace view, or null when it is on no trace. */
export type TraceHref = (c: Compile) => string | null;

function place(file: string | null, line: number | null, text: string, testid: string): Children {
  return sourceAnchor(file, line, text, testid) ?? h('span', null, text);
}

function sourcePlace(s: SourceLine | null, testid: string): Children {
  return s ? place(s.file, s.line, sourceText(s), testid) : h('span', { class: 'ks-muted' }, '—');
}

export function adviceList(view: CompileResponse): HTMLElement {
  if (view.advice.length === 0) {
    return h('p', { class: 'ks-muted', testid: 'compile-no-advice' }, 'Nothing to change here.');
  }
  return h(
    'ul',
    { class: 'ks-cmp-advice', testid: 'compile-advice' },
    ...view.advice.map((a: CompileAdvice) =>
      h(
        'li',
        { dataset: { rule: a.rule } },
        h('span', { class: 'ks-cmp-rule' }, a.rule.replace(/_/g, ' ')),
        ' ',
        ...inlineCode(a.text),
        a.file && a.line !== null
          ? h(
              'span',
              { class: 'ks-small' },
              ' · ',
              place(a.file, a.line, 'open', 'compile-advice-link'),
            )
          : null,
      ),
    ),
  );
}

export function stepList(view: CompileResponse): HTMLElement {
  if (view.steps.length === 0) {
    return h(
      'p',
      { class: 'ks-muted', testid: 'compile-no-steps' },
      'No profiled step holds compile time (the compiles ran outside the traces, or no trace goes with the logs).',
    );
  }
  return h(
    'ul',
    { class: 'ks-cmp-steps', testid: 'compile-steps' },
    ...view.steps.map((s) =>
      h(
        'li',
        { dataset: { worker: s.worker, step: String(s.step) } },
        h('span', { class: 'ks-muted' }, `${s.worker}: `),
        ...inlineCode(s.text),
        h('span', { class: 'ks-muted' }, ` (of a ${formatDuration(s.step_us)} step)`),
      ),
    ),
  );
}

function stageBar(c: Compile): HTMLElement {
  const bar = h('div', { class: 'ks-cmp-stages' });
  for (const part of stageParts(c.stages)) {
    const seg = h('i', {
      class: `ks-cmp-stage ks-cmp-stage-${part.key}`,
      title: `${part.label}: ${formatDuration(part.us)}`,
    });
    seg.style.width = `${(100 * part.share).toFixed(2)}%`;
    bar.appendChild(seg);
  }
  return bar;
}

function compileRow(c: Compile, href: TraceHref): HTMLElement {
  const link = href(c);
  const b = c.backward;
  return h(
    'tr',
    { testid: 'compile-row', dataset: { compile: c.compile_id, rank: String(c.rank) } },
    h(
      'td',
      null,
      h('code', null, c.compile_id),
      c.rank === null ? null : h('span', { class: 'ks-muted' }, ` r${c.rank}`),
    ),
    h('td', null, place(c.file, c.line, placeText(c.frame, c.file, c.line), 'compile-frame-link')),
    h(
      'td',
      null,
      c.step === null ? '—' : `step ${c.step}`,
      link
        ? h(
            'a',
            {
              class: 'ks-small',
              testid: 'compile-trace-link',
              attrs: { href: link, target: '_top' },
            },
            ' trace ↗',
          )
        : null,
    ),
    h('td', { class: 'ks-num' }, formatDuration(c.dur_us)),
    h('td', null, stageBar(c)),
    h('td', { class: 'ks-num' }, b ? formatDuration(b.dur_us) : '—'),
    h('td', null, cacheText(c.cache)),
    h(
      'td',
      null,
      c.status,
      c.reason ? h('div', { class: 'ks-small ks-muted ks-cmp-reason' }, c.reason) : null,
    ),
  );
}

export function compileTable(view: CompileResponse, href: TraceHref): HTMLElement {
  const head = [
    'compile',
    'frame',
    'step',
    'time',
    'Dynamo · AOT · Inductor · code gen',
    'backward',
    'cache',
    'status',
  ];
  return h(
    'div',
    { class: 'ks-cmp-table-wrap' },
    h(
      'table',
      { class: 'ks-cmp-table', testid: 'compile-table' },
      h('thead', null, h('tr', null, ...head.map((t) => h('th', null, t)))),
      h('tbody', null, ...view.compiles.map((c) => compileRow(c, href))),
    ),
  );
}

export function recompileList(view: CompileResponse): HTMLElement {
  if (view.recompiles.length === 0) {
    return h(
      'p',
      { class: 'ks-muted', testid: 'compile-no-recompiles' },
      'No frame compiled twice.',
    );
  }
  return h(
    'ul',
    { class: 'ks-cmp-list', testid: 'compile-recompiles' },
    ...view.recompiles.map((r: Recompile) =>
      h(
        'li',
        { dataset: { compile: r.compile_id, kind: r.kind } },
        h('code', null, r.compile_id),
        ` ${placeText(r.frame, r.file, r.line)}${r.step === null ? '' : `, step ${r.step}`}: `,
        h('span', { class: 'ks-cmp-kind' }, r.kind),
        ' ',
        h('code', null, r.detail ?? r.guard ?? 'the log does not say why'),
        r.source
          ? h('span', { class: 'ks-small' }, ' from ', sourcePlace(r.source, 'compile-guard-link'))
          : null,
        r.reasons.length > 1
          ? h(
              'div',
              { class: 'ks-small ks-muted' },
              `failed guards, newest cache entry first: ${r.reasons.join(' · ')}`,
            )
          : null,
      ),
    ),
  );
}

export function graphBreakList(view: CompileResponse): HTMLElement {
  if (view.graph_breaks.length === 0) {
    return h('p', { class: 'ks-muted', testid: 'compile-no-breaks' }, 'No graph break.');
  }
  return h(
    'ul',
    { class: 'ks-cmp-list', testid: 'compile-graph-breaks' },
    ...view.graph_breaks.map((b: GraphBreak) =>
      h(
        'li',
        { dataset: { compile: b.compile_id } },
        h('code', null, b.compile_id),
        b.rank === null ? null : h('span', { class: 'ks-muted' }, ` rank ${b.rank}`),
        ' ',
        h('strong', null, ...inlineCode(b.reason)),
        ' at ',
        place(b.file, b.line, fileLine(b.file, b.line), 'compile-break-link'),
        b.user && (b.user.file !== b.file || b.user.line !== b.line)
          ? h('span', null, ', from your code at ', sourcePlace(b.user, 'compile-break-user-link'))
          : null,
        b.explanation
          ? h('div', { class: 'ks-small ks-muted' }, ...inlineCode(b.explanation))
          : null,
        ...b.hints.map((hint) => h('div', { class: 'ks-small' }, 'Hint: ', ...inlineCode(hint))),
      ),
    ),
  );
}

export function failureList(view: CompileResponse): HTMLElement | null {
  if (view.failures.length === 0) return null;
  return h(
    'ul',
    { class: 'ks-cmp-list', testid: 'compile-failures' },
    ...view.failures.map((f: CompileFailure) =>
      h(
        'li',
        { dataset: { compile: f.compile_id } },
        h('code', null, f.compile_id),
        ` ${f.frame ?? ''} `,
        h('strong', null, f.fail_type),
        f.reason ? h('pre', { class: 'ks-cmp-pre' }, f.reason) : null,
        f.user ? sourcePlace(f.user, 'compile-failure-link') : null,
        f.suppressed
          ? h(
              'div',
              { class: 'ks-small ks-muted' },
              'suppress_errors: the frame ran without compiling',
            )
          : null,
      ),
    ),
  );
}

export function logList(view: CompileResponse): HTMLElement {
  return h(
    'ul',
    { class: 'ks-cmp-list ks-small', testid: 'compile-logs' },
    ...view.logs.map((log) =>
      h(
        'li',
        { dataset: { file: log.file } },
        h('code', null, log.file),
        log.error
          ? h('span', { class: 'ks-error-message', role: 'alert' }, ` ${log.error}`)
          : ` · ${log.records} records of ${log.lines} lines${log.torch_version ? ` · torch ${log.torch_version}` : ''}${log.partial ? ' · partial' : ''}`,
        ...log.warnings.map((w) => h('div', { class: 'ks-muted' }, w)),
      ),
    ),
    ...view.alignments.map((a) =>
      h(
        'li',
        { testid: 'compile-alignment', dataset: { log: a.log } },
        h('code', null, a.log),
        ': ',
        a.note,
      ),
    ),
  );
}
