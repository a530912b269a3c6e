import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { logLine, notice, stderrReachesOutput } from '../src/messages';

// What the server sends: a warning record is written to its stderr (which
// vscode-languageclient copies into the output) and forwarded as
// window/logMessage "kimi-lsp: …" (lsp/logging.go).
test('a server warning reaches the output once (issue 21 item 19)', () => {
  const forwarded = { type: 2, message: 'kimi-lsp: job failed job=3 action=explain error="could not connect"' };
  assert.equal(logLine(forwarded, true), undefined, 'the stderr copy is in the output already');
  assert.equal(logLine({ type: 1, message: 'kimi-lsp: boom' }, true), undefined);
  assert.equal(logLine(forwarded, false), `[server Warn] ${forwarded.message}`, 'with --log-file the forwarded copy is the only one');
  assert.equal(logLine({ type: 3, message: 'Kimi: Explain: reading' }, true), '[server Info] Kimi: Explain: reading', 'other messages are not in stderr');
  assert.equal(stderrReachesOutput([]), true);
  assert.equal(stderrReachesOutput(['--log-level', 'debug']), true);
  assert.equal(stderrReachesOutput(['--log-file', '/tmp/k.log']), false);
  assert.equal(stderrReachesOutput(['-log-file=/tmp/k.log']), false);
});

test('a server error notification offers what fixes it', () => {
  const noKey = notice({ type: 2, message: 'kimi-lsp: inline completion: no API key: set KIMI_API_KEY or kimi.apiKey in your editor settings (or apiKey in the user config file)' });
  assert.equal(noKey.level, 'warning');
  assert.deepEqual(noKey.actions, ['Set API Key', 'Show Output']);
  assert.ok(noKey.text.indexOf('Kimi: Set API Key') < noKey.text.indexOf('KIMI_API_KEY'), noKey.text);
  const refused = notice({ type: 1, message: 'kimi-lsp: could not connect to http://127.0.0.1:9/v1/chat/completions: connection refused (nothing listens at 127.0.0.1:9): is the server running? check baseURL (set by KIMI_BASE_URL)' });
  assert.deepEqual(refused.actions, ['Open Settings', 'Show Output']);
  assert.equal(refused.level, 'error');
  assert.deepEqual(notice({ type: 2, message: 'kimi-lsp: the workspace file is ignored' }).actions, [], 'a plain warning gets no buttons');
  assert.deepEqual(notice({ type: 3, message: 'Kimi: Explain — a.go\n\ntext' }), { level: 'info', text: 'Kimi: Explain — a.go\n\ntext', actions: [] });
});
