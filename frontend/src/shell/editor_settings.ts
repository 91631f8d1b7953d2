// The side bar's "Editor links" settings (components/editor_links.ts): which editor a
// source link opens, a URL template for others, and a path mapping for traces recorded on
// another machine. Saved in this browser's localStorage as soon as they change; the links
// on the page follow at once.

import { h } from '../components/dom';
import {
  EDITOR_LABELS,
  EDITORS,
  loadSettings,
  saveSettings,
  type EditorSettings,
} from '../components/editor_links';
import { selectField } from '../components/table_tools';

// The open worker-span, whose relative frames the links resolve (the shell names it).
export { useSourceSpan } from '../components/source_paths';

function textField(
  label: string,
  testid: string,
  value: string,
  placeholder: string,
  onInput: (v: string) => void,
): HTMLElement {
  const input = h('input', {
    class: 'ks-input',
    testid,
    attrs: { type: 'text', placeholder, 'aria-label': label, spellcheck: 'false' },
    on: { input: () => onInput(input.value) },
  });
  input.value = value;
  return h('label', { class: 'ks-field' }, h('span', { class: 'ks-field-label' }, label), input);
}

export function editorSettingsPanel(): HTMLElement {
  const settings: EditorSettings = loadSettings();
  const save = (update: Partial<EditorSettings>): void => {
    Object.assign(settings, update);
    saveSettings(settings);
    template.hidden = settings.editor !== 'custom';
  };
  const editor = selectField(
    'Open source in',
    'editor-select',
    EDITORS.map((e) => [e, EDITOR_LABELS[e]] as const),
    settings.editor,
    (v) => save({ editor: EDITORS.find((e) => e === v) ?? 'vscode' }),
  );
  const template = textField(
    'URL template',
    'editor-template',
    settings.template,
    'e.g. myeditor://open?path={path}&line={line}',
    (v) => save({ template: v }),
  );
  template.hidden = settings.editor !== 'custom';
  return h(
    'details',
    { class: 'ks-editor-settings', testid: 'editor-settings' },
    h('summary', null, 'Editor links'),
    editor.el,
    template,
    textField(
      'Trace path prefix',
      'editor-map-from',
      settings.mapFrom,
      'e.g. /home/user/proj/',
      (v) => save({ mapFrom: v }),
    ),
    textField('Local path prefix', 'editor-map-to', settings.mapTo, 'e.g. /Users/me/proj/', (v) =>
      save({ mapTo: v }),
    ),
    h(
      'p',
      { class: 'ks-muted ks-small' },
      'Paths starting with the trace prefix get the local one instead; with no trace prefix, the local prefix goes before relative paths (torch/…, the script’s name). Relative paths the server finds (the recording interpreter’s folders, the run’s folder, KINETOSCOPE_SOURCE_ROOTS) are links already.',
    ),
  );
}
