// The selected event's details: name, times, track, arguments, input shapes, call stack
// frames as path:line, its enclosing ops, and buttons to jump to linked events (the GPU
// kernel it launched, the op that launched it, its backward / forward op, flows).

import type {
  EventLink,
  EventResponse,
  RangeSummaryResponse,
  RangeSummaryRow,
} from '../../api/types';
import { h, type Child } from '../../components/dom';
import { formatCount } from '../../components/format';
import { VirtualTable, type Column } from '../../components/table';
import { formatSpan, formatTimePrecise } from './axis';

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

function linkButton(link: EventLink, ctx: DetailsContext): HTMLElement {
  return h(
    'button',
    {
      class: 'ks-ev-link',
      testid: `trace-link-${link.relation}`,
      title: `${link.name} (${link.category}) — select it on the timeline`,
      attrs: { type: 'button' },
      dataset: { row: String(link.row) },
      on: { click: () => ctx.jump({ row: link.row, track: link.track, worker: ctx.worker }) },
    },
    h('span', { class: 'ks-ev-link-kind' }, relationLabel(link)),
    h('span', { class: 'ks-ev-link-name' }, link.name),
    h('span', { class: 'ks-ev-link-dur' }, formatSpan(link.dur)),
  );
}

export function renderEventDetails(ev: EventResponse, ctx: DetailsContext): HTMLElement {
  const start = ev.ts - ctx.origin;
  const links = ev.flows
    .slice()
    .sort((a, b) => relationRank(a.relation) - relationRank(b.relation));
  const shapes = shapeLines(ev.input_shapes);
  const args = Object.entries(ev.args).filter(([key]) => !ARGS_SHOWN_ELSEWHERE.has(key));
  const thread = [ev.thread || ev.tid, ev.process || `pid ${ev.pid}`].join(' · ');
  return h(
    'div',
    { class: 'ks-ev', testid: 'trace-details', dataset: { row: String(ev.row), name: ev.name } },
    h(
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
    ),
    h(
      'div',
      { class: 'ks-ev-cols' },
      h(
        'div',
        { class: 'ks-ev-col' },
        h(
          'dl',
          { class: 'ks-ev-fields' },
          field(
            'Duration',
            ev.phase === 'instant' ? 'instant' : formatSpan(ev.dur),
            'trace-details-duration',
          ),
          field('Start', formatTimePrecise(start)),
          ev.phase !== 'instant' ? field('End', formatTimePrecise(start + ev.dur)) : null,
          field('Category', ev.category || '—'),
          field('Track', ctx.trackLabel(ev.track)),
          field('Thread', thread),
          ev.depth !== null ? field('Depth', String(ev.depth)) : null,
          field('Row', String(ev.row)),
        ),
        ev.ancestors.length
          ? section(
              'Inside',
              'trace-details-ancestors',
              h(
                'ol',
                { class: 'ks-ev-crumbs' },
                ev.ancestors.map((a) =>
                  h(
                    'li',
                    null,
                    a.row !== null
                      ? h(
                          'button',
                          {
                            class: 'ks-ev-crumb',
                            title: `Select ${a.name}`,
                            attrs: { type: 'button' },
                            on: {
                              click: () => {
                                if (a.row !== null)
                                  ctx.jump({ row: a.row, track: ev.track, worker: ctx.worker });
                              },
                            },
                          },
                          a.name,
                        )
                      : a.name,
                  ),
                ),
              ),
            )
          : null,
        links.length
          ? section(
              'Linked events',
              'trace-details-links',
              h(
                'div',
                { class: 'ks-ev-links' },
                links.map((l) => linkButton(l, ctx)),
              ),
            )
          : null,
        shapes.length
          ? section(
              'Input shapes',
              'trace-details-shapes',
              h(
                'ol',
                { class: 'ks-ev-shapes', attrs: { start: 0 } },
                shapes.map((s) => h('li', null, h('code', null, s))),
              ),
            )
          : null,
      ),
      h(
        'div',
        { class: 'ks-ev-col' },
        ev.call_stack.length
          ? section(
              ev.call_stack_source === 'python'
                ? 'Python stack (innermost first)'
                : 'Call stack (innermost first)',
              'trace-details-stack',
              h(
                'ol',
                { class: 'ks-ev-stack' },
                ev.call_stack.map((frame) => {
                  const f = parseFrame(frame.name);
                  const content: Child[] = [
                    h('code', { class: 'ks-ev-loc', title: f.raw }, f.location),
                    f.func ? h('span', { class: 'ks-ev-func' }, f.func) : null,
                  ];
                  return h(
                    'li',
                    null,
                    frame.row !== null
                      ? h(
                          'button',
                          {
                            class: 'ks-ev-frame',
                            title: 'Select this frame on the timeline',
                            attrs: { type: 'button' },
                            on: {
                              click: () => {
                                if (frame.row !== null)
                                  ctx.jump({ row: frame.row, track: null, worker: ctx.worker });
                              },
                            },
                          },
                          ...content,
                        )
                      : content,
                  );
                }),
              ),
            )
          : null,
        section(
          'Arguments',
          'trace-details-args',
          args.length
            ? h(
                'table',
                { class: 'ks-ev-args' },
                h(
                  'tbody',
                  null,
                  args.map(([key, value]) =>
                    h(
                      'tr',
                      null,
                      h('th', { attrs: { scope: 'row' } }, key),
                      h('td', null, formatArg(value)),
                    ),
                  ),
                ),
              )
            : h('p', { class: 'ks-muted ks-small' }, 'No arguments.'),
        ),
      ),
    ),
  );
}

// ----- range summary -----

export function renderRangeSummary(
  resp: RangeSummaryResponse,
  trackCount: number,
): { element: HTMLElement; table: VirtualTable<RangeSummaryRow> } {
  const span = resp.t1 - resp.t0;
  const columns: Column<RangeSummaryRow>[] = [
    {
      key: 'name',
      label: 'Name',
      grow: 3,
      minWidth: 260,
      cell: (row) => h('span', { title: row.name }, row.name),
      sortValue: (row) => row.name,
    },
    {
      key: 'count',
      label: 'Count',
      align: 'right',
      minWidth: 70,
      cell: (row) => formatCount(row.count),
      sortValue: (row) => row.count,
    },
    {
      key: 'total',
      label: 'Total (in range)',
      align: 'right',
      minWidth: 120,
      cell: (row) => formatSpan(row.total_us),
      sortValue: (row) => row.total_us,
      cellAttrs: (row) => ({ 'data-value': String(row.total_us) }),
    },
    {
      key: 'self',
      label: 'Self',
      align: 'right',
      minWidth: 100,
      cell: (row) => formatSpan(row.self_us),
      sortValue: (row) => row.self_us,
    },
    {
      key: 'avg',
      label: 'Average',
      align: 'right',
      minWidth: 100,
      cell: (row) => formatSpan(row.count ? row.total_us / row.count : 0),
      sortValue: (row) => (row.count ? row.total_us / row.count : 0),
    },
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
