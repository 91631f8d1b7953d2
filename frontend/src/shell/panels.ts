// The shell's panels in place of a view: loading progress, a worker's load error, and a
// plain message.

import type { StatusResponse } from '../api/types';
import { h } from '../components/dom';
import { formatBytes, formatPercent } from '../components/format';
import { loadProgress } from './selection';

/** Loading a worker-span: a progress bar over the bytes read, and what is going on. */
export function loadingPanel(
  title: string,
  status: StatusResponse | null,
  seconds?: number,
): HTMLElement {
  const progress = status ? loadProgress(status.bytes_done, status.bytes_total) : null;
  let detail = 'Waiting for the server…';
  if (status && progress) {
    if (progress.percent === null) detail = 'Starting…';
    else if (progress.analysing) detail = 'Read the whole file; analysing…';
    else {
      detail = `Read ${formatBytes(status.bytes_done)} of ${formatBytes(status.bytes_total)} (${formatPercent(progress.percent, 0)})`;
    }
  }
  if (seconds !== undefined && seconds >= 1) detail += ` · ${Math.floor(seconds)} s`;
  const bar = h('div', { class: 'ks-progress' }, h('div', { class: 'ks-progress-bar' }));
  const fill = bar.firstElementChild as HTMLElement;
  if (progress?.percent != null) {
    fill.style.width = `${progress.percent}%`;
  } else {
    bar.classList.add('ks-progress-indeterminate');
  }
  bar.setAttribute('role', 'progressbar');
  if (progress?.percent != null)
    bar.setAttribute('aria-valuenow', String(Math.round(progress.percent)));
  return h(
    'div',
    {
      class: 'ks-panel ks-loading',
      testid: 'loading',
      dataset: {
        bytesDone: String(status?.bytes_done ?? 0),
        bytesTotal: String(status?.bytes_total ?? 0),
      },
    },
    h('h3', null, title),
    bar,
    h('p', { class: 'ks-muted' }, detail),
  );
}

/** A worker-span that could not be loaded: the error, and where in which file. */
export function workerErrorPanel(status: StatusResponse): HTMLElement {
  const err = status.error;
  return h(
    'div',
    {
      class: 'ks-panel ks-error',
      testid: 'worker-error',
      role: 'alert',
      dataset: { run: status.run, worker: status.worker, span: status.span },
    },
    h('h3', null, `${status.worker} (span ${status.span}) could not be loaded`),
    h(
      'p',
      { class: 'ks-error-message', testid: 'worker-error-message' },
      err?.message ?? 'Unknown error',
    ),
    h(
      'dl',
      { class: 'ks-fields ks-error-fields' },
      err?.file
        ? [h('dt', null, 'File'), h('dd', { testid: 'worker-error-file' }, err.file)]
        : null,
      err?.kind ? [h('dt', null, 'Kind'), h('dd', null, err.kind)] : null,
      err?.offset != null
        ? [h('dt', null, 'Byte offset'), h('dd', null, String(err.offset))]
        : null,
    ),
    h(
      'p',
      { class: 'ks-muted' },
      'The other workers of this run are not affected: pick one in the Workers list.',
    ),
  );
}

/** A title and a message; an error panel when the test id ends in "error". */
export function messagePanel(testid: string, title: string, message: string): HTMLElement {
  return h(
    'div',
    { class: `ks-panel${testid.endsWith('error') ? ' ks-error' : ''}`, testid },
    h('h3', null, title),
    h('p', null, message),
  );
}
