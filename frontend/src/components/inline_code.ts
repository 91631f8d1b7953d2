// Text the server writes with `backticks` around code (advice, "step 1: ... (`forward`,
// model.py:5)") as text and <code> runs, never as HTML.

import { h, type Child } from './dom';

export interface Run {
  code: boolean;
  text: string;
}

/** `text` split at backticks: the odd runs are code. An unpaired backtick stays text. */
export function codeRuns(text: string): Run[] {
  const parts = text.split('`');
  if (parts.length % 2 === 0) return [{ code: false, text }];
  return parts.map((part, i) => ({ code: i % 2 === 1, text: part })).filter((r) => r.text !== '');
}

export function inlineCode(text: string): Child[] {
  return codeRuns(text).map((r) => (r.code ? h('code', null, r.text) : r.text));
}
