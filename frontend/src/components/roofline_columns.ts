// The roofline columns both the Operators and the Kernels tables show (docs/metrics.md
// #roofline): achieved TFLOP/s and GB/s, FLOP per byte, % of the binding roof, the bound.
// "—" where the work, the time or the device's peaks are not known.

import type { RooflineFields } from '../api/types';
import { numberFormat, type ColumnSpec } from './columns';

/** `digits` significant digits; a tiny rate in exponent form ("1.35e-5", not "0.00001353"). */
const sig = (digits: number) => (v: number | null) => {
  if (v === null) return '—';
  if (v !== 0 && Math.abs(v) < 1e-3) return v.toExponential(Math.max(digits - 2, 1));
  return String(Number(v.toPrecision(digits)));
};

function numeric<R extends RooflineFields>(
  key: 'tflops' | 'gbps' | 'intensity' | 'pct_of_peak',
  label: string,
  tooltip: string,
  text: (v: number | null) => string,
): ColumnSpec<R> {
  return {
    key,
    label,
    tooltip: `${tooltip} Click to sort.`,
    align: 'right',
    minWidth: 76,
    value: (row) => row[key],
    format: numberFormat(text),
  };
}

/** The roofline columns, in table order; their keys are the rows' field names. */
export function rooflineColumns<R extends RooflineFields>(): ColumnSpec<R>[] {
  return [
    numeric<R>(
      'tflops',
      'TFLOP/s',
      'Achieved TFLOP/s (10^12 FLOP/s) over the device time.',
      sig(4),
    ),
    numeric<R>(
      'gbps',
      'GB/s',
      'Achieved memory traffic, GB/s (10^9 B/s): bytes read and written once.',
      sig(4),
    ),
    numeric<R>('intensity', 'FLOP/B', 'Arithmetic intensity: FLOPs per byte moved.', sig(3)),
    numeric<R>(
      'pct_of_peak',
      '% of peak',
      'Share of the roof that binds it (compute peak of its data type, or memory bandwidth) on this GPU.',
      (v) => (v === null ? '—' : v.toFixed(1)),
    ),
    {
      key: 'bound',
      label: 'Bound',
      tooltip: 'What bounds it by the roofline: compute or memory. Click to sort.',
      minWidth: 70,
      value: (row) => row.bound,
    },
  ];
}

/** Dropped first when the table is too narrow. */
export const ROOFLINE_NARROW_HIDES = ['intensity', 'gbps', 'tflops', 'bound', 'pct_of_peak'];
