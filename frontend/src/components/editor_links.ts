// Links that open a source file at a line in the user's editor, from any browser: VS Code
// (`vscode://file/<path>:<line>`, the default), Cursor (`cursor://file/...`), JetBrains
// IDEs (`idea://open?file=<path>&line=<line>`, the scheme their "open in IDE" handler
// registers), a URL template with {path} and {line}, or none (copy only). A relative frame
// file (`torch/nn/...`) is first looked up where the server found it (source_paths.ts);
// then a path mapping (prefix from → to) rewrites the paths of traces recorded on another
// machine. Settings live in this browser's localStorage (`kinetoscope.editor`). Every
// link drawn is an anchor that knows its file: when the settings or the resolutions
// change, the open links are refreshed (a link appears where there was none), and the
// note under a stack says when a mapping would make links. Inside VS Code's TensorBoard
// webview a click posts the jump-to-source message instead (source_link.ts), which is the
// only way a webview can open a file.

import { h } from './dom';
import { editorTarget, hostInfo, jumpMessage, postJumpToSource } from './source_link';
import {
  announceEditorLinksChanged,
  EDITOR_LINKS_CHANGED,
  isAbsolutePath,
  resolvedPath,
} from './source_paths';

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
  if (unsaved) return { ...unsaved };
  try {
    return parseSettings(window.localStorage.getItem(STORAGE_KEY));
  } catch {
    return { ...DEFAULT_SETTINGS }; // storage refused (privacy settings)
  }
}

let unsaved: EditorSettings | null = null;

/** Keeps the settings (localStorage) and refreshes the links drawn. */
export function saveSettings(settings: EditorSettings): void {
  try {
    window.localStorage.setItem(STORAGE_KEY, JSON.stringify(settings));
    unsaved = null;
  } catch {
    unsaved = { ...settings }; // storage refused: the settings last until the page closes
  }
  announceEditorLinksChanged();
}

/** The path with the mapping applied: a prefix match; with no trace prefix, the local
 * prefix goes before relative paths (the Python tracer writes `torch/nn/...` and the
 * script's own name relative to where they were found). */
export function mapPath(path: string, s: EditorSettings): string {
  if (s.mapFrom && path.startsWith(s.mapFrom)) return s.mapTo + path.slice(s.mapFrom.length);
  if (!s.mapFrom && s.mapTo && !isAbsolutePath(path) && !path.startsWith('<')) {
    return s.mapTo.replace(/[\\/]*$/, '/') + path;
  }
  return path;
}

/** The editor URL of a file at a line; null when the editor is `none`, or the path (after
 * mapping) is not absolute (`<string>`, `torch/nn/modules/linear.py`: no editor can find
 * it; a mapping can make it absolute). `local` is where the server found a relative file. */
export function editorUrl(
  file: string,
  line: number | null,
  s: EditorSettings,
  local?: string,
): string | null {
  if (s.editor === 'none') return null;
  const path = mapPath(local ?? file, s).replace(/\\/g, '/');
  if (!isAbsolutePath(path)) return null;
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

/** The link's URL now (settings and resolutions as they are). */
function currentUrl(file: string, line: number | null): string | null {
  return editorUrl(file, line, loadSettings(), resolvedPath(file));
}

/** Sets or removes the link's href; without one it reads as plain text and says why. */
function refreshAnchor(anchor: HTMLAnchorElement): void {
  const file = anchor.dataset.file ?? '';
  const line = anchor.dataset.line ? Number(anchor.dataset.line) : null;
  const at = `${file}${line !== null ? `:${line}` : ''}`;
  const url = currentUrl(file, line);
  if (url) {
    anchor.href = url;
    anchor.title = `Open ${at} in the editor`;
  } else {
    anchor.removeAttribute('href');
    anchor.title = noLinkReason(file, at);
  }
  anchor.dataset.linked = url ? 'true' : 'false';
}

function noLinkReason(file: string, at: string): string {
  if (loadSettings().editor === 'none') return `${at} (editor links are off)`;
  if (!isAbsolutePath(file)) {
    return `${at}: a relative path not found on this machine; a local path prefix under "Editor links" (side bar) makes it a link`;
  }
  return `${at}: no editor link (see "Editor links" in the side bar)`;
}

/** A link opening `file:line` in the editor (showing `content`); plain text while no
 * editor can open it (it becomes a link when the settings or resolutions allow). null
 * without a file. Inside VS Code's webview the click posts the jump message instead. */
export function sourceAnchor(
  file: string | null,
  line: number | null,
  content: string | HTMLElement,
  testid = 'editor-link',
): HTMLAnchorElement | null {
  if (!file) return null;
  inVSCode ??= editorTarget(hostInfo()) === 'vscode';
  const jump = inVSCode ? jumpMessage({ file, line, function: '' }) : null;
  const anchor = h(
    'a',
    {
      class: 'ks-editor-link',
      testid,
      attrs: { rel: 'noopener' },
      dataset: { file, line: line !== null ? String(line) : '' },
    },
    content,
  );
  if (jump) {
    anchor.href = '#';
    anchor.title = `Open ${file}${line !== null ? `:${line}` : ''} in VS Code`;
    anchor.dataset.linked = 'true';
    anchor.addEventListener('click', (event) => {
      event.preventDefault();
      postJumpToSource(jump);
    });
    return anchor;
  }
  anchor.classList.add('ks-editor-link-live');
  refreshAnchor(anchor);
  // Settings changed in another tab apply before the link is followed.
  const refresh = (): void => refreshAnchor(anchor);
  for (const type of ['mouseenter', 'focus', 'mousedown']) anchor.addEventListener(type, refresh);
  return anchor;
}

/** Every live link and stack note of the page, drawn again. */
export function refreshEditorLinks(root: ParentNode = document): void {
  for (const a of root.querySelectorAll<HTMLAnchorElement>('a.ks-editor-link-live')) {
    refreshAnchor(a);
  }
  for (const note of root.querySelectorAll<HTMLElement>('.ks-editor-note')) refreshNote(note);
}

// (Not in the unit tests' Node, which has no window.)
if (typeof window !== 'undefined') {
  window.addEventListener(EDITOR_LINKS_CHANGED, () => refreshEditorLinks());
}

const noteTargets = new WeakMap<HTMLElement, HTMLElement>();

/** A note for under a stack: shown while some of its frames have relative paths that no
 *  editor link opens, it says what would make links. `stack` is the element holding the
 *  stack's links. */
export function stackLinkNote(stack: HTMLElement): HTMLElement {
  const note = h('div', { class: 'ks-muted ks-small ks-editor-note', testid: 'editor-link-note' });
  noteTargets.set(note, stack);
  refreshNote(note);
  return note;
}

function refreshNote(note: HTMLElement): void {
  const stack = noteTargets.get(note);
  if (!stack) return;
  const relative = [...stack.querySelectorAll<HTMLAnchorElement>('a.ks-editor-link-live')]
    .map((a) => (a.dataset.linked === 'true' ? '' : (a.dataset.file ?? '')))
    .filter((f) => f !== '' && !isAbsolutePath(f) && !f.startsWith('<'));
  note.hidden = relative.length === 0 || loadSettings().editor === 'none';
  if (note.hidden) return;
  const tops = [...new Set(relative.map((f) => f.split('/')[0] ?? f))].slice(0, 3);
  const examples = tops.map((t) => (relative.some((f) => f.startsWith(`${t}/`)) ? `${t}/…` : t));
  note.textContent =
    `Relative paths (${examples.join(', ')}) are not found on this machine, so they have no editor link. ` +
    'Set a local path prefix under "Editor links" in the side bar (or start TensorBoard with KINETOSCOPE_SOURCE_ROOTS naming the folders that hold them) to make them links.';
}
