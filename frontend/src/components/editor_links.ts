// Links that open a source file at a line in the user's editor, from any browser: VS Code
// (`vscode://file/<path>:<line>`, the default), Cursor (`cursor://file/...`), JetBrains
// IDEs (`idea://open?file=<path>&line=<line>`, the scheme their "open in IDE" handler
// registers), a URL template with {path} and {line}, or none (copy only). A path mapping
// (prefix from → to) rewrites the paths of traces recorded on another machine. Settings
// live in this browser's localStorage (`kinetoscope.editor`). Inside VS Code's TensorBoard
// webview a click posts the jump-to-source message instead (source_link.ts), which is the
// only way a webview can open a file.

import { h } from './dom';
import { editorTarget, hostInfo, jumpMessage, postJumpToSource } from './source_link';

export const EDITORS = ['vscode', 'cursor', 'jetbrains', 'custom', 'none'] as const;
export type Editor = (typeof EDITORS)[number];

export interface EditorSettings {
  editor: Editor;
  /** `custom`: a URL with {path} (the mapped path, URI-encoded, slashes kept) and {line}. */
  template: string;
  /** A path prefix as the trace writes it, and what to put instead ('' in `from`: none). */
  mapFrom: string;
  mapTo: string;
}

export const DEFAULT_SETTINGS: EditorSettings = {
  editor: 'vscode',
  template: '',
  mapFrom: '',
  mapTo: '',
};

export const STORAGE_KEY = 'kinetoscope.editor';

export const EDITOR_LABELS: Readonly<Record<Editor, string>> = {
  vscode: 'VS Code',
  cursor: 'Cursor',
  jetbrains: 'JetBrains (PyCharm, IDEA)',
  custom: 'URL template',
  none: 'None (copy only)',
};

/** The settings from a stored JSON text; what is missing or wrong is the default's. */
export function parseSettings(text: string | null): EditorSettings {
  if (!text) return { ...DEFAULT_SETTINGS };
  try {
    const raw = JSON.parse(text) as Partial<Record<keyof EditorSettings, unknown>>;
    const str = (v: unknown): string => (typeof v === 'string' ? v : '');
    const editor = EDITORS.find((e) => e === raw.editor) ?? DEFAULT_SETTINGS.editor;
    return {
      editor,
      template: str(raw.template),
      mapFrom: str(raw.mapFrom),
      mapTo: str(raw.mapTo),
    };
  } catch {
    return { ...DEFAULT_SETTINGS };
  }
}

export function loadSettings(): EditorSettings {
  try {
    return parseSettings(window.localStorage.getItem(STORAGE_KEY));
  } catch {
    return { ...DEFAULT_SETTINGS }; // storage refused (privacy settings)
  }
}

export function saveSettings(settings: EditorSettings): void {
  try {
    window.localStorage.setItem(STORAGE_KEY, JSON.stringify(settings));
  } catch {
    // storage refused: the settings last until the page closes
  }
}

/** Absolute on some machine: `/...`, `C:\...` or `C:/...`, `\\server\...`. */
function isAbsolute(path: string): boolean {
  return /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(path);
}

/** The path with the mapping applied: a prefix match; with no trace prefix, the local
 * prefix goes before relative paths (the Python tracer writes `torch/nn/...` and the
 * script's own name relative to where they were found). */
export function mapPath(path: string, s: EditorSettings): string {
  if (s.mapFrom && path.startsWith(s.mapFrom)) return s.mapTo + path.slice(s.mapFrom.length);
  if (!s.mapFrom && s.mapTo && !isAbsolute(path) && !path.startsWith('<')) {
    return s.mapTo.replace(/[\\/]*$/, '/') + path;
  }
  return path;
}

/** The editor URL of a file at a line; null when the editor is `none`, or the path (after
 * mapping) is not absolute (`<string>`, `torch/nn/modules/linear.py`: no editor can find
 * it; a mapping can make it absolute). */
export function editorUrl(file: string, line: number | null, s: EditorSettings): string | null {
  if (s.editor === 'none') return null;
  const path = mapPath(file, s).replace(/\\/g, '/');
  if (!isAbsolute(path)) return null;
  const at = line ?? 1;
  const encoded = encodeURI(path).replace(/#/g, '%23').replace(/\?/g, '%3F');
  switch (s.editor) {
    case 'vscode':
    case 'cursor':
      // `<scheme>://file/<full path>:<line>`: a POSIX path brings its own leading slash.
      return `${s.editor}://file${path.startsWith('/') ? '' : '/'}${encoded}:${at}`;
    case 'jetbrains':
      return `idea://open?file=${encodeURIComponent(path)}&line=${at}`;
    case 'custom':
      if (!s.template.includes('{path}')) return null;
      return s.template.split('{path}').join(encoded).split('{line}').join(String(at));
  }
}

let inVSCode: boolean | undefined;

/** A link opening `file:line` in the editor (showing `content`), or null when there is none.
 * Inside VS Code's webview the click posts the jump message instead. */
export function sourceAnchor(
  file: string | null,
  line: number | null,
  content: string | HTMLElement,
  testid = 'editor-link',
): HTMLAnchorElement | null {
  if (!file) return null;
  inVSCode ??= editorTarget(hostInfo()) === 'vscode';
  const jump = inVSCode ? jumpMessage({ file, line, function: '' }) : null;
  const url = editorUrl(file, line, loadSettings());
  if (!url && !jump) return null;
  const anchor = h(
    'a',
    {
      class: 'ks-editor-link',
      testid,
      title: `Open ${file}${line !== null ? `:${line}` : ''} in the editor`,
      attrs: { href: url ?? '#', rel: 'noopener' },
    },
    content,
  );
  if (jump) {
    anchor.addEventListener('click', (event) => {
      event.preventDefault();
      postJumpToSource(jump);
    });
    return anchor;
  }
  // Settings changed since the link was drawn apply before it is followed.
  const refresh = (): void => {
    anchor.href = editorUrl(file, line, loadSettings()) ?? '#';
  };
  for (const type of ['mouseenter', 'focus', 'mousedown']) anchor.addEventListener(type, refresh);
  return anchor;
}
