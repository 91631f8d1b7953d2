// The selected event's details: name, times, track, arguments, input shapes, call stack
// frames as path:line, its enclosing ops, and buttons to jump to linked events (the GPU
// kernel it launched, the op that launched it, its backward / forward op, flows).

import { sourceAnchor, stackLinkNote } from '../../components/editor_links';
import { parseFrame as parseSourceFrame } from '../../components/source_link';
import type {
  EventLink,
  EventResponse,
  RangeSummaryResponse,
  RangeSummaryRow,
} from '../../api/types';
import { h, type Attrs, type Child } from '../../components/dom';
import { formatCount, formatTimeOffset } from '../../components/format';
import { VirtualTable, type Column } from '../../components/table';
import { formatSpan } from './axis';

import {
  ARGS_SHOWN_ELSEWHERE,
  formatArg,
  parseFrame,
  relationLabel,
  relationRank,
  shapeLines,
} from './model';

export interface JumpTarget {
  row: number;
  track: string | null;
  worker: string | null;
}

export interface DetailsContext {
  origin: number;
  worker: string | null;
  trackLabel: (id: string | null) => string;
  jump: (target: JumpTarget) => void;
  zoom: () => void;
}

function field(label: string, value: Child, testid?: string): Child[] {
  return [h('dt', null, label), h('dd', testid ? { testid } : null, value)];
}

function section(title: string, testid: string, ...children: Child[]): HTMLElement {
  return h(
    'section',
    { class: 'ks-ev-section', testid },
    h('h4', { class: 'ks-ev-section-title' }, title),
    ...children,
  );
}

/** A button that selects another event on the timeline (a linked one, a frame, an op). */
function jumpButton(
  ctx: DetailsContext,
  target: Omit<JumpTarget, 'worker'>,
  attrs: Attrs,
  ...content: Child[]
): HTMLElement {
  const click = (): void => ctx.jump({ ...target, worker: ctx.worker });
  return h('button', { ...attrs, attrs: { type: 'button' }, on: { click } }, ...content);
}

function linkButton(link: EventLink, ctx: DetailsContext): HTMLElement {
  return jumpButton(
    ctx,
    { row: link.row, track: link.track },
    {
      class: 'ks-ev-link',
      testid: `trace-link-${link.relation}`,
      title: `${link.name} (${link.category}) — select it on the timeline`,
      dataset: { row: String(link.row) },
    },
    h('span', { class: 'ks-ev-link-kind' }, relationLabel(link)),
    h('span', { class: 'ks-ev-link-name' }, link.name),
    h('span', { class: 'ks-ev-link-dur' }, formatSpan(link.dur)),
  );
}

function eventHead(ev: EventResponse, ctx: DetailsContext): HTMLElement {
  return h(
    'div',
    { class: 'ks-ev-head' },
    h('h3', { class: 'ks-ev-name', testid: 'trace-details-name', title: ev.name }, ev.name),
    h(
      'div',
      { class: 'ks-ev-badges' },
      h('span', { class: 'ks-ev-badge' }, ev.category || ev.kind),
      ev.kind && ev.kind !== ev.category.toLowerCase()
        ? h('span', { class: 'ks-ev-badge ks-ev-badge-muted' }, ev.kind.replace(/_/g, ' '))
        : null,
      ev.health.length
        ? h(
            'span',
            {
              class: 'ks-ev-badge ks-ev-badge-flagged',
              testid: 'trace-details-health',
              title: 'Trace health checks that flag this event (see the Overview)',
            },
            `flagged: ${ev.health.join(', ')}`,
          )
        : null,
      h(
        'button',
        {
          class: 'ks-link-button ks-ev-zoom',
          title: 'Zoom the timeline to this event (F)',
          attrs: { type: 'button' },
          on: { click: () => ctx.zoom() },
        },
        'Zoom to event',
      ),
    ),
  );
}

function eventFields(ev: EventResponse, ctx: DetailsContext): HTMLElement {
  const start = ev.ts - ctx.origin;
  const instant = ev.phase === 'instant';
  const thread = [ev.thread || ev.tid, ev.process || `pid ${ev.pid}`].join(' · ');
  return h(
    'dl',
    { class: 'ks-ev-fields' },
    field('Duration', instant ? 'instant' : formatSpan(ev.dur), 'trace-details-duration'),
    field('Start', formatTimeOffset(start)),
    !instant ? field('End', formatTimeOffset(start + ev.dur)) : null,
    field('Category', ev.category || '—'),
    field('Track', ctx.trackLabel(ev.track)),
    field('Thread', thread),
    ev.depth !== null ? field('Depth', String(ev.depth)) : null,
    field('Row', String(ev.row)),
  );
}

/** The ops the event is inside, outermost first; those with a row select it. */
function ancestorsSection(ev: EventResponse, ctx: DetailsContext): HTMLElement | null {
  if (!ev.ancestors.length) return null;
  const crumb = (a: EventResponse['ancestors'][number]): Child =>
    a.row !== null
      ? jumpButton(
          ctx,
          { row: a.row, track: ev.track },
          { class: 'ks-ev-crumb', title: `Select ${a.name}` },
          a.name,
        )
      : a.name;
  return section(
    'Inside',
    'trace-details-ancestors',
    h(
      'ol',
      { class: 'ks-ev-crumbs' },
      ev.ancestors.map((a) => h('li', null, crumb(a))),
    ),
  );
}

function linksSection(ev: EventResponse, ctx: DetailsContext): HTMLElement | null {
  const links = ev.flows
    .slice()
    .sort((a, b) => relationRank(a.relation) - relationRank(b.relation));
  if (!links.length) return null;
  return section(
    'Linked events',
    'trace-details-links',
    h(
      'div',
      { class: 'ks-ev-links' },
      links.map((l) => linkButton(l, ctx)),
    ),
  );
}

function shapesSection(ev: EventResponse): HTMLElement | null {
  const shapes = shapeLines(ev.input_shapes);
  if (!shapes.length) return null;
  return section(
    'Input shapes',
    'trace-details-shapes',
    h(
      'ol',
      { class: 'ks-ev-shapes', attrs: { start: 0 } },
      shapes.map((s) => h('li', null, h('code', null, s))),
    ),
  );
}

/** "↗" opening a frame's file in the editor; hidden while no editor can open it. */
function editorIcon(file: string | null, line: number | null): HTMLElement | null {
  const anchor = sourceAnchor(file, line, '↗', 'trace-frame-editor-link');
  anchor?.classList.add('ks-editor-link-icon');
  return anchor;
}

/** The call stack as path:line (and function); frames with a row select that event. */
function stackSection(ev: EventResponse, ctx: DetailsContext): HTMLElement | null {
  if (!ev.call_stack.length) return null;
  const frameItem = (frame: EventResponse['call_stack'][number]): HTMLElement => {
    const f = parseFrame(frame.name);
    const content: Child[] = [
      h('code', { class: 'ks-ev-loc', title: f.raw }, f.location),
      f.func ? h('span', { class: 'ks-ev-func' }, f.func) : null,
    ];
    const attrs = { class: 'ks-ev-frame', title: 'Select this frame on the timeline' };
    const source = parseSourceFrame(frame.name);
    return h(
      'li',
      null,
      frame.row !== null
        ? jumpButton(ctx, { row: frame.row, track: null }, attrs, ...content)
        : content,
      editorIcon(source.file, source.line),
    );
  };
  const list = h('ol', { class: 'ks-ev-stack' }, ev.call_stack.map(frameItem));
  return section(
    ev.call_stack_source === 'python'
      ? 'Python stack (innermost first)'
      : 'Call stack (innermost first)',
    'trace-details-stack',
    list,
    stackLinkNote(list),
  );
}

function argsSection(ev: EventResponse): HTMLElement {
  const args = Object.entries(ev.args).filter(([key]) => !ARGS_SHOWN_ELSEWHERE.has(key));
  const argRow = ([key, value]: [string, unknown]): HTMLElement =>
    h('tr', null, h('th', { attrs: { scope: 'row' } }, key), h('td', null, formatArg(value)));
  return section(
    'Arguments',
    'trace-details-args',
    args.length
      ? h('table', { class: 'ks-ev-args' }, h('tbody', null, args.map(argRow)))
      : h('p', { class: 'ks-muted ks-small' }, 'No arguments.'),
  );
}

export function renderEventDetails(ev: EventResponse, ctx: DetailsContext): HTMLElement {
  return h(
    'div',
    { class: 'ks-ev', testid: 'trace-details', dataset: { row: String(ev.row), name: ev.name } },
    eventHead(ev, ctx),
    h(
      'div',
      { class: 'ks-ev-cols' },
      h(
        'div',
        { class: 'ks-ev-col' },
        eventFields(ev, ctx),
        ancestorsSection(ev, ctx),
        linksSection(ev, ctx),
        shapesSection(ev),
      ),
      h('div', { class: 'ks-ev-col' }, stackSection(ev, ctx), argsSection(ev)),
    ),
  );
}

// ----- range summary -----

/** A right-aligned column of one number per row, shown through `text`. */
function numberColumn(
  key: string,
  label: string,
  minWidth: number,
  value: (row: RangeSummaryRow) => number,
  text: (value: number) => string,
): Column<RangeSummaryRow> {
  return {
    key,
    label,
    align: 'right',
    minWidth,
    cell: (row) => text(value(row)),
    sortValue: value,
  };
}

export function renderRangeSummary(
  resp: RangeSummaryResponse,
  trackCount: number,
): { element: HTMLElement; table: VirtualTable<RangeSummaryRow> } {
  const span = resp.t1 - resp.t0;
  const average = (row: RangeSummaryRow): number => (row.count ? row.total_us / row.count : 0);
  const columns: Column<RangeSummaryRow>[] = [
    {
      key: 'name',
      label: 'Name',
      grow: 3,
      minWidth: 260,
      cell: (row) => h('span', { title: row.name }, row.name),
      sortValue: (row) => row.name,
    },
    numberColumn('count', 'Count', 70, (row) => row.count, formatCount),
    {
      ...numberColumn('total', 'Total (in range)', 120, (row) => row.total_us, formatSpan),
      cellAttrs: (row) => ({ 'data-value': String(row.total_us) }),
    },
    numberColumn('self', 'Self', 100, (row) => row.self_us, formatSpan),
    numberColumn('avg', 'Average', 100, average, formatSpan),
  ];
  const table = new VirtualTable<RangeSummaryRow>({
    columns,
    rows: resp.rows,
    rowHeight: 28,
    maxHeight: 1200,
    testid: 'trace-range-table',
    caption: 'Events in the selected range, per name',
    emptyText: 'No events of the selected tracks in this range.',
    sort: { key: 'total', dir: 'desc' },
  });
  const element = h(
    'div',
    {
      class: 'ks-range',
      testid: 'trace-range-summary',
      dataset: { events: String(resp.event_count) },
    },
    h(
      'p',
      { class: 'ks-range-head' },
      h('strong', null, formatSpan(span)),
      ` selected on ${trackCount} track${trackCount === 1 ? '' : 's'} · ${formatCount(resp.event_count)} events · ${formatCount(resp.rows.length)} names`,
      resp.truncated ? ' (largest names only)' : '',
      h('span', { class: 'ks-muted' }, ' · F zooms to it, Esc clears it'),
    ),
    table.element,
  );
  return { element, table };
}
