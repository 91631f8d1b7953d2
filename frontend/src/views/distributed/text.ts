// Small text helpers of the Distributed page (pure).

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** For the HTML that ECharts tooltips take: worker names come from file names. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/** "GB/s" bandwidth with 3 significant digits, or a dash. */
export function formatBandwidth(gbps: number | null | undefined): string {
  if (typeof gbps !== 'number' || !Number.isFinite(gbps)) return '—';
  if (gbps === 0) return '0 GB/s';
  const digits = Math.abs(gbps) >= 100 ? 0 : Math.abs(gbps) >= 10 ? 1 : Math.abs(gbps) >= 1 ? 2 : 3;
  return `${gbps.toFixed(digits)} GB/s`;
}

export { plural } from '../../components/format';
