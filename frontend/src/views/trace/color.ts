// Slice colours by name: a stable hash of the name (digits dropped, so "ProfilerStep#5"
// and "ProfilerStep#6" match) picks a hue; light and dark themes get their own lightness.
// Pure apart from a small memo.

/** 32-bit FNV-1a of a string. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The part of a name that decides its colour: digits and surrounding punctuation go. */
export function colorKey(name: string): string {
  return name.replace(/[#_]?\d+/g, '').trim();
}

export interface SliceColor {
  fill: string;
  /** Text drawn on the fill. */
  text: string;
  /** Of the fill, 0–1, to pick outlines and text. */
  luminance: number;
}

function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const a = s * Math.min(l, 1 - l);
  const f = (n: number): number => {
    const k = (n + h / 30) % 12;
    return l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
  };
  return [f(0), f(8), f(4)];
}

function relativeLuminance([r, g, b]: [number, number, number]): number {
  const lin = (c: number): number => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

function hex([r, g, b]: [number, number, number]): string {
  const part = (c: number): string =>
    Math.round(Math.min(1, Math.max(0, c)) * 255)
      .toString(16)
      .padStart(2, '0');
  return `#${part(r)}${part(g)}${part(b)}`;
}

/** The colour of a slice named `name`. */
export function sliceColor(name: string, dark: boolean): SliceColor {
  const hash = fnv1a(colorKey(name));
  const hue = hash % 360;
  const sat = 0.45 + ((hash >>> 9) % 20) / 100; // 0.45 – 0.64
  const light = dark ? 0.36 + ((hash >>> 17) % 10) / 100 : 0.62 + ((hash >>> 17) % 12) / 100;
  const rgb = hslToRgb(hue, sat, light);
  const luminance = relativeLuminance(rgb);
  return { fill: hex(rgb), text: luminance > 0.33 ? '#1a1a1a' : '#f5f5f5', luminance };
}

const memo = [new Map<string, SliceColor>(), new Map<string, SliceColor>()] as const;

/** sliceColor, memoised per theme (bounded). */
export function colorOf(name: string, dark: boolean): SliceColor {
  const cache = memo[dark ? 1 : 0];
  let found = cache.get(name);
  if (!found) {
    if (cache.size > 20_000) cache.clear();
    found = sliceColor(name, dark);
    cache.set(name, found);
  }
  return found;
}
