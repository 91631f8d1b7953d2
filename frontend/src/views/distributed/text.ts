// Small text helpers of the Distributed page (pure).

/** "GB/s" bandwidth with 3 significant digits, or a dash. */
export function formatBandwidth(gbps: number | null | undefined): string {
  if (typeof gbps !== 'number' || !Number.isFinite(gbps)) return '—';
  if (gbps === 0) return '0 GB/s';
  const digits = Math.abs(gbps) >= 100 ? 0 : Math.abs(gbps) >= 10 ? 1 : Math.abs(gbps) >= 1 ? 2 : 3;
  return `${gbps.toFixed(digits)} GB/s`;
}

export { plural } from '../../components/format';
