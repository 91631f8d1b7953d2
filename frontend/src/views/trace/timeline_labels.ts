// The labels column of the timeline: one DOM label per group and track in and near the
// view (virtualized), groups and tracks that fold, and the layout those folds give.

import type { TimelineTrack } from '../../api/types';
import { h, replaceChildren } from '../../components/dom';
import { formatBytes } from '../../components/format';
import {
  buildLayout,
  initiallyCollapsedTracks,
  itemsBetween,
  METRICS,
  trackLabel,
  type GroupItem,
  type Layout,
  type TrackItem,
} from './layout';

/** A counter track's range, as its label shows it. */
function counterExtra(track: TimelineTrack): string | null {
  const counter = track.counter;
  if (!counter) return null;
  if (counter.unit === 'bytes') return `max ${formatBytes(counter.max)}`;
  if (counter.unit === 'fraction') return '0–100 %';
  if (counter.unit === 'percent') return `max ${counter.max.toFixed(1)} %`;
  return `max ${counter.max}`;
}

export class LabelsColumn {
  /** The labels, positioned in `content`, which is as tall as the layout. */
  readonly element: HTMLElement;
  readonly content: HTMLElement;
  /** The scrolling box around `content`; its scrollTop is the timeline's. */
  readonly scroller: HTMLElement;
  private readonly tracks: TimelineTrack[];
  private readonly collapsedGroups = new Set<string>();
  private readonly collapsedTracks: Set<string>;
  private current: Layout;

  /** `relaid` runs after a fold changed the layout (the labels are already redrawn). */
  constructor(
    tracks: TimelineTrack[],
    private readonly relaid: () => void,
  ) {
    this.tracks = tracks;
    this.collapsedTracks = initiallyCollapsedTracks(tracks);
    this.current = this.build();
    this.element = h('div', { class: 'ks-tl-labels', testid: 'trace-labels' });
    this.content = h('div', { class: 'ks-tl-content' }, this.element);
    this.scroller = h('div', { class: 'ks-tl-scroll' }, this.content);
  }

  get layout(): Layout {
    return this.current;
  }

  /** Redraws the labels in and near the vertical view. */
  render(): void {
    this.content.style.height = `${this.current.height}px`;
    const top = this.scroller.scrollTop;
    const view = this.scroller.clientHeight || 600;
    const items = itemsBetween(this.current, top - view / 2, top + view * 1.5);
    replaceChildren(
      this.element,
      items.map((item) => (item.type === 'group' ? this.groupLabel(item) : this.trackLabel(item))),
    );
  }

  setAllCollapsed(collapsed: boolean): void {
    this.collapsedGroups.clear();
    if (collapsed) {
      for (const item of this.current.items)
        if (item.type === 'group') this.collapsedGroups.add(item.key);
    } else {
      this.collapsedTracks.clear();
    }
    this.relayout();
  }

  /** Unfolds what hides a track's row at `depth` and scrolls it into view. */
  reveal(trackId: string, depth: number): void {
    let item = this.current.byTrack.get(trackId);
    if (!item) {
      if (!this.tracks.some((t) => t.id === trackId)) return;
      for (const group of this.current.items) {
        if (group.type === 'group' && group.trackIds.includes(trackId))
          this.collapsedGroups.delete(group.key);
      }
      if (depth > 0) this.collapsedTracks.delete(trackId);
      this.relayout();
      item = this.current.byTrack.get(trackId);
      if (!item) return;
    } else if (item.collapsed && depth > 0) {
      this.collapsedTracks.delete(trackId);
      this.relayout();
      item = this.current.byTrack.get(trackId);
      if (!item) return;
    }
    const top = item.y + METRICS.trackPad + Math.max(0, depth) * METRICS.rowHeight;
    const view = this.scroller.clientHeight;
    if (top < this.scroller.scrollTop || top + METRICS.rowHeight > this.scroller.scrollTop + view) {
      this.scroller.scrollTop = Math.max(0, top - view / 3);
    }
  }

  private build(): Layout {
    return buildLayout(this.tracks, {
      collapsedGroups: this.collapsedGroups,
      collapsedTracks: this.collapsedTracks,
    });
  }

  private relayout(): void {
    this.current = this.build();
    this.content.style.height = `${this.current.height}px`;
    this.render();
    this.relaid();
  }

  private toggle(set: Set<string>, key: string): void {
    if (set.has(key)) set.delete(key);
    else set.add(key);
    this.relayout();
  }

  private groupLabel(item: GroupItem): HTMLElement {
    return h(
      'button',
      {
        class: `ks-tl-group${item.collapsed ? ' ks-collapsed' : ''}`,
        style: `top:${item.y}px;height:${item.height}px`,
        title: `${item.label} — click to ${item.collapsed ? 'expand' : 'collapse'}`,
        dataset: { group: item.key },
        testid: 'trace-group-label',
        attrs: { type: 'button', 'aria-expanded': String(!item.collapsed) },
        on: { click: () => this.toggle(this.collapsedGroups, item.key) },
      },
      h('span', { class: 'ks-tl-chevron' }, item.collapsed ? '▸' : '▾'),
      h('span', { class: 'ks-tl-group-name' }, item.label),
      h('span', { class: 'ks-tl-count' }, String(item.trackIds.length)),
    );
  }

  private trackLabel(item: TrackItem): HTMLElement {
    const track = item.track;
    const extra = counterExtra(track);
    return h(
      'div',
      {
        class: `ks-tl-track ks-tl-kind-${track.kind}`,
        style: `top:${item.y}px;height:${item.height}px`,
        title: track.label,
        testid: 'trace-track-label',
        dataset: { track: track.id, rows: String(item.rows) },
      },
      item.expandable
        ? h(
            'button',
            {
              class: 'ks-tl-fold',
              title: item.collapsed
                ? `Show all ${track.max_depth + 1} rows`
                : 'Show only the top row',
              attrs: { type: 'button', 'aria-expanded': String(!item.collapsed) },
              on: { click: () => this.toggle(this.collapsedTracks, track.id) },
            },
            item.collapsed ? '⊞' : '⊟',
          )
        : h('span', { class: 'ks-tl-fold-space' }),
      h('span', { class: 'ks-tl-track-name' }, trackLabel(track)),
      extra ? h('span', { class: 'ks-tl-track-extra' }, extra) : null,
    );
  }
}
