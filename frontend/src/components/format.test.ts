import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  DASH,
  escapeHtml,
  formatBytes,
  formatCount,
  formatDuration,
  formatDurationAxis,
  formatMetric,
  formatPercent,
  formatTimeOffset,
  formatTimestamp,
  plural,
  share,
} from './format';

describe('formatDuration', () => {
  it('picks µs, ms or s', () => {
    assert.equal(formatDuration(0), '0 µs');
    assert.equal(formatDuration(1.25), '1.25 µs');
    assert.equal(formatDuration(12.5), '12.5 µs');
    assert.equal(formatDuration(90), '90 µs');
    assert.equal(formatDuration(999.4), '999 µs');
    assert.equal(formatDuration(98598), '98.60 ms');
    assert.equal(formatDuration(1000), '1.00 ms');
    assert.equal(formatDuration(1234567), '1.23 s');
  });

  it('shows a dash for missing values', () => {
    assert.equal(formatDuration(null), DASH);
    assert.equal(formatDuration(undefined), DASH);
    assert.equal(formatDuration(Number.NaN), DASH);
  });
});

describe('formatDurationAxis', () => {
  it('drops trailing zeros', () => {
    assert.equal(formatDurationAxis(0), '0');
    assert.equal(formatDurationAxis(210000), '210 ms');
    assert.equal(formatDurationAxis(1500000), '1.5 s');
    assert.equal(formatDurationAxis(12.5), '12.5 µs');
    assert.equal(formatDurationAxis(null), '');
  });
});

describe('formatPercent and share', () => {
  it('formats with two decimals', () => {
    assert.equal(formatPercent(33.4), '33.40 %');
    assert.equal(formatPercent(0), '0.00 %');
    assert.equal(formatPercent(null), DASH);
  });

  it('computes shares and refuses empty totals', () => {
    assert.equal(share(25, 200), 12.5);
    assert.equal(share(1, 0), null);
    assert.equal(share(1, -5), null);
  });
});

describe('formatBytes', () => {
  it('uses binary units', () => {
    assert.equal(formatBytes(512), '512 B');
    assert.equal(formatBytes(1159569), '1.11 MiB');
    assert.equal(formatBytes(34084028416), '31.74 GiB');
    assert.equal(formatBytes(null), DASH);
  });
});

describe('formatCount / formatTimestamp / formatMetric', () => {
  it('formats counts', () => {
    assert.equal(formatCount(75718), '75,718');
    assert.equal(formatCount(undefined), DASH);
  });

  it('formats a timestamp in local time', () => {
    const ms = new Date(2021, 5, 8, 9, 4, 49).getTime();
    assert.equal(formatTimestamp(ms), '2021-06-08 09:04:49');
    assert.equal(formatTimestamp(null), DASH);
  });

  it('formats metrics by suffix', () => {
    assert.equal(formatMetric('dataloader_share_pct', 33.4), '33.40 %');
    assert.equal(formatMetric('idle_us', 1500), '1.50 ms');
    assert.equal(formatMetric('ratio', 2.5), '2.5');
    assert.equal(formatMetric('ratio', null), DASH);
  });
});

describe('plural', () => {
  it('says "1 step", not "1 steps"', () => {
    assert.equal(plural(1, 'step'), '1 step');
    assert.equal(plural(0, 'step'), '0 steps');
    assert.equal(plural(3, 'step'), '3 steps');
  });
});

describe('escapeHtml', () => {
  it('escapes the five HTML-special characters and keeps the rest', () => {
    assert.equal(escapeHtml('<a & "b">'), '&lt;a &amp; &quot;b&quot;&gt;');
    assert.equal(
      escapeHtml("<built-in function linear> 'x'"),
      '&lt;built-in function linear&gt; &#39;x&#39;',
    );
    assert.equal(escapeHtml('aten::mm · µs'), 'aten::mm · µs');
  });
});

describe('formatTimeOffset', () => {
  it('writes a time since the start with the decimals it needs, no more', () => {
    assert.equal(formatTimeOffset(400.897), '400.9 µs');
    assert.equal(formatTimeOffset(5810.804), '5.811 ms');
    assert.equal(formatTimeOffset(106_460.676), '106.461 ms');
    assert.equal(formatTimeOffset(12), '12 µs');
    assert.equal(formatTimeOffset(12_345_678.9), '12.3457 s');
    assert.equal(formatTimeOffset(0), '0 µs');
    assert.equal(formatTimeOffset(null), '—');
  });
});
