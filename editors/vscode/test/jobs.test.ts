import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { JobTracker, NO_KEY_TEXT, endNotice, endpointNotice, errorText, fixActions, formatStats, hitRatio, lastLine, menuItems, statsItems, statusView } from '../src/jobs';
import { completionView } from '../src/completion';

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
  assert.match(statusView([], undefined).tooltip, /click for the Kimi menu/, 'the tooltip says what a click does');
  assert.equal(statusView([], { requests: 0, hitRatio: 0 }).text, '$(sparkle) Kimi', 'no ratio before any request');
  const v = statusView([], { requests: 2, promptTokens: 100, hitRatio: 0.5 }, 'Kimi: Fix: 1 hunk in 1 file applied');
  assert.equal(v.text, '$(sparkle) Kimi · cache 50%');
  assert.ok(v.tooltip.includes('1 hunk in 1 file applied'));
});

test('statusView: no "cache 0%" after a job that failed before sending a prompt (issue 33 item 19)', () => {
  assert.equal(statusView([], { requests: 1, promptTokens: 0, cachedTokens: 0, hitRatio: 0 }).text, '$(sparkle) Kimi');
});

test('statusView: one item with a line per feature, ⚠ for a missing server or a stopped feature (issue 33 item 19)', () => {
  const lines = ['Inline completion: on', 'Next-edit suggestions: off'];
  const idle = statusView([], undefined, undefined, { lines });
  for (const l of lines) assert.ok(idle.tooltip.includes(l), idle.tooltip);
  const missing = statusView([], undefined, undefined, { problem: 'kimi-lsp was not found', lines });
  assert.equal(missing.text, '$(warning) Kimi');
  assert.match(missing.tooltip, /kimi-lsp was not found/);
  assert.equal(statusView([], undefined, undefined, { lines, warning: true }).text, '$(warning) Kimi');
});

test('menuItems: what the three items did, in one menu', () => {
  const cmds = (o: Parameters<typeof menuItems>[0]) => menuItems(o).map((i) => i.command);
  const idle = cmds({ busy: false, problem: false, inlineOn: true, nextEditOn: true, noKey: false });
  for (const c of ['kimi-lsp.showStats', 'kimi-lsp.toggleCompletion', 'kimi-lsp.toggleNextEdit', 'kimi-lsp.restartServer', 'kimi-lsp.showOutput']) {
    assert.ok(idle.includes(c), c);
  }
  assert.ok(!idle.includes('kimi-lsp.cancel') && !idle.includes('kimi-lsp.setApiKey'));
  assert.equal(cmds({ busy: true, problem: false, inlineOn: true, nextEditOn: true, noKey: true })[0], 'kimi-lsp.cancel');
  assert.ok(cmds({ busy: false, problem: false, inlineOn: true, nextEditOn: true, noKey: true }).includes('kimi-lsp.setApiKey'));
  assert.match(menuItems({ busy: false, problem: false, inlineOn: false, nextEditOn: true, noKey: false }).find((i) => i.command === 'kimi-lsp.toggleCompletion')!.label, /on$/);
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
  const reason = 'failed: the provider failed (HTTP 503 from https://direct.evolink.ai/v1/chat/completions after 3 attempts)';
  assert.deepEqual(endNotice('Kimi: Explain', reason), { level: 'error', text: `Kimi: Explain: ${reason}`, actions: ['Show Output'] });
  assert.equal(endNotice('Kimi: Fix', 'not applied: the editor did not apply the edit: busy')?.level, 'error');
  const cached = endNotice('Kimi: Explain', 'explanation ready (unchanged code: the earlier answer, no model call)');
  assert.equal(cached?.level, 'info');
  assert.ok(cached?.text.includes('unchanged'), cached?.text);
  assert.equal(endNotice('Kimi: Explain', 'explanation ready (1200 prompt tokens, 80% cached)'), undefined);
  // A landed edit is said in the status bar, in hunks and files, without the token counts (issue 33 item 18).
  assert.deepEqual(endNotice('Kimi: Fix', '1 hunk in 1 file applied, verified by gopls: no new errors (1749 prompt tokens, 0% cached)'), {
    level: 'status',
    text: '$(check) Kimi: Fix: 1 hunk in 1 file applied, verified by gopls: no new errors',
    actions: [],
  });
  assert.equal(endNotice('Kimi: Fix', '1 of 2 hunks applied (confirmed hunk by hunk)')?.level, 'status');
  assert.equal(endNotice('Kimi: Fix', 'not applied: verified by gopls: 1 new error: undefined: x (discarded by your choice)')?.level, 'status', 'a discard the user chose ends quietly');
  // Issue 21 item 19: a cancel had no feedback.
  assert.deepEqual(endNotice('Kimi: Fix', 'not applied: the editor did not apply the edit: you dismissed the hunk review: nothing applied'), {
    level: 'status',
    text: '$(circle-slash) Kimi: Fix: you dismissed the hunk review: nothing applied',
    actions: [],
  }, 'a hunk review the user dismissed ends quietly');
  assert.equal(endNotice('Kimi: Fix', 'not applied: the editor did not apply the edit: you unticked every hunk: nothing applied')?.level, 'status');
  assert.deepEqual(endNotice('Kimi: Fix', 'cancelled'), { level: 'status', text: '$(circle-slash) Kimi: Fix: cancelled', actions: [] });
  assert.equal(endNotice('Kimi: Fix', 'cancelled: superseded by a newer request for the same range')?.level, 'status');
});

// The end messages below are the server's (assist/model's wording, as its
// tests against loopback servers produce them).
test('an error notification offers the action that fixes it (issue 21 item 18)', () => {
  const noKey = endNotice(
    'Kimi: Explain',
    'failed: no API key: set KIMI_API_KEY or kimi.apiKey in your editor settings (or apiKey in the user config file)',
  );
  assert.deepEqual(noKey?.actions, ['Set API Key', 'Show Output']);
  const cmd = noKey!.text.indexOf('"Kimi: Set API Key"');
  assert.ok(cmd > 0 && cmd < noKey!.text.indexOf('KIMI_API_KEY'), `the palette command comes before the variable: ${noKey!.text}`);
  assert.deepEqual(
    endNotice(
      'Kimi: Fix',
      'failed: the provider refused the API key (HTTP 401 from https://direct.evolink.ai/v1/chat/completions): invalid key; check the key (set by editor settings), or set a valid one: kimi.apiKey in the editor\'s settings, KIMI_API_KEY, or apiKey in the user config file',
    )?.actions,
    ['Set API Key', 'Show Output'],
  );
  for (const m of [
    'failed: could not connect to http://127.0.0.1:8011/v1/chat/completions: connection refused (nothing listens at 127.0.0.1:8011): is the server running? check baseURL (set by KIMI_BASE_URL)',
    'failed: the endpoint answered a web page, not the API: http://127.0.0.1:8011/v1/chat/completions sent a web page titled "Welcome to nginx!" (HTTP 200) where an event stream or JSON was expected: check baseURL (set by editor settings); it should be the API\'s address, such as https://direct.evolink.ai or http://localhost:PORT/v1',
    'failed: the provider did not answer in time: http://127.0.0.1:8011/v1/chat/completions did not start answering within 1m30s over 2 attempts; check the network, HTTPS_PROXY or baseURL (the default) (waitTimeout sets this limit)',
    'failed: could not connect to https://127.0.0.1:8011/v1/chat/completions: the TLS (https) handshake failed (the server answered in plain http, not TLS): a server that speaks plain http needs an http:// baseURL; a proxy that inspects TLS needs its certificate installed; check baseURL (set by KIMI_BASE_URL)',
  ]) {
    assert.deepEqual(endNotice('Kimi: Explain', m)?.actions, ['Open Settings', 'Show Output'], m);
  }
  assert.deepEqual(fixActions('the model used the whole completion budget on thinking'), ['Show Output']);
});

test('statsItems shows every figure on its own line (issue 21 item 19: a truncated toast)', () => {
  const items = statsItems(
    { requests: 12, promptTokens: 123456, cachedTokens: 100000, cacheWriteTokens: 23456, hitRatio: 0.81, costUSD: 0.05 },
    'completions 30 asked · 20 shown',
  );
  assert.deepEqual(
    items.map((i) => i.label),
    [
      '$(pulse) Requests: 12',
      '$(symbol-number) Prompt tokens: 123,456',
      '$(database) Cache hit ratio: 81%',
      '$(credit-card) Cost: $0.0500',
      '$(lightbulb) Inline completion',
    ],
  );
  assert.equal(items[1].description, '100,000 cached, 23,456 written to the cache');
  assert.equal(items[4].description, 'completions 30 asked · 20 shown');
  assert.equal(statsItems({}).length, 3, 'no cost, no completion line when there are none');
});

test('statsItems counts the verified edits and the context the language server gave (issue 23)', () => {
  const items = statsItems({
    requests: 3,
    verify: { verified: 2, repaired: 1, withNewErrors: 1, unverified: 0, repairTokens: 1883, contextActions: 4, definitionNames: 40, definitionsLocated: 31 },
  });
  const v = items.find((i) => i.label.startsWith('$(check)'));
  assert.equal(v?.label, '$(check) Verified edits: 2');
  assert.equal(v?.description, '1 after a repair (1,883 tokens), 1 with new errors, 0 not verified');
  const c = items.find((i) => i.label.startsWith('$(symbol-class)'));
  assert.equal(c?.label, '$(symbol-class) Context from the language server: 4 actions');
  assert.equal(c?.description, '31 of 40 names located');
  assert.equal(statsItems({ requests: 1, verify: { verified: 0, contextActions: 0 } }).length, 3, 'nothing to count: no lines');
});

test('a missing key reads the same in a notification and in the status-bar item, naming Set API Key (issue 33 item 19)', () => {
  const toast = errorText('Kimi: Fix', 'no API key: set KIMI_API_KEY');
  const tooltip = completionView(true, true, { state: 'noKey' }).line;
  assert.ok(toast.includes(NO_KEY_TEXT) && tooltip.includes(NO_KEY_TEXT), `${toast}\n${tooltip}`);
  assert.match(NO_KEY_TEXT, /Kimi: Set API Key/);
});

test('statsItems shows each folder\'s trust and what an untrusted one changes (#30.1)', () => {
  const items = statsItems({
    trust: [
      { folder: '/src/a', trusted: true, why: 'trusted by the editor' },
      { folder: '/src/b', trusted: false, why: 'untrusted', means: 'the helpers run restricted' },
    ],
  });
  const a = items.find((i) => i.label.includes('/src/a'));
  const b = items.find((i) => i.label.includes('/src/b'));
  assert.ok(a && a.label.includes('trusted by the editor'));
  assert.ok(b && b.label.includes('untrusted') && b.description === 'the helpers run restricted');
});

test('endpointNotice: at start, once, what is missing: no key for the default endpoint, or a keyless custom one (issue 33 item 20)', () => {
  assert.equal(endpointNotice(undefined), undefined);
  assert.equal(endpointNotice({ baseURL: 'https://direct.evolink.ai', default: true, key: true }), undefined);
  const none = endpointNotice({ baseURL: 'https://direct.evolink.ai', default: true, key: false });
  assert.equal(none?.level, 'warning');
  assert.ok(none?.text.includes(NO_KEY_TEXT), none?.text);
  const local = endpointNotice({ baseURL: 'http://127.0.0.1:8080', default: false, key: false });
  assert.equal(local?.level, 'info');
  assert.match(local!.text, /requests go to http:\/\/127\.0\.0\.1:8080 without one/);
});
