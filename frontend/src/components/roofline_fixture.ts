// Rows and a roof for the roofline's unit tests: an H100's datasheet roof (bf16, fp32) and
// rows with nothing known but what a test gives.

import type { Roof, RooflineFields } from '../api/types';

export const H100_ROOF: Roof = {
  device_id: 0,
  device: 'H100-SXM',
  match: 'exact',
  memory_gbps: 3350,
  tflops: { bf16: 989.5, fp32: 67 },
  source: 'datasheet',
};

/** A row named `name` with no roofline field known, then `over`'s. */
export function rooflineRow<E extends object = object>(
  name: string,
  over: Partial<RooflineFields> & E = {} as E,
): RooflineFields & { name: string } & E {
  return {
    name,
    flops: null,
    bytes: null,
    tflops: null,
    gbps: null,
    intensity: null,
    pct_of_peak: null,
    bound: null,
    dtype: null,
    ...over,
  };
}
