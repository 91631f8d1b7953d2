import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FetchSlot } from './fetch_slot';

/** A promise with its resolve handle, to finish requests in a chosen order. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('FetchSlot', () => {
  it('drops an older answer that lands after a newer request started', async () => {
    const applied: string[] = [];
    const events: string[] = [];
    const slot = new FetchSlot({
      onStart: () => events.push('start'),
      onEnd: () => events.push('end'),
      onError: (error) => events.push(`error ${String(error)}`),
    });
    const slow = deferred<string>();
    const signals: AbortSignal[] = [];
    const first = slot.run(
      (signal) => {
        signals.push(signal);
        return slow.promise;
      },
      (data) => applied.push(data),
    );
    const second = slot.run(
      () => Promise.resolve('new'),
      (data) => applied.push(data),
    );
    await second;
    slow.resolve('old');
    await first;
    assert.deepEqual(applied, ['new']);
    assert.equal(signals[0]?.aborted, true, 'the older request was aborted');
    assert.deepEqual(events, ['start', 'start', 'end', 'end']);
  });

  it('reports failures but not aborts', async () => {
    const errors: unknown[] = [];
    const slot = new FetchSlot({ onError: (error) => errors.push(error) });
    await slot.run(
      () => Promise.reject(new Error('HTTP 500')),
      () => assert.fail('no data'),
    );
    await slot.run(
      () => Promise.reject(new DOMException('Aborted', 'AbortError')),
      () => assert.fail('no data'),
    );
    assert.deepEqual(
      errors.map((e) => (e instanceof Error ? e.message : e)),
      ['HTTP 500'],
    );
  });
});
