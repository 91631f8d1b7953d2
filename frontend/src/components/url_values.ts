// Parsing of view values kept in the URL (components/hash_params.ts stores them): a value
// that is not one the view knows falls back to its default, never an error.

import type { SortDir } from './table_model';

/** A table sort in the URL: "key:asc" / "key:desc". */
export interface SortSpec {
  key: string;
  dir: SortDir;
}

export function parseSort(text: string | undefined, keys: readonly string[]): SortSpec | undefined {
  if (!text) return undefined;
  const at = text.lastIndexOf(':');
  const key = at > 0 ? text.slice(0, at) : text;
  const dir = at > 0 ? text.slice(at + 1) : 'desc';
  if (!keys.includes(key) || (dir !== 'asc' && dir !== 'desc')) return undefined;
  return { key, dir };
}

export function formatSort(sort: SortSpec | undefined): string | undefined {
  return sort ? `${sort.key}:${sort.dir}` : undefined;
}

/** One of `allowed`, else the fallback: for enumerated URL values. */
export function pick<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  fallback: T,
): T {
  return allowed.find((a) => a === value) ?? fallback;
}

/** A non-negative integer URL value, else undefined. */
export function parseIndex(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}

/** undefined when value equals the default: defaults stay out of the URL. */
export function unlessDefault<T>(value: T, fallback: T): T | undefined {
  return value === fallback ? undefined : value;
}
