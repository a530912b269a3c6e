import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { JobTracker, endNotice, formatStats, hitRatio, lastLine, statusView } from '../src/jobs';

test('JobTracker follows begin, report and end', () => {
  const t = new JobTracker();
  assert.equal(t.update('x', { kind: 'report', message: 'orphan' }), undefined, 'a report without begin is ignored');
  t.update('a', { kind: 'begin', title: 'Kimi: Explain', cancellable: true });
  t.update(7, { kind: 'begin', title: 'Kimi: Fix' });
  t.update('a', { kind: 'report', message: 'The function\nreturns the sum' });
  assert.deepEqual(t.tokens(), ['a', '7']);
  assert.equal(t.running()[0].message, 'The function\nreturns the sum');
  t.update('a', { kind: 'end', message: 'explanation ready' });
  assert.deepEqual(t.tokens(), ['7']);
  assert.equal(t.lastOutcome, 'Kimi: Explain: explanation ready');
  t.update(7, { kind: 'end' });
  assert.deepEqual(t.running(), []);
  assert.equal(t.lastOutcome, 'Kimi: Fix: done');
});

test('lastLine keeps the readable tail', () => {
  assert.equal(lastLine('first\nsecond\n\n'), 'second');
  assert.equal(lastLine(''), '');
  assert.equal(lastLine('x'.repeat(100), 10), '…' + 'x'.repeat(9));
  assert.equal(lastLine('first line ⏎ second line ⏎ '), 'second line', 'the server marks breaks with ⏎');
});

test('hitRatio prefers the server figure and falls back to token counts', () => {
  assert.equal(hitRatio({ hitRatio: 0.5, promptTokens: 10, cachedTokens: 1 }), 0.5);
  assert.equal(hitRatio({ promptTokens: 200, cachedTokens: 150 }), 0.75);
  assert.equal(hitRatio({ promptTokens: 0, cachedTokens: 0 }), undefined);
  assert.equal(hitRatio(undefined), undefined);
});

test('statusView shows the running job and the hit ratio', () => {
  const t = new JobTracker();
  t.update('a', { kind: 'begin', title: 'Kimi: Explain' });
  t.update('a', { kind: 'report', message: 'streaming text' });
  const v = statusView(t.running(), { requests: 3, promptTokens: 1000, cachedTokens: 870 });
  assert.equal(v.busy, true);
  assert.equal(v.text, '$(sync~spin) Kimi: Explain · cache 87%');
  assert.ok(v.tooltip.includes('streaming text'));
  t.update('b', { kind: 'begin', title: 'Kimi: Fix' });
  assert.equal(statusView(t.running(), undefined).text, '$(sync~spin) Kimi: Fix (+1)');
});

test('statusView when idle', () => {
  assert.deepEqual(statusView([], undefined).text, '$(sparkle) Kimi');
  assert.equal(statusView([], { requests: 0, hitRatio: 0 }).text, '$(sparkle) Kimi', 'no ratio before any request');
  const v = statusView([], { requests: 2, hitRatio: 0.5 }, 'Kimi: Fix: 1 edit applied to 1 file');
  assert.equal(v.text, '$(sparkle) Kimi · cache 50%');
  assert.ok(v.tooltip.includes('1 edit applied'));
});

test('formatStats', () => {
  assert.equal(
    formatStats({ requests: 2, promptTokens: 100, cachedTokens: 80, cacheWriteTokens: 20, hitRatio: 0.8, cost: 0.0012345 }),
    'requests 2 · prompt tokens 100 · cached 80 · cache writes 20 · hit ratio 80% · cost $0.0012',
  );
  assert.ok(formatStats({ requests: 1, costUSD: 0.00392 }).endsWith('cost $0.0039'), 'kimi-lsp names it costUSD');
  assert.equal(formatStats({}), 'requests 0 · prompt tokens 0 · cached 0 · cache writes 0 · hit ratio n/a');
});

test('endNotice tells failures in full and a stored explanation, nothing else', () => {
  const reason = 'failed: no API key: set KIMI_API_KEY or kimi.apiKey in your editor settings (or apiKey in the user config file)';
  assert.deepEqual(endNotice('Kimi: Explain', reason), { level: 'error', text: `Kimi: Explain: ${reason}` });
  assert.equal(endNotice('Kimi: Fix', 'not applied: the editor did not apply the edit: busy')?.level, 'error');
  const cached = endNotice('Kimi: Explain', 'explanation ready (unchanged code: the earlier answer, no model call)');
  assert.equal(cached?.level, 'info');
  assert.ok(cached?.text.includes('unchanged'), cached?.text);
  assert.equal(endNotice('Kimi: Explain', 'explanation ready (1200 prompt tokens, 80% cached)'), undefined);
  assert.equal(endNotice('Kimi: Fix', '1 edit applied to 1 file'), undefined);
  assert.equal(endNotice('Kimi: Fix', 'cancelled'), undefined, 'the user cancelled: nothing to tell');
});
