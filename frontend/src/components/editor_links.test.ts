import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  DEFAULT_SETTINGS,
  editorUrl,
  mapPath,
  parseSettings,
  type EditorSettings,
} from './editor_links';

const settingsWith = (update: Partial<EditorSettings>): EditorSettings => ({
  ...DEFAULT_SETTINGS,
  ...update,
});

describe('editor URLs', () => {
  it('opens VS Code by default, a POSIX path after file/', () => {
    assert.equal(
      editorUrl('/home/user/proj/model.py', 42, DEFAULT_SETTINGS),
      'vscode://file/home/user/proj/model.py:42',
    );
    assert.equal(editorUrl('/a/b.py', null, DEFAULT_SETTINGS), 'vscode://file/a/b.py:1');
  });

  it('writes Windows paths with forward slashes, spaces and # encoded', () => {
    assert.equal(
      editorUrl('C:\\work\\my proj\\a#1.py', 7, DEFAULT_SETTINGS),
      'vscode://file/C:/work/my%20proj/a%231.py:7',
    );
  });

  it('opens Cursor, JetBrains and a template', () => {
    assert.equal(
      editorUrl('/x/y.py', 3, settingsWith({ editor: 'cursor' })),
      'cursor://file/x/y.py:3',
    );
    assert.equal(
      editorUrl('/x/y z.py', 3, settingsWith({ editor: 'jetbrains' })),
      'idea://open?file=%2Fx%2Fy%20z.py&line=3',
    );
    const custom = settingsWith({
      editor: 'custom',
      template: 'subl://open?url=file://{path}&line={line}',
    });
    assert.equal(editorUrl('/x/y.py', 9, custom), 'subl://open?url=file:///x/y.py&line=9');
    // A template without {path} opens nothing rather than a wrong file.
    assert.equal(
      editorUrl('/x/y.py', 9, settingsWith({ editor: 'custom', template: 'x://' })),
      null,
    );
  });

  it('maps a recorded prefix to a local one', () => {
    const mapped = settingsWith({ mapFrom: '/home/user/kinetoscope/', mapTo: '/Users/me/src/ks/' });
    assert.equal(
      mapPath('/home/user/kinetoscope/samples/a.py', mapped),
      '/Users/me/src/ks/samples/a.py',
    );
    assert.equal(
      editorUrl('/home/user/kinetoscope/samples/a.py', 12, mapped),
      'vscode://file/Users/me/src/ks/samples/a.py:12',
    );
    assert.equal(mapPath('/elsewhere/a.py', mapped), '/elsewhere/a.py');
    // With no trace prefix, the local prefix goes before relative paths only.
    const root = settingsWith({ mapTo: '/Users/me/src/ks/samples' });
    assert.equal(mapPath('record_gpu.py', root), '/Users/me/src/ks/samples/record_gpu.py');
    assert.equal(mapPath('/tmp/ind/x.py', root), '/tmp/ind/x.py');
    assert.equal(mapPath('<string>', root), '<string>');
    // A relative path opens nothing, unless a mapping makes it absolute.
    assert.equal(editorUrl('torch/nn/modules/linear.py', 1, DEFAULT_SETTINGS), null);
    assert.equal(editorUrl('<string>', 1, DEFAULT_SETTINGS), null);
    const site = settingsWith({
      mapFrom: 'torch/',
      mapTo: '/venv/lib/python3.11/site-packages/torch/',
    });
    assert.equal(
      editorUrl('torch/nn/modules/linear.py', 5, site),
      'vscode://file/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py:5',
    );
  });

  it('opens a relative frame where the server found it, then maps that path', () => {
    const local = '/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py';
    assert.equal(
      editorUrl('torch/nn/modules/linear.py', 5, DEFAULT_SETTINGS, local),
      `vscode://file${local}:5`,
    );
    const mapped = settingsWith({ mapFrom: '/venv/', mapTo: '/Users/me/venv/' });
    assert.equal(
      editorUrl('torch/nn/modules/linear.py', 5, mapped, local),
      'vscode://file/Users/me/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py:5',
    );
    assert.equal(
      editorUrl('torch/nn/modules/linear.py', 5, settingsWith({ editor: 'none' }), local),
      null,
    );
  });

  it('opens nothing with editor none', () => {
    assert.equal(editorUrl('/x/y.py', 3, settingsWith({ editor: 'none' })), null);
  });

  it('reads stored settings, defaults for what is missing or wrong', () => {
    assert.deepEqual(parseSettings(null), DEFAULT_SETTINGS);
    assert.deepEqual(parseSettings('not json'), DEFAULT_SETTINGS);
    assert.deepEqual(parseSettings('{"editor": "emacs", "mapFrom": 3}'), DEFAULT_SETTINGS);
    assert.deepEqual(parseSettings('{"editor": "cursor", "mapFrom": "/a", "mapTo": "/b"}'), {
      editor: 'cursor',
      template: '',
      mapFrom: '/a',
      mapTo: '/b',
    });
  });
});
