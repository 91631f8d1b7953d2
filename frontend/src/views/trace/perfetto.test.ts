import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  openInPerfetto,
  perfettoMessage,
  PerfettoTimeout,
  waitForPong,
  type MessageSource,
  type MessageTarget,
} from './perfetto';

class FakeSource implements MessageSource {
  listeners = new Set<(e: MessageEvent) => void>();
  addEventListener(_type: 'message', fn: (e: MessageEvent) => void): void {
    this.listeners.add(fn);
  }
  removeEventListener(_type: 'message', fn: (e: MessageEvent) => void): void {
    this.listeners.delete(fn);
  }
  emit(source: unknown, data: unknown): void {
    for (const fn of [...this.listeners]) fn({ source, data } as MessageEvent);
  }
}

describe('Perfetto postMessage protocol', () => {
  it('pings until the opened page answers PONG, then stops', async () => {
    const source = new FakeSource();
    const sent: [unknown, string][] = [];
    const target: MessageTarget = {
      closed: false,
      postMessage: (message, origin) => {
        sent.push([message, origin]);
        if (sent.length === 3) setTimeout(() => source.emit(target, 'PONG'), 0);
      },
    };
    source.emit(target, 'not yet');
    await waitForPong(target, source, 'https://ui.perfetto.dev', 5000, 5);
    assert.ok(sent.length >= 3);
    assert.deepEqual(sent[0], ['PING', 'https://ui.perfetto.dev']);
    assert.equal(source.listeners.size, 0, 'the listener is removed');
  });

  it('ignores PONG from other windows and fails when the tab closes', async () => {
    const source = new FakeSource();
    const target = { closed: false, postMessage: () => source.emit({}, 'PONG') };
    const waiting = waitForPong(target, source, 'https://ui.perfetto.dev', 5000, 5);
    setTimeout(() => {
      target.closed = true;
    }, 20);
    await assert.rejects(waiting, /closed/);
  });

  it('gives up when an offline tab never answers, counting from the end of the download', async () => {
    const source = new FakeSource();
    const statuses: string[] = [];
    let pings = 0;
    const tab = { closed: false, close: () => undefined, postMessage: () => (pings += 1) };
    const started = Date.now();
    const opening = openInPerfetto(
      () => new Promise((resolve) => setTimeout(() => resolve(new ArrayBuffer(1)), 60)),
      't',
      'f.json',
      (text) => statuses.push(text),
      { open: () => tab, source, timeoutMs: 40, everyMs: 5 },
    );
    await assert.rejects(opening, PerfettoTimeout);
    assert.ok(Date.now() - started >= 100, 'the download time is not taken from the wait');
    assert.ok(pings > 0);
    assert.deepEqual(statuses, ['Downloading the trace…', 'Waiting for Perfetto…']);
    assert.equal(source.listeners.size, 0, 'the listener is removed');
  });

  it('posts the buffer with a title and file name', () => {
    const buffer = new ArrayBuffer(4);
    assert.deepEqual(perfettoMessage(buffer, 'run · worker0', 'w.pt.trace.json.gz'), {
      perfetto: { buffer, title: 'run · worker0', fileName: 'w.pt.trace.json.gz' },
    });
    assert.deepEqual(perfettoMessage(buffer, 't'), { perfetto: { buffer, title: 't' } });
  });
});
