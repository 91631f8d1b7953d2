import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { RANK_TRACKS, TRACKS } from './fixture';
import {
  buildLayout,
  depthAt,
  groupLabel,
  initiallyCollapsedTracks,
  itemAt,
  itemsBetween,
  METRICS,
  rowTop,
  trackLabel,
} from './layout';

const none = { collapsedGroups: new Set<string>(), collapsedTracks: new Set<string>() };

describe('buildLayout', () => {
  it('groups tracks by process with counters first, stacking heights', () => {
    const layout = buildLayout(TRACKS.tracks, none);
    const kinds = layout.items.map((i) => (i.type === 'group' ? `[${i.label}]` : i.track.id));
    assert.deepEqual(kinds, [
      '[Counters]',
      'gpu0.util',
      '[CPU python (25738)]',
      't0',
      't1',
      '[GPU 0 python (0)]',
      't2',
    ]);
    const t0 = layout.byTrack.get('t0');
    assert.ok(t0);
    assert.equal(t0.rows, 8);
    assert.equal(t0.height, 8 * METRICS.rowHeight + 2 * METRICS.trackPad);
    const last = layout.items[layout.items.length - 1];
    assert.ok(last);
    assert.equal(layout.height, last.y + last.height);
    let y = 0;
    for (const item of layout.items) {
      assert.equal(item.y, y);
      y += item.height;
    }
  });

  it('hides the tracks of a collapsed group and folds a collapsed track to one row', () => {
    const groupKey =
      buildLayout(TRACKS.tracks, none).items.find(
        (i) => i.type === 'group' && i.label.startsWith('CPU'),
      )?.key ?? '';
    const folded = buildLayout(TRACKS.tracks, {
      collapsedGroups: new Set([groupKey]),
      collapsedTracks: new Set(['t2', 't0']),
    });
    assert.equal(folded.byTrack.get('t0'), undefined);
    assert.equal(folded.byTrack.get('t1'), undefined);
    const t2 = folded.byTrack.get('t2');
    assert.equal(t2?.rows, 1);
    assert.equal(t2.collapsed, false, 'a one-row track cannot be folded');
  });

  it('starts very deep tracks folded', () => {
    assert.deepEqual([...initiallyCollapsedTracks(TRACKS.tracks)], ['t1']);
  });

  it('labels ranks in groups and drops the rank prefix from track labels', () => {
    const layout = buildLayout(RANK_TRACKS, none);
    const groups = layout.items.filter((i) => i.type === 'group').map((i) => i.label);
    assert.deepEqual(groups, [
      'rank 0 · Counters',
      'rank 0 · CPU trainer (4037)',
      'rank 1 · Counters',
      'rank 1 · CPU trainer (4045)',
    ]);
    const first = RANK_TRACKS[1];
    assert.ok(first);
    assert.equal(trackLabel(first), 'thread 4037 (python3.8)');
    assert.equal(groupLabel(first), 'rank 0 · CPU trainer (4037)');
  });
});

describe('profiler markers', () => {
  const marker = (id: string, pid: string, process: string, worker: string | null) => {
    const base = RANK_TRACKS[1];
    assert.ok(base);
    return { ...base, id, kind: 'other', pid, tid: '0', process, worker, label: `${process}x` };
  };

  it('gathers "(Spans)", "(Traces)" and the empty-pid process into one group per rank', () => {
    const tracks = [
      ...RANK_TRACKS,
      marker('s0', 'Spans', 'rank 0 · (Spans)', 'rank0'),
      marker('r0', 'Traces', 'rank 0 · (Traces)', 'rank0'),
      marker('e0', '', 'rank 0 · ', 'rank0'),
      marker('e1', '', 'rank 1 · ', 'rank1'),
    ].map((t, sort) => ({ ...t, sort }));
    const groups = buildLayout(tracks, none)
      .items.filter((i) => i.type === 'group')
      .map((i) => i.label);
    assert.deepEqual(groups, [
      'rank 0 · Counters',
      'rank 0 · CPU trainer (4037)',
      'rank 1 · Counters',
      'rank 1 · CPU trainer (4045)',
      'rank 0 · Profiler markers',
      'rank 1 · Profiler markers',
    ]);
    assert.equal(groupLabel(marker('e', '', '', null)), 'Profiler markers');
  });
});

describe('hit rows', () => {
  const layout = buildLayout(TRACKS.tracks, none);

  it('finds the item and depth under y', () => {
    const t0 = layout.byTrack.get('t0');
    assert.ok(t0);
    const y = rowTop(t0, 3) + 2;
    assert.equal(itemAt(layout, y), t0);
    assert.equal(depthAt(t0, y), 3);
    assert.equal(depthAt(t0, t0.y + 1), -1, 'the padding above the first row');
    assert.equal(itemAt(layout, -5), undefined);
    assert.equal(itemAt(layout, layout.height + 5), undefined);
  });

  it('lists the items overlapping a y range', () => {
    const t0 = layout.byTrack.get('t0');
    assert.ok(t0);
    const items = itemsBetween(layout, t0.y + 1, t0.y + 2);
    assert.deepEqual(items, [t0]);
    assert.equal(itemsBetween(layout, 0, layout.height).length, layout.items.length);
  });
});
