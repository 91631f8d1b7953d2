// Mouse and keyboard on the timeline: drag to pan (Shift+drag or select mode: an area),
// click to select, wheel to pan and scroll (Ctrl+wheel: zoom), W/A/S/D held for smooth
// zoom and pan, F to zoom to the selection, 0 to reset, Escape to clear.

import { isTypingTarget, motionKeyOf, motionStep, wheelZoomFactor, type MotionKey } from './keys';
import { panBy, panByPx, zoomAround, type Bounds, type Viewport } from './viewport';

const DRAG_THRESHOLD_PX = 4;

/** Our document, and TensorBoard's around our iframe when we may reach it. */
export function keyDocuments(): Document[] {
  const docs = [document];
  try {
    // reading a cross-origin parent's document throws
    if (window.parent !== window) docs.push(window.parent.document);
  } catch {
    // a cross-origin parent
  }
  return docs;
}

/** What the input handlers read of the timeline and ask it to do. */
export interface InputHost {
  readonly canvas: HTMLCanvasElement;
  readonly scroller: HTMLElement;
  readonly element: HTMLElement;
  readonly bounds: Bounds;
  readonly viewport: Viewport;
  /** The canvas width in CSS px. */
  width(): number;
  selectMode(): boolean;
  /** Moves the view to `vp` (already inside the bounds) and lets everything follow. */
  moveTo(vp: Viewport): void;
  hover(x: number, y: number, clientX: number, clientY: number): void;
  hideTooltip(): void;
  click(x: number, y: number): void;
  /** The area dragged from (x0, y0) to (x, y), canvas px. */
  dragArea(x0: number, y0: number, x: number, y: number): void;
  finishArea(): void;
  /** Escape: clear the area, else the selection. */
  clear(): void;
  /** F: zoom to the selected event, else to the area. */
  zoomToSelection(): void;
  resetZoom(): void;
}

interface Drag {
  mode: 'pan' | 'area';
  x0: number;
  y0: number;
  lastX: number;
  lastY: number;
  moved: boolean;
  pointerId: number;
}

export class TimelineInput {
  private drag: Drag | null = null;
  private mouseX: number | null = null;
  private readonly held = new Set<MotionKey>();
  private heldSince = 0;
  private motionFrame = 0;
  private lastMotion = 0;
  private readonly cleanups: (() => void)[] = [];

  constructor(private readonly host: InputHost) {
    this.bindPointer();
    this.bindWheel();
    this.bindKeys();
  }

  dispose(): void {
    for (const fn of this.cleanups) fn();
    cancelAnimationFrame(this.motionFrame);
  }

  private canvasPoint(event: MouseEvent): { x: number; y: number } {
    const rect = this.host.canvas.getBoundingClientRect();
    return { x: event.clientX - rect.left, y: event.clientY - rect.top };
  }

  private bindPointer(): void {
    const c = this.host.canvas;
    c.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      const p = this.canvasPoint(e);
      this.drag = {
        mode: e.shiftKey || this.host.selectMode() ? 'area' : 'pan',
        x0: p.x,
        y0: p.y,
        lastX: p.x,
        lastY: p.y,
        moved: false,
        pointerId: e.pointerId,
      };
      c.setPointerCapture(e.pointerId);
      e.preventDefault(); // no text selection; but move the focus here (out of the search box)
      c.focus({ preventScroll: true });
    });
    c.addEventListener('pointermove', (e) => this.pointerMove(e));
    const end = (e: PointerEvent): void => {
      const drag = this.drag;
      if (drag?.pointerId !== e.pointerId) return;
      this.drag = null;
      c.classList.remove('ks-tl-grabbing');
      if (c.hasPointerCapture(e.pointerId)) c.releasePointerCapture(e.pointerId);
      const p = this.canvasPoint(e);
      if (!drag.moved) {
        if (e.type === 'pointerup') this.host.click(p.x, p.y);
        return;
      }
      if (drag.mode === 'area') this.host.finishArea();
    };
    c.addEventListener('pointerup', end);
    c.addEventListener('pointercancel', end);
    c.addEventListener('pointerleave', () => {
      if (!this.drag) {
        this.mouseX = null;
        this.host.hideTooltip();
      }
    });
  }

  private pointerMove(e: PointerEvent): void {
    const host = this.host;
    const p = this.canvasPoint(e);
    this.mouseX = p.x;
    const drag = this.drag;
    if (!drag) {
      host.hover(p.x, p.y, e.clientX, e.clientY);
      return;
    }
    if (!drag.moved && Math.hypot(p.x - drag.x0, p.y - drag.y0) < DRAG_THRESHOLD_PX) return;
    drag.moved = true;
    host.hideTooltip();
    if (drag.mode === 'pan') {
      host.scroller.scrollTop -= p.y - drag.lastY;
      host.moveTo(panByPx(host.viewport, p.x - drag.lastX, host.width(), host.bounds));
      host.canvas.classList.add('ks-tl-grabbing');
    } else {
      host.dragArea(drag.x0, drag.y0, p.x, p.y);
    }
    drag.lastX = p.x;
    drag.lastY = p.y;
  }

  private bindWheel(): void {
    const host = this.host;
    host.canvas.addEventListener(
      'wheel',
      (e) => {
        e.preventDefault();
        const p = this.canvasPoint(e);
        const width = host.width();
        if (e.ctrlKey || e.metaKey) {
          const factor = wheelZoomFactor(e.deltaY, e.deltaMode);
          host.moveTo(zoomAround(host.viewport, factor, p.x / width, host.bounds));
          return;
        }
        const dx = e.shiftKey && e.deltaX === 0 ? e.deltaY : e.deltaX;
        const dy = e.shiftKey ? 0 : e.deltaY;
        if (Math.abs(dx) > 0) host.moveTo(panByPx(host.viewport, -dx, width, host.bounds));
        if (dy) host.scroller.scrollTop += e.deltaMode === 1 ? dy * 18 : dy;
      },
      { passive: false },
    );
    // wheel over the labels scrolls natively; ctrl+wheel there zooms too
    host.scroller.addEventListener(
      'wheel',
      (e) => {
        if (!(e.ctrlKey || e.metaKey)) return;
        e.preventDefault();
        const factor = wheelZoomFactor(e.deltaY, e.deltaMode);
        host.moveTo(zoomAround(host.viewport, factor, 0.5, host.bounds));
      },
      { passive: false },
    );
  }

  private keyDown(e: KeyboardEvent): void {
    const host = this.host;
    if (isTypingTarget(e.target) || isTypingTarget(document.activeElement)) return;
    if (!host.element.isConnected || host.element.offsetParent === null) return;
    const key = motionKeyOf(e);
    if (key) {
      e.preventDefault();
      if (!this.held.has(key)) {
        if (this.held.size === 0) this.heldSince = performance.now();
        this.held.add(key);
        this.startMotion();
      }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === 'Escape') host.clear();
    else if (e.key === 'f' || e.key === 'F') host.zoomToSelection();
    else if (e.key === '0') host.resetZoom();
  }

  private bindKeys(): void {
    const down = (e: KeyboardEvent): void => this.keyDown(e);
    const up = (e: KeyboardEvent): void => {
      const key = motionKeyOf({ key: e.key, ctrlKey: false, metaKey: false, altKey: false });
      if (key) this.held.delete(key);
    };
    const blur = (): void => this.held.clear();
    // Keys reach the document that has the focus: ours once the user clicked into the
    // page, TensorBoard's (same origin) before that, so W/A/S/D work from the start.
    for (const doc of keyDocuments()) {
      doc.addEventListener('keydown', down);
      doc.addEventListener('keyup', up);
      this.cleanups.push(() => {
        doc.removeEventListener('keydown', down);
        doc.removeEventListener('keyup', up);
      });
    }
    window.addEventListener('blur', blur);
    this.cleanups.push(() => window.removeEventListener('blur', blur));
  }

  private applyMotion(dtMs: number, heldMs: number): void {
    const host = this.host;
    const m = motionStep(this.held, dtMs, heldMs);
    const anchor = this.mouseX !== null ? this.mouseX / host.width() : 0.5;
    let vp = host.viewport;
    if (m.zoom !== 1) vp = zoomAround(vp, m.zoom, anchor, host.bounds);
    if (m.pan !== 0) vp = panBy(vp, m.pan, host.bounds);
    host.moveTo(vp);
  }

  private startMotion(): void {
    if (this.motionFrame) return;
    // a tap moves too: the first step is applied at once, as 60 ms of motion
    this.applyMotion(60, 0);
    this.lastMotion = performance.now();
    const step = (now: number): void => {
      if (this.held.size === 0) {
        this.motionFrame = 0;
        return;
      }
      this.applyMotion(now - this.lastMotion, now - this.heldSince);
      this.lastMotion = now;
      this.motionFrame = requestAnimationFrame(step);
    };
    this.motionFrame = requestAnimationFrame(step);
  }
}
