import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  editorTarget,
  frameLocation,
  frameText,
  isVSCodeOrigin,
  jumpMessage,
  parseFrame,
  shortPath,
} from './source_link';

describe('frames', () => {
  it('formats path:line and the trace text', () => {
    const frame = { file: 'torch/nn/modules/linear.py', line: 124, function: 'forward' };
    assert.equal(frameLocation(frame), 'torch/nn/modules/linear.py:124');
    assert.equal(frameText(frame), 'torch/nn/modules/linear.py(124): forward');
    const builtin = { file: null, line: null, function: '<built-in function linear>' };
    assert.equal(frameLocation(builtin), null);
    assert.equal(frameText(builtin), '<built-in function linear>');
    assert.equal(frameLocation({ file: 'a.py', line: null, function: 'f' }), 'a.py');
  });

  it('parses the Call stack arg format, Windows paths included', () => {
    assert.deepEqual(parseFrame(' /x/conv.py(440): _conv_forward '), {
      file: '/x/conv.py',
      line: 440,
      function: '_conv_forward',
    });
    assert.deepEqual(parseFrame('C:\\work\\train (v2).py(12): <module>'), {
      file: 'C:\\work\\train (v2).py',
      line: 12,
      function: '<module>',
    });
    assert.deepEqual(parseFrame('nn.Module: Linear'), {
      file: null,
      line: null,
      function: 'nn.Module: Linear',
    });
  });

  it('shortens long paths', () => {
    assert.equal(
      shortPath('/home/u/env/lib/python3.7/site-packages/torch/nn/modules/conv.py'),
      'torch/nn/modules/conv.py',
    );
    assert.equal(shortPath('/a/b/c/d/e/f.py'), '…/c/d/e/f.py');
    assert.equal(shortPath('train.py'), 'train.py');
    assert.equal(shortPath('C:\\x\\Lib\\site-packages\\torch\\a.py'), 'torch/a.py');
  });
});

describe('VS Code', () => {
  it('builds the jump message with the 0-based line VS Code selects', () => {
    assert.deepEqual(jumpMessage({ file: '/x/train.py', line: 86, function: 'train' }), {
      filename: '/x/train.py',
      line: 85,
    });
    // VS Code drops line 0: line 1 goes as 1.
    assert.deepEqual(jumpMessage({ file: '/x/a.py', line: 1, function: 'f' }), {
      filename: '/x/a.py',
      line: 1,
    });
    assert.equal(jumpMessage({ file: null, line: null, function: 'nn.Module: Conv2d' }), null);
    assert.equal(jumpMessage({ file: 'a.py', line: null, function: 'f' }), null);
  });

  it('recognises VS Code webview origins', () => {
    assert.equal(isVSCodeOrigin('vscode-webview://0d3a2c1b'), true);
    assert.equal(isVSCodeOrigin('https://1abc.vscode-cdn.net'), true);
    assert.equal(isVSCodeOrigin('http://127.0.0.1:6006'), false);
    assert.equal(isVSCodeOrigin('null'), false);
  });

  it('decides from the URL override and the frame chain', () => {
    const vscode = ['http://localhost:6006', 'vscode-webview://id', 'vscode-file://vscode-app'];
    assert.equal(editorTarget({ ancestorOrigins: vscode, framedTwice: true }), 'vscode');
    assert.equal(editorTarget({ ancestorOrigins: vscode, framedTwice: false }), 'none');
    assert.equal(
      editorTarget({ ancestorOrigins: ['http://localhost:6006'], framedTwice: false }),
      'none',
    );
    assert.equal(
      editorTarget({ ancestorOrigins: ['http://a', 'http://jupyter'], framedTwice: true }),
      'none',
    );
    assert.equal(
      editorTarget({ override: 'vscode', ancestorOrigins: [], framedTwice: false }),
      'vscode',
    );
    assert.equal(
      editorTarget({ override: 'none', ancestorOrigins: vscode, framedTwice: true }),
      'none',
    );
  });
});
