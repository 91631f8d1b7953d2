// Keyboard navigation as in chrome://tracing and Perfetto: W/S zoom in/out around the
// mouse, A/D pan, smoothly while held (faster the longer a key is held). Keys typed into
// inputs are never taken. Pure: keys.test.ts.

export type MotionKey = 'w' | 'a' | 's' | 'd';

export interface KeyLike {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
}

/** The motion key of a key event, or null (other keys, or with Ctrl / Cmd / Alt). */
export function motionKeyOf(event: KeyLike): MotionKey | null {
  if (event.ctrlKey || event.metaKey || event.altKey) return null;
  const key = event.key.toLowerCase();
  return key === 'w' || key === 'a' || key === 's' || key === 'd' ? key : null;
}

interface ElementLike {
  tagName?: string;
  isContentEditable?: boolean;
  type?: string;
}

const NON_TEXT_INPUTS = new Set([
  'checkbox',
  'radio',
  'button',
  'submit',
  'reset',
  'range',
  'color',
]);

/** Whether keys pressed with this focused element go to the user's typing. */
export function isTypingTarget(target: unknown): boolean {
  if (typeof target !== 'object' || target === null) return false;
  const el = target as ElementLike;
  if (el.isContentEditable) return true;
  const tag = (el.tagName ?? '').toUpperCase();
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT') return !NON_TEXT_INPUTS.has((el.type ?? 'text').toLowerCase());
  return false;
}

/** Natural log of the zoom per second, and spans panned per second, at first. */
export const ZOOM_RATE = 2.2;
export const PAN_RATE = 0.9;
/** Speed-up while held: ×1 at once, up to ×3 after a second. */
export function acceleration(heldMs: number): number {
  return Math.min(1 + Math.max(0, heldMs) / 500, 3);
}

export interface Motion {
  /** Multiply the visible span by this (< 1: zoom in). */
  zoom: number;
  /** Pan by this fraction of the visible span (positive: later). */
  pan: number;
}

/** The motion for one animation step of `dtMs` with these keys held for `heldMs`. */
export function motionStep(held: ReadonlySet<MotionKey>, dtMs: number, heldMs: number): Motion {
  const dt = Math.max(0, Math.min(dtMs, 100)) / 1000;
  const speed = acceleration(heldMs);
  let zoomDir = 0;
  if (held.has('w')) zoomDir -= 1;
  if (held.has('s')) zoomDir += 1;
  let panDir = 0;
  if (held.has('d')) panDir += 1;
  if (held.has('a')) panDir -= 1;
  return {
    zoom: Math.exp(zoomDir * ZOOM_RATE * speed * dt),
    pan: panDir * PAN_RATE * speed * dt,
  };
}

/** The zoom factor of a ctrl+wheel (or pinch) delta in pixels. */
export function wheelZoomFactor(deltaY: number, deltaMode: number): number {
  const px = deltaMode === 1 ? deltaY * 16 : deltaMode === 2 ? deltaY * 400 : deltaY;
  return Math.exp(Math.max(-1, Math.min(1, px * 0.004)));
}
