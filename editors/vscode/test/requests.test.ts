import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { requestItems, spendLine, usd } from '../src/requests';
import { statsItems, statusView } from '../src/jobs';

const rec = {
  time: '2026-12-01T17:11:00Z', surface: 'explain', model: 'kimi-k3.1-pro',
  files: [{ path: 'main.go', bytes: 1234 }, { path: 'util/strings.go', bytes: 56789 }],
  promptTokens: 12345, cachedTokens: 10000, writtenTokens: 2345, outputTokens: 321, costUSD: 0.0067, outcome: 'ok',
};

test('requestItems: newest first, files with their sizes, tokens, cost, outcome', () => {
  const items = requestItems([{ ...rec, surface: 'completion', files: null, costUSD: 0.0004 }, rec]);
  assert.equal(items.length, 2);
  assert.match(items[0].label, /\d{2}:\d{2}:\d{2}  explain  \$0\.0067$/);
  assert.equal(items[0].description, 'kimi-k3.1-pro · 12,345 prompt (10,000 cached, 2,345 written) · 321 out · ok');
  assert.equal(items[0].detail, 'main.go (1,234 B), util/strings.go (56,789 B)');
  assert.equal(items[1].detail, 'no files');
  assert.match(requestItems([{ ...rec, unpriced: true }])[0].label, /unpriced$/);
  assert.match(requestItems([{ ...rec, estimated: true, moreFiles: 3 }])[0].label, /~\$0\.0067$/);
  assert.match(requestItems([{ ...rec, moreFiles: 3 }])[0].detail, /, and 3 more$/);
});

test('spendLine: the spend against the budgets, and until when a spent one holds', () => {
  assert.equal(spendLine(undefined), '');
  const spend = {
    hour: { name: 'hourly', spentUSD: 0.0123, limitUSD: 0.5, ends: '2026-12-01T18:00:00Z' },
    day: { name: 'daily', spentUSD: 1.5, limitUSD: 0, ends: '2026-12-02T00:00:00Z' },
    capped: false,
  };
  assert.equal(spendLine(spend), 'Spend: $0.0123 this hour (budget $0.5000), $1.50 today (no budget)');
  const capped = { ...spend, capped: true, cap: spend.hour };
  assert.match(spendLine(capped), / — the hourly budget is spent until .+/);
  assert.equal(usd(2), '$2.00');
});

test('the status-bar tooltip and the statistics show the spend', () => {
  const spend = {
    hour: { name: 'hourly', spentUSD: 0.01, limitUSD: 0.02, ends: '2026-12-01T18:00:00Z' },
    day: { name: 'daily', spentUSD: 0.03, limitUSD: 1, ends: '2026-12-02T00:00:00Z' },
  };
  const v = statusView([], { requests: 2, hitRatio: 0.5, spend });
  assert.ok(v.tooltip.includes('Spend: $0.0100 this hour (budget $0.0200), $0.0300 today (budget $1.00)'), v.tooltip);
  const items = statsItems({ requests: 1, spend });
  assert.ok(items.some((i) => i.label.includes('Spend: $0.0100 this hour')));
  assert.ok(!statusView([], { requests: 2 }).tooltip.includes('Spend'), 'no spend line without the server\'s figures');
});
