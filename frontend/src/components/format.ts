// Number and text formatting shared by every view. Pure functions: unit-tested in
// format.test.ts.

export const DASH = '—';

export function isNum(value: number | null | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

export function trimZeros(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

/** Microseconds in a readable unit: "90 µs", "12.5 µs", "98.60 ms", "1.23 s". */
export function formatDuration(us: number | null | undefined): string {
  if (!isNum(us)) return DASH;
  const abs = Math.abs(us);
  if (abs < 1000) {
    const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
    return `${trimZeros(us.toFixed(digits))} µs`;
  }
  if (abs < 1e6) return `${(us / 1e3).toFixed(2)} ms`;
  return `${(us / 1e6).toFixed(2)} s`;
}

/** A time since the trace start (an event's start or end): to 0.1 µs below 1 ms, to 1 µs
 *  below 1 s, to 0.1 ms above ("400.9 µs", "5.811 ms", "12.3457 s"), trailing zeros
 *  dropped. */
export function formatTimeOffset(us: number | null | undefined): string {
  if (!isNum(us)) return DASH;
  const abs = Math.abs(us);
  if (abs < 1000) return `${trimZeros(us.toFixed(1))} µs`;
  if (abs < 1e6) return `${trimZeros((us / 1e3).toFixed(3))} ms`;
  return `${trimZeros((us / 1e6).toFixed(4))} s`;
}

/** Axis labels: like formatDuration with trailing zeros dropped ("210 ms", "1.5 s", "0"). */
export function formatDurationAxis(us: number | null | undefined): string {
  if (!isNum(us)) return '';
  if (us === 0) return '0';
  const abs = Math.abs(us);
  if (abs < 1000) return `${trimZeros(us.toFixed(2))} µs`;
  if (abs < 1e6) return `${trimZeros((us / 1e3).toFixed(2))} ms`;
  return `${trimZeros((us / 1e6).toFixed(2))} s`;
}

/** A percentage with two decimals: "33.40 %". */
export function formatPercent(pct: number | null | undefined, digits = 2): string {
  if (!isNum(pct)) return DASH;
  return `${pct.toFixed(digits)} %`;
}

/** value / total as a percentage, or null when total is not positive. */
export function share(value: number, total: number): number | null {
  if (!isNum(value) || !isNum(total) || total <= 0) return null;
  return (value / total) * 100;
}

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** Bytes in binary units: "1.10 MiB", "31.74 GiB". */
export function formatBytes(bytes: number | null | undefined): string {
  if (!isNum(bytes)) return DASH;
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(2)} ${BYTE_UNITS[unit] ?? ''}`;
}

/** Axis labels of bytes: like formatBytes with trailing zeros dropped ("64 MiB", "1.5 GiB"). */
export function formatBytesAxis(bytes: number | null | undefined): string {
  if (!isNum(bytes)) return '';
  const [value, unit] = formatBytes(bytes).split(' ');
  return `${trimZeros(value ?? '')} ${unit ?? ''}`;
}

/** An integer with thousands separators: "75,718". */
export function formatCount(n: number | null | undefined): string {
  if (!isNum(n)) return DASH;
  return Math.round(n).toLocaleString('en-US');
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** Epoch milliseconds as local "YYYY-MM-DD HH:MM:SS". */
export function formatTimestamp(ms: number | null | undefined): string {
  if (!isNum(ms)) return DASH;
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return DASH;
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  );
}

/** A metric value from a recommendation: "33.40 %" for *_pct metrics, else a number. */
export function formatMetric(metric: string | undefined, value: number | null | undefined): string {
  if (!isNum(value)) return DASH;
  if (metric?.endsWith('_pct')) return formatPercent(value);
  if (metric?.endsWith('_us')) return formatDuration(value);
  return trimZeros(value.toFixed(2));
}

/** "1 step" / "3 steps". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for the HTML that ECharts tooltips take: names come from the traces
 *  ("<built-in function linear>") and from file names. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}
