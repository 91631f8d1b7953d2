// The timeline's canvas style: its colours (from trace.css's --ks-tl-* properties, so
// they follow the theme), its font, and text cut to fit a width.

export interface Palette {
  bg: string;
  text: string;
  muted: string;
  grid: string;
  border: string;
  groupBg: string;
  trackAlt: string;
  accent: string;
  selectFill: string;
  selectLine: string;
  flow: string;
  stepLine: string;
  stepBandA: string;
  stepBandB: string;
  util: string;
  memory: string;
  empty: string;
  flagged: string;
}

const FALLBACK: Palette = {
  bg: '#ffffff',
  text: '#212121',
  muted: '#616161',
  grid: 'rgba(0,0,0,0.06)',
  border: '#e0e0e0',
  groupBg: '#f3f3f3',
  trackAlt: 'rgba(0,0,0,0.018)',
  accent: '#f57c00',
  selectFill: 'rgba(21,101,192,0.10)',
  selectLine: '#1565c0',
  flow: '#c2185b',
  stepLine: 'rgba(0,0,0,0.18)',
  stepBandA: 'rgba(0,0,0,0.04)',
  stepBandB: 'rgba(0,0,0,0.09)',
  util: '#2e7d32',
  memory: '#5e35b1',
  empty: 'rgba(0,0,0,0.035)',
  flagged: '#d50000',
};

/** The timeline colours from the CSS custom properties --ks-tl-* (trace.css). */
export function readPalette(el: Element): Palette {
  const style = getComputedStyle(el);
  const out = { ...FALLBACK };
  for (const key of Object.keys(FALLBACK) as (keyof Palette)[]) {
    const css = `--ks-tl-${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    const value = style.getPropertyValue(css).trim();
    if (value) out[key] = value;
  }
  return out;
}

export const FONT = '11px Roboto, "Helvetica Neue", Arial, system-ui, sans-serif';

// ----- text fitting -----

const widthCache = new Map<string, number>();

export function textWidth(ctx: CanvasRenderingContext2D, text: string): number {
  let w = widthCache.get(text);
  if (w === undefined) {
    if (widthCache.size > 8000) widthCache.clear();
    w = ctx.measureText(text).width;
    widthCache.set(text, w);
  }
  return w;
}

/** The text cut with an ellipsis to fit maxW px ('' when not even 3 characters fit). */
export function fitText(ctx: CanvasRenderingContext2D, text: string, maxW: number): string {
  if (maxW < 12) return '';
  const full = textWidth(ctx, text);
  if (full <= maxW) return text;
  const perChar = full / Math.max(1, text.length);
  let n = Math.floor(maxW / perChar) - 1;
  while (n >= 2) {
    const cut = `${text.slice(0, n)}…`;
    if (ctx.measureText(cut).width <= maxW) return cut;
    n -= Math.max(1, Math.floor(n / 8));
  }
  return '';
}
