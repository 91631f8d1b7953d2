// Call-stack frames: formatting "path:line", copying it, and opening it in VS Code when
// TensorBoard runs inside VS Code's TensorBoard webview.
//
// VS Code (microsoft/vscode-tensorboard src/tensorBoardSession.ts, the same code as the
// older microsoft/vscode-python src/client/tensorBoard/tensorBoardSession.ts) frames
// TensorBoard in a webview whose page listens for `message` events; it checks that the
// sender's origin is TensorBoard's and that `data.filename` and `data.line` are truthy, then
// forwards `{command: 'jump_to_source', args: {filename, line}}` to the extension, which
// opens the file beside the webview and selects `new Position(line, 0)`, a 0-based line.
// Our iframe's parent is TensorBoard's page and its parent that webview page, hence
// `window.parent.parent.postMessage({filename, line}, '*')` as the old plugin did; we send
// the 0-based line (1-based minus one, at least 1 since 0 is dropped). README: "Call stacks".

import type { StackFrame } from '../api/types';

/** "path:line" (or the path alone when the line is unknown); null without a file. */
export function frameLocation(frame: StackFrame): string | null {
  if (!frame.file) return null;
  return frame.line !== null ? `${frame.file}:${frame.line}` : frame.file;
}

/** The frame as the trace writes it: "file(line): function", or the function alone. */
export function frameText(frame: StackFrame): string {
  if (!frame.file) return frame.function;
  return `${frame.file}(${frame.line ?? '?'}): ${frame.function}`;
}

const FRAME = /^(.*)\((\d+)\): (.*)$/;

/** Parses "file(line): function" (the `Call stack` arg's format); other text is a function. */
export function parseFrame(text: string): StackFrame {
  const trimmed = text.trim();
  const m = FRAME.exec(trimmed);
  if (m?.[1] !== undefined && m[2] !== undefined && m[3] !== undefined) {
    return { file: m[1], line: Number(m[2]), function: m[3] };
  }
  return { file: null, line: null, function: trimmed };
}

/** A long path shortened for display: the part after site-packages/, else the last parts. */
export function shortPath(path: string, keep = 4): string {
  const normal = path.replace(/\\/g, '/');
  const site = normal.search(/\/(site|dist)-packages\//);
  if (site >= 0) return normal.slice(normal.indexOf('/', site + 1) + 1);
  const parts = normal.split('/');
  return parts.length > keep ? `…/${parts.slice(-keep).join('/')}` : normal;
}

/** The message VS Code's TensorBoard webview turns into "open this file at this line". */
export interface JumpToSource {
  filename: string;
  /** 0-based, as VS Code's handler uses it; at least 1 (the handler drops 0). */
  line: number;
}

export function jumpMessage(frame: StackFrame): JumpToSource | null {
  if (!frame.file || frame.line === null || !(frame.line >= 1)) return null;
  return { filename: frame.file, line: Math.max(1, frame.line - 1) };
}

export type EditorTarget = 'vscode' | 'none';

export interface HostInfo {
  /** p.kinetoscope.editor from the URL: "vscode" forces posting, "none" turns it off. */
  override?: string | undefined;
  /** location.ancestorOrigins, nearest first ([] where the browser has none). */
  ancestorOrigins: readonly string[];
  /** TensorBoard's page is itself in a frame. */
  framedTwice: boolean;
}

/** Origins of VS Code webviews: desktop (vscode-webview://), vscode.dev / Codespaces. */
export function isVSCodeOrigin(origin: string): boolean {
  if (/^vscode-(webview|file|app):/i.test(origin)) return true;
  try {
    const host = new URL(origin).hostname;
    return host.endsWith('.vscode-cdn.net') || host.endsWith('.vscode-webview.net');
  } catch {
    return false;
  }
}

export function editorTarget(info: HostInfo): EditorTarget {
  const override = info.override?.toLowerCase();
  if (override === 'vscode') return 'vscode';
  if (override === 'none' || override === 'copy') return 'none';
  if (!info.framedTwice) return 'none';
  return info.ancestorOrigins.some(isVSCodeOrigin) ? 'vscode' : 'none';
}

/** Where this iframe runs. Reads nothing of a cross-origin window (no errors, ever). */
export function hostInfo(override?: string): HostInfo {
  let framedTwice = false;
  try {
    const parent = window.parent;
    // Comparing window proxies is allowed across origins.
    framedTwice = parent !== window && parent.parent !== parent;
  } catch {
    // not framed the way TensorBoard frames plugins
  }
  let ancestorOrigins: string[] = [];
  try {
    const list = (window.location as Partial<Location>).ancestorOrigins;
    if (list) ancestorOrigins = Array.from(list);
  } catch {
    // no ancestor origins in this browser
  }
  return { override, ancestorOrigins, framedTwice };
}

/** Posts the jump message to VS Code's webview page (our grandparent). */
export function postJumpToSource(message: JumpToSource): boolean {
  try {
    const parent = window.parent;
    const target = parent.parent;
    if (parent === window || target === parent) return false;
    // The grandparent is a VS Code webview of unknown origin; the message holds only a
    // path and a line the page shows anyway.
    target.postMessage({ filename: message.filename, line: message.line }, '*');
    return true;
  } catch {
    return false;
  }
}

function legacyCopy(text: string): boolean {
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.left = '-9999px';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- the only way to copy without the async clipboard API (plain http on a remote host)
    ok = document.execCommand('copy');
  } catch {
    // copying refused
  }
  area.remove();
  return ok;
}

/** Copies text: the async clipboard API, else a selected textarea and execCommand. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (window.isSecureContext && 'clipboard' in navigator) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // denied or unfocused: fall back
  }
  return legacyCopy(text);
}
