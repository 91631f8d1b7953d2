import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { csvCell, csvFileName, toCsv } from './csv';

describe('csvCell', () => {
  it('writes numbers and booleans as they are, missing values empty', () => {
    assert.equal(csvCell(-1024), '-1024');
    assert.equal(csvCell(1419247337276.476), '1419247337276.476');
    assert.equal(csvCell(Number.NaN), '');
    assert.equal(csvCell(null), '');
    assert.equal(csvCell(undefined), '');
    assert.equal(csvCell(true), 'true');
  });

  it('quotes commas, quotes and line breaks', () => {
    assert.equal(csvCell('aten::empty'), 'aten::empty');
    assert.equal(csvCell('a, b'), '"a, b"');
    assert.equal(csvCell('say "hi"'), '"say ""hi"""');
    assert.equal(csvCell('two\nlines'), '"two\nlines"');
  });

  it('defuses text a spreadsheet would run as a formula', () => {
    assert.equal(csvCell('=1+1'), "'=1+1");
    assert.equal(csvCell('-x'), "'-x");
    assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)");
    assert.equal(csvCell('=a,b'), `"'=a,b"`);
  });
});

describe('toCsv', () => {
  it('joins with commas and CRLF, ending with a line break', () => {
    assert.equal(
      toCsv(
        ['name', 'bytes'],
        [
          ['aten::add', 512],
          ['x,y', null],
        ],
      ),
      'name,bytes\r\naten::add,512\r\n"x,y",\r\n',
    );
    assert.equal(toCsv(['a'], []), 'a\r\n');
  });
});

describe('csvFileName', () => {
  it('makes a safe name', () => {
    assert.equal(
      csvFileName(['memory', 'run/a b', 'worker0', 'GPU0', 'allocations']),
      'memory-run_a_b-worker0-GPU0-allocations.csv',
    );
    assert.equal(csvFileName(['', '///']), 'export.csv');
  });
});
