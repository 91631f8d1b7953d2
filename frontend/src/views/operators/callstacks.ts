// The call-stack panel of the Operator page: the distinct call stacks of one operator row
// (from the `callstacks` route), each with its own statistics and its frames. A frame with
// a source position shows "path:line" with a copy button; the location is a link that
// opens the file in the user's editor (components/editor_links.ts), inside VS Code's
// webview through its jump-to-source message (components/source_link.ts).

import { describeError, isAbort, isStillLoading, type ApiClient } from '../../api/client';
import type {
  CallStackRow,
  CallStacksResponse,
  OperatorGroupBy,
  OperatorRow,
  SpanKey,
  StackFrame,
} from '../../api/types';
import { h, replaceChildren } from '../../components/dom';
import { formatCount, formatDuration } from '../../components/format';
import {
  copyText,
  frameLocation,
  jumpMessage,
  postJumpToSource,
  type EditorTarget,
} from '../../components/source_link';
import { sourceAnchor, stackLinkNote } from '../../components/editor_links';
import { callStackParams, callStackSourceLabel, shapeText } from './model';

const FIRST_STACKS = 40;

export interface CallStackPanelOptions {
  api: ApiClient;
  key: SpanKey;
  signal: AbortSignal;
  device: boolean;
  editor: EditorTarget;
  onClose: () => void;
}

function stat(label: string, value: string): HTMLElement {
  return h('span', null, `${label} `, h('strong', null, value));
}

async function copyLocation(button: HTMLButtonElement, text: string, target: HTMLElement) {
  const ok = await copyText(text);
  button.textContent = ok ? 'Copied' : 'Select and copy';
  button.classList.toggle('ks-copied', ok);
  button.dataset.copied = ok ? 'true' : 'false';
  if (!ok) {
    // Leave the text selected so Ctrl+C / Cmd+C copies it.
    const range = document.createRange();
    range.selectNodeContents(target);
    const selection = window.getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
  }
  setTimeout(() => {
    button.textContent = 'Copy';
    button.classList.remove('ks-copied');
  }, 1600);
}

export function frameItem(frame: StackFrame, editor: EditorTarget): HTMLElement {
  const location = frameLocation(frame);
  const fn = h('span', { class: 'ks-frame-fn', title: frame.function }, frame.function);
  if (location === null) {
    return h(
      'li',
      { class: 'ks-frame ks-frame-nofile', testid: 'stack-frame' },
      fn,
      h('span', { class: 'ks-muted ks-small' }, 'no source position'),
      h('span'),
    );
  }
  const jump = editor === 'vscode' ? jumpMessage(frame) : null;
  const locText = h(
    'code',
    { class: 'ks-frame-loc ks-mono', testid: 'frame-location', title: location },
    location,
  );
  const where = jump
    ? h(
        'button',
        {
          class: 'ks-frame-open',
          testid: 'frame-open',
          title: `Open ${location} in VS Code`,
          attrs: { type: 'button' },
          on: { click: () => postJumpToSource(jump) },
        },
        locText,
      )
    : (sourceAnchor(frame.file, frame.line, locText, 'frame-editor-link') ?? locText);
  const copy = h(
    'button',
    {
      class: 'ks-btn ks-btn-small',
      testid: 'frame-copy',
      title: `Copy ${location}`,
      attrs: { type: 'button', 'aria-label': `Copy ${location}` },
    },
    'Copy',
  );
  copy.addEventListener('click', () => void copyLocation(copy, location, locText));
  return h(
    'li',
    {
      class: 'ks-frame',
      testid: 'stack-frame',
      dataset: { location, file: frame.file ?? '', line: String(frame.line ?? '') },
    },
    fn,
    where,
    h('span', { class: 'ks-frame-actions' }, copy),
  );
}

function stackCard(stack: CallStackRow, index: number, opts: CallStackPanelOptions): HTMLElement {
  const stats = h(
    'div',
    { class: 'ks-stack-stats' },
    stat('Calls', formatCount(stack.calls)),
    opts.device ? stat('Device self', formatDuration(stack.device_self_us)) : null,
    opts.device ? stat('Device total', formatDuration(stack.device_total_us)) : null,
    stat('Host self', formatDuration(stack.host_self_us)),
    stat('Host total', formatDuration(stack.host_total_us)),
  );
  const frames = stack.frames.length
    ? h(
        'ol',
        { class: 'ks-frames' },
        stack.frames.map((f) => frameItem(f, opts.editor)),
      )
    : h('p', { class: 'ks-muted ks-small ks-note' }, 'Calls without a recorded call stack.');
  return h(
    'article',
    {
      class: 'ks-stack-card',
      testid: 'callstack',
      dataset: { index: String(index), calls: String(stack.calls) },
    },
    stats,
    frames,
  );
}

export class CallStackPanel {
  readonly element: HTMLElement;
  private readonly title: HTMLElement;
  private readonly meta: HTMLElement;
  private readonly body: HTMLElement;
  private controller: AbortController | undefined;
  private readonly opts: CallStackPanelOptions;
  /** The row shown, as "name" or "name + shape". */
  current: { row: OperatorRow; groupBy: OperatorGroupBy } | undefined;

  constructor(opts: CallStackPanelOptions) {
    this.opts = opts;
    this.title = h('h4', { testid: 'callstack-title' });
    this.meta = h('p', { class: 'ks-stack-meta', testid: 'callstack-meta' });
    this.body = h('div', { class: 'ks-stack-list' });
    this.element = h(
      'section',
      {
        class: 'ks-section ks-card ks-stack-panel',
        testid: 'callstack-panel',
        dataset: { anchor: 'callstacks', state: 'closed' },
        attrs: { 'aria-live': 'polite' },
      },
      h(
        'div',
        { class: 'ks-stack-head' },
        this.title,
        h(
          'button',
          {
            class: 'ks-btn ks-btn-small',
            testid: 'callstack-close',
            attrs: { type: 'button', 'aria-label': 'Close the call stacks' },
            on: { click: () => opts.onClose() },
          },
          'Close',
        ),
      ),
      this.meta,
      this.body,
    );
    this.element.hidden = true;
  }

  /** Loads and shows the call stacks of a row. */
  async show(row: OperatorRow, groupBy: OperatorGroupBy): Promise<void> {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const onAbort = (): void => controller.abort();
    this.opts.signal.addEventListener('abort', onAbort, { once: true });
    this.current = { row, groupBy };
    this.element.hidden = false;
    this.element.dataset.state = 'loading';
    this.element.dataset.op = row.name;
    this.title.textContent = `Call stacks of ${row.name}`;
    this.meta.textContent =
      groupBy === 'shape' ? `Input shape ${shapeText(row.input_shape)}` : 'All input shapes';
    replaceChildren(
      this.body,
      h('p', { class: 'ks-muted', testid: 'callstack-loading' }, 'Loading call stacks…'),
    );
    try {
      const result = await this.opts.api.get(
        'callstacks',
        { ...this.opts.key, ...callStackParams(row, groupBy) },
        controller.signal,
      );
      if (controller.signal.aborted) return;
      if (isStillLoading(result)) {
        this.showError('The trace is being reloaded; try again in a moment.');
        return;
      }
      this.render(result, groupBy);
    } catch (error) {
      if (isAbort(error) || controller.signal.aborted) return;
      this.showError(describeError(error));
    } finally {
      this.opts.signal.removeEventListener('abort', onAbort);
    }
  }

  close(): void {
    this.controller?.abort();
    this.current = undefined;
    this.element.hidden = true;
    this.element.dataset.state = 'closed';
    delete this.element.dataset.op;
    replaceChildren(this.body);
  }

  dispose(): void {
    this.controller?.abort();
    this.element.remove();
  }

  private showError(message: string): void {
    this.element.dataset.state = 'error';
    replaceChildren(
      this.body,
      h('p', { class: 'ks-notice ks-notice-warn', testid: 'callstack-error' }, message),
    );
  }

  private render(data: CallStacksResponse, groupBy: OperatorGroupBy): void {
    const parts = [
      groupBy === 'shape' ? `Input shape ${shapeText(data.input_shape)}` : 'All input shapes',
      `${formatCount(data.calls)} calls`,
      `${formatCount(data.stacks.length)} distinct call stack${data.stacks.length === 1 ? '' : 's'}`,
      `from ${callStackSourceLabel(data.source)}`,
      'innermost frame first',
    ];
    this.meta.textContent = parts.join(' · ');
    this.element.dataset.state = 'ready';
    this.element.dataset.stacks = String(data.stacks.length);
    if (data.stacks.length === 0) {
      replaceChildren(
        this.body,
        h('p', { class: 'ks-muted' }, 'No calls of this operator in this span.'),
      );
      return;
    }
    const first = data.stacks.slice(0, FIRST_STACKS).map((s, i) => stackCard(s, i, this.opts));
    const rest = data.stacks.length - first.length;
    const more =
      rest > 0
        ? h(
            'button',
            {
              class: 'ks-btn',
              testid: 'callstack-more',
              attrs: { type: 'button' },
              on: {
                click: () => {
                  more?.replaceWith(
                    ...data.stacks
                      .slice(FIRST_STACKS)
                      .map((s, i) => stackCard(s, FIRST_STACKS + i, this.opts)),
                  );
                },
              },
            },
            `Show ${formatCount(rest)} more call stacks`,
          )
        : null;
    replaceChildren(this.body, first, more);
    this.body.prepend(stackLinkNote(this.body));
  }
}
