// Fixed label and colour per step-time category, the same on every chart and table.

import { CATEGORIES, type Category } from '../api/types';

export { CATEGORIES, type Category };

export const CATEGORY_LABEL: Record<Category, string> = {
  kernel: 'Kernel',
  memcpy: 'Memcpy',
  memset: 'Memset',
  communication: 'Communication',
  runtime: 'Runtime',
  dataloader: 'DataLoader',
  cpu_exec: 'CPU Exec',
  other: 'Other',
};

export const CATEGORY_HELP: Record<Category, string> = {
  kernel: 'GPU kernels running (device time, not hidden by other work)',
  memcpy: 'Memory copies between host and device or between devices',
  memset: 'Device memory set operations',
  communication: 'Collective communication (NCCL, Gloo, ...)',
  runtime: 'CUDA runtime calls on the host (launches, synchronizations)',
  dataloader: 'Time in the DataLoader fetching the next batch',
  cpu_exec: 'Host-side execution of operators with the device idle',
  other: 'Everything else in the step',
};

/** Colour-blind-friendly Tableau 10 colours, readable on light and dark backgrounds. */
export const CATEGORY_COLOR: Record<Category, string> = {
  kernel: '#4e79a7',
  memcpy: '#f28e2b',
  memset: '#b07aa1',
  communication: '#e15759',
  runtime: '#76b7b2',
  dataloader: '#edc948',
  cpu_exec: '#59a14f',
  other: '#9c9c9c',
};
