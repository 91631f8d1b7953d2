import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { compileRow, compileView } from './fixture';
import {
  boxKind,
  cacheText,
  isRecompileId,
  laneKey,
  placeText,
  stageParts,
  ticks,
  timelineModel,
} from './model';

describe('compile timeline', () => {
  it('places forward and backward compiles in seconds from the first compile', () => {
    const model = timelineModel(compileView());
    assert.ok(model);
    assert.deepEqual(model.lanes, ['worker0']);
    const [first, backward, recompile] = model.boxes;
    assert.ok(first && backward && recompile);
    assert.deepEqual([first.start, first.end, first.kind, first.row], [0, 25.60147, 'first', 0]);
    assert.equal(backward.kind, 'backward');
    assert.equal(backward.row, 1);
    assert.ok(Math.abs(backward.start - 25.627422) < 1e-6);
    assert.equal(recompile.kind, 'recompile');
    assert.ok(Math.abs(recompile.start - 31.348181) < 1e-6);
    assert.deepEqual(
      model.bands.map((b) => b.label),
      ['step 2'],
    );
    assert.ok(model.span >= recompile.end);
  });

  it('has no timeline when no compile has a time', () => {
    const view = compileView({ compiles: [compileRow({ start_us: null })] });
    assert.equal(timelineModel(view), null);
  });

  it('names lanes by rank, else by worker, else by log', () => {
    assert.equal(laneKey({ rank: 3, log: 'a.log', worker: 'w0' }), 'rank 3');
    assert.equal(laneKey({ rank: null, log: 'a.log', worker: 'w0' }), 'w0');
    assert.equal(laneKey({ rank: null, log: 'torch_trace/a.log', worker: null }), 'a.log');
  });

  it('tells first compiles, recompiles and failures apart', () => {
    assert.equal(boxKind(compileRow()), 'first');
    assert.equal(boxKind(compileRow({ compile_id: '0/2' })), 'recompile');
    assert.equal(boxKind(compileRow({ compile_id: '3/0', reason: 'x' })), 'recompile');
    assert.equal(boxKind(compileRow({ status: 'failed' })), 'failed');
    assert.equal(isRecompileId('1/0'), false);
    assert.equal(isRecompileId('!0/1/1'), true);
  });
});

describe('compile labels', () => {
  it('ticks at 1-2-5 steps', () => {
    assert.deepEqual(ticks(36, 6), [0, 10, 20, 30]);
    assert.deepEqual(ticks(0.9, 4), [0, 0.5]);
    assert.deepEqual(ticks(0), [0]);
  });

  it('gives stage shares of the known stages', () => {
    const parts = stageParts({
      dynamo_us: 100,
      aot_autograd_us: 300,
      inductor_us: null,
      code_gen_us: null,
    });
    assert.deepEqual(
      parts.map((p) => [p.label, p.share]),
      [
        ['Dynamo', 0.25],
        ['AOTAutograd', 0.75],
      ],
    );
  });

  it('says where and what the cache did', () => {
    assert.equal(placeText('forward', '/repo/model.py', 5), 'forward (model.py:5)');
    assert.equal(placeText(null, null, null), '? (?)');
    const hit = { ...compileRow().cache, state: 'hit', inductor_hits: 2, aot_hits: 1 };
    assert.equal(cacheText(hit), 'hit (FX 2, AOT 1)');
    assert.equal(cacheText(compileRow().cache), 'miss (FX 1, AOT 1)');
    assert.equal(cacheText({ ...hit, state: null }), '—');
  });
});
