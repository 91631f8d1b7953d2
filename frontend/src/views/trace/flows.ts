// Which flow arrows to draw. Every launch and forward→backward arrow of a busy window
// drawn at once is a mesh over the timeline, so by default only the selected event's
// flows are drawn: those starting or ending at it or inside it (an op's launches), and
// the flows chained to their other ends. All of them when there are few, or on request.
// Pure: unit-tested in flows.test.ts.

import type { FlowArrow, SelectedGeom } from './render';

/** Up to this many flows in view are all drawn even when only the selection's were asked. */
export const FEW_FLOWS = 40;

function startsInside(f: FlowArrow, sel: SelectedGeom): boolean {
  return (
    f.srcTrack === sel.trackId &&
    f.srcDepth >= sel.depth &&
    f.srcTs >= sel.start &&
    f.srcTs <= sel.start + sel.dur
  );
}

/** The flows at, inside or chained to the selected event. */
export function selectionChain(arrows: readonly FlowArrow[], sel: SelectedGeom): FlowArrow[] {
  const rows = new Set<number>([sel.row]);
  const chosen = new Set<FlowArrow>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const f of arrows) {
      if (chosen.has(f)) continue;
      if (rows.has(f.srcRow) || rows.has(f.dstRow) || startsInside(f, sel)) {
        chosen.add(f);
        for (const row of [f.srcRow, f.dstRow]) if (row >= 0) rows.add(row);
        grew = true;
      }
    }
  }
  return arrows.filter((f) => chosen.has(f));
}

/** The arrows to draw: all (asked for, or few), else the selection's chain, else none. */
export function flowsToDraw(
  arrows: readonly FlowArrow[],
  selected: SelectedGeom | null,
  all: boolean,
): readonly FlowArrow[] {
  if (all || arrows.length <= FEW_FLOWS) return arrows;
  return selected ? selectionChain(arrows, selected) : [];
}
