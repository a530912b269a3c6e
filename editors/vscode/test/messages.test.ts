import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { finalAnswer, logLine, notice, proposedErrors, question, stderrReachesOutput } from '../src/messages';

// What the server sends: an error record is written to its stderr (which
// vscode-languageclient copies into the output) and forwarded as
// window/logMessage "kimi-lsp: …"; warnings and information only as
// window/logMessage (lsp/logging.go, cmd/kimi-lsp's errorsOnly).
test('a server record reaches the output once (issue 21 item 19, issue 33 item 10)', () => {
  const forwarded = { type: 1, message: 'kimi-lsp: job failed job=3 action=explain error="could not connect"' };
  assert.equal(logLine(forwarded, true), undefined, 'the stderr copy is in the output already');
  assert.equal(logLine(forwarded, false), `[server Error] ${forwarded.message}`, 'with --log-file the forwarded copy is the only one');
  const warning = { type: 2, message: 'kimi-lsp: could not read the editor\'s settings' };
  assert.equal(logLine(warning, true), `[server Warn] ${warning.message}`, 'a warning is not on stderr: its forwarded copy is the one');
  assert.equal(logLine({ type: 3, message: 'kimi-lsp: kimi-lsp starting version=v1' }, true), '[server Info] kimi-lsp: kimi-lsp starting version=v1');
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

test('the new-errors and send questions are modal, once prefixed, with Discard or Cancel closing them (issue 33 item 16)', () => {
  const q = question('Kimi: Kimi: Fix — the edit brings 1 new error: undefined: x (gopls). Apply it anyway?', ['Apply anyway', 'Discard', 'Show the errors']);
  assert.equal(q.modal, true);
  assert.equal(q.text, 'Kimi: Fix');
  assert.equal(q.detail, 'the edit brings 1 new error: undefined: x (gopls). Apply it anyway?');
  assert.deepEqual(q.actions.filter((a) => a.isCloseAffordance).map((a) => a.title), ['Discard']);
  const send = question('Kimi: the request is estimated at $0.20. Send it anyway?', ['Send', 'Cancel']);
  assert.equal(send.modal, true);
  assert.deepEqual(send.actions.filter((a) => a.isCloseAffordance).map((a) => a.title), ['Cancel']);
  const other = question('Kimi: how should the selection be rewritten?', ['Simplify', 'Document']);
  assert.equal(other.modal, false);
});

test('the new-errors question is known by Apply anyway and Discard, whatever else it offers (issue 33 item 16)', () => {
  const four = ['Apply anyway', 'Discard', 'Show the errors', 'Show the change'];
  const q = question('Kimi: Fix — the edit brings 1 new error: undefined: c (gopls). Apply it anyway?', four);
  assert.equal(q.modal, true, 'the four titles the server sends since D85');
  assert.deepEqual(q.actions.map((a) => a.title), four, 'every title kept, in order');
  assert.deepEqual(q.actions.filter((a) => a.isCloseAffordance).map((a) => a.title), ['Discard']);
  assert.equal(question('Kimi: Fix — …', ['Apply anyway', 'Discard']).modal, true, 'the two alone');
  assert.equal(question('Kimi: Fix — …', ['Apply anyway', 'Show the errors']).modal, false, 'without Discard it is not that question');
  assert.equal(finalAnswer('Show the change'), false, 'asked again');
  assert.equal(finalAnswer('Show the errors'), false);
  assert.equal(finalAnswer('Discard'), true);
  assert.equal(finalAnswer('Apply anyway'), true);
  assert.equal(finalAnswer(undefined), true, 'Escape');
});

test('proposedErrors reads the errors the edit brings, for the Problems panel', () => {
  assert.deepEqual(proposedErrors('Kimi: the errors the edit brings (gopls):\nmain.go:7: undefined: x\nsub/a.go:12: x declared and not used'), {
    helpers: 'gopls',
    errors: [
      { path: 'main.go', line: 7, message: 'undefined: x' },
      { path: 'sub/a.go', line: 12, message: 'x declared and not used' },
    ],
  });
  assert.equal(proposedErrors('Kimi: something else'), undefined);
});

test('a server message is prefixed "Kimi:" once (issue 33 item 19)', () => {
  assert.equal(notice({ type: 2, message: 'Kimi: the hourly budget of $0.01 is spent' }).text, 'Kimi: the hourly budget of $0.01 is spent');
  assert.equal(notice({ type: 2, message: 'kimi-lsp: a warning' }).text, 'Kimi: a warning');
});
