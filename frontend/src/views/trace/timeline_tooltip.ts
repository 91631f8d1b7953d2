// The hover tooltip of the timeline: the lines it shows for what is under the pointer
// (an event, a block of merged short events, a counter sample) and where it stands.

import { h, replaceChildren } from '../../components/dom';
import { formatBytes } from '../../components/format';
import { formatSpan, formatTimeAt } from './axis';
import type { TimelineHit } from './hit';
import { trackLabel } from './layout';
import type { HoverGeom } from './render';
import { usPerPx, type Viewport } from './viewport';

export interface HoverInfo {
  geom: HoverGeom | null;
  text: string[];
}

type SliceHit = Extract<TimelineHit, { kind: 'event' | 'block' }>;

/** Name, duration and start of one event or unmerged block. */
function sliceInfo(hit: SliceHit, vp: Viewport, width: number): HoverInfo {
  const cols = hit.kind === 'event' ? hit.frame.events : hit.frame.blocks;
  const i = hit.index;
  const start = cols.start[i] ?? 0;
  const dur = cols.dur[i] ?? 0;
  return {
    geom: { trackId: hit.item.track.id, depth: cols.depth[i] ?? 0, start, dur },
    text: [
      hit.frame.names[cols.name[i] ?? -1] ?? '',
      dur === 0 ? 'instant' : formatSpan(dur),
      `at ${formatTimeAt(start, Math.max(0.001, usPerPx(vp, width)))}`,
    ],
  };
}

/** A block of short events merged at this zoom: how many, mostly what, how busy. */
function mergedInfo(hit: SliceHit): HoverInfo {
  const bl = hit.frame.blocks;
  const i = hit.index;
  const dur = bl.dur[i] ?? 0;
  const busy = bl.busy[i] ?? 0;
  return {
    geom: { trackId: hit.item.track.id, depth: bl.depth[i] ?? 0, start: bl.start[i] ?? 0, dur },
    text: [
      `${bl.count_[i] ?? 0} short events (merged at this zoom)`,
      `mostly ${hit.frame.names[bl.name[i] ?? -1] ?? '?'}`,
      `busy ${formatSpan(busy)} of ${formatSpan(dur)} · click to zoom in`,
    ],
  };
}

/** A counter track's value at the pointer, in its unit. */
function counterInfo(hit: Extract<TimelineHit, { kind: 'counter' }>): HoverInfo {
  const c = hit.item.track.counter;
  const value =
    c?.unit === 'bytes'
      ? formatBytes(hit.value)
      : c?.unit === 'fraction'
        ? `${(hit.value * 100).toFixed(1)} %`
        : c?.unit === 'percent'
          ? `${hit.value.toFixed(1)} %`
          : String(hit.value);
  return { geom: null, text: [trackLabel(hit.item.track), value] };
}

/** What the tooltip says about a hit; null for none. */
export function hoverInfoOf(
  hit: TimelineHit | null,
  vp: Viewport,
  width: number,
): HoverInfo | null {
  if (!hit) return null;
  if (hit.kind === 'counter') return counterInfo(hit);
  if (hit.kind === 'event' || (hit.frame.blocks.row[hit.index] ?? -1) >= 0) {
    return sliceInfo(hit, vp, width);
  }
  return mergedInfo(hit);
}

function sameGeom(a: HoverGeom | null | undefined, b: HoverGeom | null | undefined): boolean {
  return a?.start === b?.start && a?.trackId === b?.trackId && a?.depth === b?.depth;
}

/** The tooltip element and the hovered item it describes. */
export class HoverTip {
  readonly element: HTMLElement;
  private info: HoverInfo | null = null;

  constructor() {
    this.element = h('div', { class: 'ks-tl-tooltip', role: 'tooltip' });
    this.element.hidden = true;
  }

  /** The hovered item's outline to draw, if any. */
  get geom(): HoverGeom | null {
    return this.info?.geom ?? null;
  }

  /**
   * Shows `info` near the pointer (client coordinates) inside `body`, or hides the tip
   * for null. True when the hovered outline changed and wants a redraw.
   */
  show(info: HoverInfo | null, clientX: number, clientY: number, body: HTMLElement): boolean {
    const changed = !sameGeom(this.info?.geom, info?.geom);
    this.info = info;
    if (!info) {
      this.hide();
      return changed;
    }
    const tip = this.element;
    replaceChildren(
      tip,
      info.text.map((line, i) =>
        h('div', { class: i === 0 ? 'ks-tl-tip-title' : 'ks-tl-tip-line' }, line),
      ),
    );
    tip.hidden = false;
    const box = body.getBoundingClientRect();
    const tipW = tip.offsetWidth;
    const tipH = tip.offsetHeight;
    let left = clientX - box.left + 14;
    let top = clientY - box.top + 16;
    if (left + tipW > box.width - 4) left = clientX - box.left - tipW - 10;
    if (top + tipH > box.height - 4) top = clientY - box.top - tipH - 10;
    tip.style.transform = `translate(${Math.max(0, left)}px, ${Math.max(0, top)}px)`;
    return changed;
  }

  /** Hides the tip; true when an item was hovered (its outline wants a redraw). */
  hide(): boolean {
    if (!this.element.hidden) this.element.hidden = true;
    if (!this.info) return false;
    this.info = null;
    return true;
  }
}
