// The VS Code protocol stack against the real kimi-lsp binary: a client built
// on vscode-languageserver-protocol / vscode-jsonrpc (the libraries under VS
// Code's language client) talks to kimi-lsp over stdio, and kimi-lsp talks
// to the stand-in provider on loopback. Scenarios: explain (streamed progress,
// then the markdown opened with window/showDocument), fix (one versioned
// workspace/applyEdit), cancel during a slow stream, and a client without
// progress or showDocument support.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { pathToFileURL, fileURLToPath } from 'node:url';
import protocol from 'vscode-languageserver-protocol/node.js';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  EXPLAIN_MARKER, FIXED_LINE, KEY, SLOW_MARKER, bin, closeServer, startStandin, waitFor, workspace,
} from './lib.mjs';

const {
  createProtocolConnection, StreamMessageReader, StreamMessageWriter,
  WorkDoneProgress, WorkDoneProgressCreateRequest, WorkDoneProgressCancelNotification,
} = protocol;


/**
 * Client is a minimal editor: one open document, the server requests VS Code
 * answers (progress create, showDocument, applyEdit, configuration), and a
 * log of everything the server sent, in order.
 */
class Client {
  constructor(ws, standin, { progress = true, showDocument = true } = {}) {
    this.ws = ws;
    this.events = []; // {kind, ...} in arrival order
    this.progress = new Map(); // token -> [values]
    this.doc = TextDocument.create(pathToFileURL(ws.file).href, 'go', 1, ws.text);
    this.caps = { progress, showDocument };
    this.stderr = '';
    this.proc = spawn(bin('KIMI_LSP_BIN'), ['--stdio'], {
      cwd: ws.ws,
      env: {
        ...process.env,
        KIMI_API_KEY: '', // the key arrives in initializationOptions, as the VS Code extension sends it
        KIMI_BASE_URL: standin.url,
        XDG_CACHE_HOME: ws.cacheHome,
        XDG_CONFIG_HOME: ws.configHome,
        HOME: ws.root, // and the helper gopls's GOPATH
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.proc.stderr.on('data', (d) => (this.stderr += d));
    this.conn = createProtocolConnection(
      new StreamMessageReader(this.proc.stdout),
      new StreamMessageWriter(this.proc.stdin),
    );
    this.section = { apiKey: KEY };
    this.conn.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
      this.events.push({ kind: 'create', token });
      this.watch(token);
      return null;
    });
    this.conn.onRequest('window/showDocument', (params) => {
      const file = fileURLToPath(params.uri);
      this.events.push({ kind: 'showDocument', params, text: readFileSync(file, 'utf8') });
      return { success: true };
    });
    this.conn.onNotification('window/showMessage', (params) => this.events.push({ kind: 'showMessage', params }));
    this.conn.onNotification('window/logMessage', (params) => this.events.push({ kind: 'logMessage', params }));
    this.conn.onRequest('window/showMessageRequest', (params) => {
      this.events.push({ kind: 'showMessageRequest', params });
      return null;
    });
    this.conn.onRequest('workspace/configuration', (params) =>
      params.items.map((i) => (i.section === 'kimi' ? this.section : null)),
    );
    this.conn.onRequest('client/registerCapability', () => null);
    this.conn.onRequest('workspace/applyEdit', (params) => this.applyEdit(params));
    this.conn.listen();
  }

  /** watch records the $/progress values of a token. */
  watch(token) {
    const key = String(token);
    if (this.progress.has(key)) return;
    this.progress.set(key, []);
    this.conn.onProgress(WorkDoneProgress.type, token, (v) => {
      this.progress.get(key).push(v);
      this.events.push({ kind: 'progress', token: key, value: v });
    });
  }

  /** applyEdit applies a WorkspaceEdit to the open document as VS Code would, refusing stale versions. */
  async applyEdit(params) {
    this.events.push({ kind: 'applyEdit', params, versionBefore: this.doc.version });
    const edit = params.edit;
    let edits;
    if (edit.documentChanges) {
      const mine = edit.documentChanges.filter((c) => c.textDocument && c.textDocument.uri === this.doc.uri);
      if (mine.length !== edit.documentChanges.length) return { applied: false, failureReason: 'edit touches other documents' };
      for (const c of mine) {
        if (c.textDocument.version !== null && c.textDocument.version !== this.doc.version) {
          return { applied: false, failureReason: `version ${c.textDocument.version} != ${this.doc.version}` };
        }
      }
      edits = mine.flatMap((c) => c.edits);
    } else if (edit.changes) {
      edits = edit.changes[this.doc.uri] ?? [];
    } else {
      return { applied: false, failureReason: 'empty edit' };
    }
    const before = this.doc.getText();
    const after = TextDocument.applyEdits(this.doc, edits);
    this.doc = TextDocument.create(this.doc.uri, 'go', this.doc.version + 1, after);
    this.undoText = before;
    this.conn.sendNotification('textDocument/didChange', {
      textDocument: { uri: this.doc.uri, version: this.doc.version },
      contentChanges: [{ text: after }],
    });
    return { applied: true };
  }

  async start() {
    const window = { workDoneProgress: this.caps.progress, showMessage: {} };
    if (this.caps.showDocument) window.showDocument = { support: true };
    const res = await this.conn.sendRequest('initialize', {
      processId: process.pid,
      clientInfo: { name: 'kimi-e2e-vscode-protocol' },
      rootUri: pathToFileURL(this.ws.ws).href,
      workspaceFolders: [{ uri: pathToFileURL(this.ws.ws).href, name: 'ws' }],
      initializationOptions: { kimi: this.section },
      capabilities: {
        general: { positionEncodings: ['utf-16'] },
        window,
        workspace: {
          applyEdit: true,
          configuration: true,
          workspaceFolders: true,
          workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'] },
          executeCommand: {},
        },
        textDocument: {
          synchronization: { didSave: true },
          codeAction: {
            codeActionLiteralSupport: { codeActionKind: { valueSet: ['', 'quickfix', 'refactor', 'refactor.rewrite', 'source'] } },
          },
        },
      },
    });
    this.capabilities = res.capabilities;
    this.conn.sendNotification('initialized', {});
    this.conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri: this.doc.uri, languageId: 'go', version: this.doc.version, text: this.doc.getText() },
    });
    return res;
  }

  /** run sends one kimi command with our work-done token and waits for its progress to end. */
  async run(command, arg, { token = `e2e-${Math.random().toString(36).slice(2)}`, onBegin } = {}) {
    if (this.caps.progress) this.watch(token);
    const sentAt = this.events.length;
    const result = await this.conn.sendRequest('workspace/executeCommand', {
      command,
      arguments: [arg],
      workDoneToken: this.caps.progress ? token : undefined,
    });
    this.events.push({ kind: 'executeCommandResult', result });
    return { token, result, sentAt };
  }

  /** progressOf returns the values seen for a token (the client's own or one the server created). */
  ended(token) {
    const vs = this.progress.get(String(token)) ?? [];
    return vs.find((v) => v.kind === 'end');
  }

  async stop() {
    await closeServer(this.conn, this.proc);
  }

  describe() {
    return `events:\n${this.events.map((e) => JSON.stringify(e).slice(0, 300)).join('\n')}\nserver stderr:\n${this.stderr.slice(-4000)}`;
  }
}

const ADD_RANGE = { start: { line: 5, character: 0 }, end: { line: 7, character: 1 } };

async function withClient(script, opts, fn) {
  const standin = await startStandin(script);
  const ws = workspace();
  const client = new Client(ws, standin, opts);
  try {
    await client.start();
    await fn(client, standin, ws);
  } catch (err) {
    err.message += `\n${client.describe()}\nstand-in:\n${standin.stderr().slice(-2000)}`;
    throw err;
  } finally {
    await client.stop();
    standin.stop();
  }
}

test('explain: code action offered, progress streams, explanation opened with showDocument', async () => {
  await withClient('explain.json', {}, async (client, standin) => {
    assert.ok(client.capabilities.executeCommandProvider, 'server advertises executeCommandProvider');
    const cmds = client.capabilities.executeCommandProvider.commands;
    for (const c of ['kimi.explain', 'kimi.fix', 'kimi.rewrite', 'kimi.document', 'kimi.tests', 'kimi.cancel', 'kimi.stats']) {
      assert.ok(cmds.includes(c), `command ${c} advertised`);
    }
    const actions = await client.conn.sendRequest('textDocument/codeAction', {
      textDocument: { uri: client.doc.uri },
      range: ADD_RANGE,
      context: { diagnostics: [] },
    });
    const explain = actions.find((a) => (a.command?.command ?? a.command) === 'kimi.explain');
    assert.ok(explain, `an Explain action is offered: ${JSON.stringify(actions)}`);
    const cmd = explain.command.command ? explain.command : explain;
    const { token, result } = await client.run('kimi.explain', cmd.arguments[0]);
    assert.ok(result && typeof result.job === 'string' && result.job !== '', `executeCommand answers {"job": id}, got ${JSON.stringify(result)}`);
    assert.equal(client.ended(token), undefined, 'executeCommand answered before the job ended');

    await waitFor(() => client.ended(token), 30000, 'progress end');
    const values = client.progress.get(token);
    assert.equal(values[0].kind, 'begin');
    assert.match(values[0].title, /^Kimi: Explain/);
    assert.equal(values[0].cancellable, true);
    const reports = values.filter((v) => v.kind === 'report');
    assert.ok(reports.length >= 1, `at least one report, got ${reports.length}`);
    assert.ok(reports.some((r) => (r.message ?? '').includes('sum') || (r.message ?? '').includes(EXPLAIN_MARKER)),
      'reports carry the streamed text');
    assert.equal(values[values.length - 1].kind, 'end');
    assert.equal(values.filter((v) => v.kind === 'end').length, 1);

    const shown = await waitFor(() => client.events.find((e) => e.kind === 'showDocument'), 30000, 'showDocument');
    assert.equal(shown.params.takeFocus, false, 'the explanation does not take focus');
    assert.match(shown.params.uri, /\.md$/);
    assert.ok(shown.text.includes(EXPLAIN_MARKER), `the markdown holds the scripted text:\n${shown.text}`);
    assert.ok(shown.params.uri.startsWith(pathToFileURL(client.ws.cacheHome).href), `written under the user cache dir: ${shown.params.uri}`);
    assert.equal(standin.requests().length, 1, 'one request reached the provider');

    const stats = await client.conn.sendRequest('workspace/executeCommand', { command: 'kimi.stats', arguments: [] });
    assert.equal(stats.requests, 1, `kimi.stats counts the request: ${JSON.stringify(stats)}`);
    assert.ok(stats.promptTokens > 0, `kimi.stats reports prompt tokens: ${JSON.stringify(stats)}`);
    for (const k of ['cachedTokens', 'cacheWriteTokens', 'hitRatio']) {
      assert.equal(typeof stats[k], 'number', `kimi.stats has ${k}: ${JSON.stringify(stats)}`);
    }
    // editors/README.md names it cost; kimi-lsp sends it as cost and costUSD. The clients read either.
    assert.equal(typeof (stats.cost ?? stats.costUSD), 'number', `kimi.stats has a cost: ${JSON.stringify(stats)}`);
  });
});

test('fix: the diff arrives as one versioned workspace/applyEdit', async () => {
  await withClient('fix.json', {}, async (client) => {
    const original = client.doc.getText();
    const { token } = await client.run('kimi.fix', { uri: client.doc.uri, range: ADD_RANGE });
    await waitFor(() => client.ended(token), 30000, 'progress end');
    const edits = client.events.filter((e) => e.kind === 'applyEdit');
    assert.equal(edits.length, 1, 'exactly one workspace/applyEdit');
    const e = edits[0];
    assert.match(e.params.label ?? '', /^Kimi: Fix/);
    assert.ok(Array.isArray(e.params.edit.documentChanges), 'documentChanges, since the client supports them');
    assert.equal(e.params.edit.documentChanges[0].textDocument.version, 1, 'versioned against the open document');
    const text = client.doc.getText();
    assert.ok(text.includes(FIXED_LINE), `fixed:\n${text}`);
    assert.equal(text, original.replace('\treturn a - b', FIXED_LINE), 'only the fixed line changed');
    assert.equal(client.undoText, original, 'one edit: undoing it restores the original');
    const end = client.ended(token);
    assert.match(end.message ?? '', /1 edit|applied/i, `end message reports the edit: ${end.message}`);
  });
});

test('cancel: window/workDoneProgress/cancel stops a slow stream', async () => {
  await withClient('slow.json', {}, async (client, standin) => {
    const { token } = await client.run('kimi.explain', { uri: client.doc.uri, range: ADD_RANGE });
    await waitFor(() => (client.progress.get(token) ?? []).some((v) => v.kind === 'report'), 30000, 'the first report');
    client.conn.sendNotification(WorkDoneProgressCancelNotification.type, { token });
    const end = await waitFor(() => client.ended(token), 30000, 'progress end after cancel');
    assert.match(end.message ?? '', /cancel/i, `end says cancelled: ${end.message}`);
    await waitFor(() => standin.hungUp() >= 1, 30000, 'the stand-in to see the client hang up');
    assert.equal(client.events.filter((e) => e.kind === 'showDocument').length, 0, 'no explanation opened');
    assert.equal(client.events.filter((e) => e.kind === 'applyEdit').length, 0, 'no edit');
  });
});

test('a client without progress or showDocument still gets the whole explanation', async () => {
  await withClient('explain.json', { progress: false, showDocument: false }, async (client) => {
    await client.run('kimi.explain', { uri: client.doc.uri, range: ADD_RANGE });
    const msg = await waitFor(
      () => client.events.find((e) => e.kind === 'showMessage' && (e.params.message ?? '').includes(EXPLAIN_MARKER)),
      30000,
      'window/showMessage with the explanation',
    );
    assert.ok(msg.params.message.includes('which is `-1` today'), 'the whole text, not a tail');
    assert.equal(client.events.filter((e) => e.kind === 'progress').length, 0, 'no $/progress to a client without support');
    // The job has written everything once kimi.stats lists it no more.
    await waitFor(
      async () => ((await client.conn.sendRequest('workspace/executeCommand', { command: 'kimi.stats' })).jobs ?? []).length === 0,
      60000,
      'the job to end',
    );
    const after = client.events.slice(client.events.indexOf(msg) + 1);
    assert.deepEqual(after.filter((e) => e.kind === 'showMessage'), [], 'nothing shown over the explanation');
    // The job's lines, not the server's own log ("kimi-lsp: …", every
    // record since issue 33 item 10): the stream is not sent as log lines.
    const logs = client.events.filter((e) => e.kind === 'logMessage' && !e.params.message.startsWith('kimi-lsp: '));
    assert.ok(logs.length <= 2, `at most 2 log lines for one explain, got ${logs.length}`);
  });
});

// The path of Helix, eglot, lsp-mode and every client without a plugin: the
// next-edit suggestion arrives as a Hint diagnostic (code next-edit), and the
// preferred quickfix at it applies the edit as one versioned WorkspaceEdit.
test('next edit: a rename gives a next-edit diagnostic whose preferred quickfix applies the use below', async () => {
  await withClient('nextedit.json', {}, async (client, standin) => {
    const diags = [];
    client.conn.onNotification('textDocument/publishDiagnostics', (p) => diags.push(p));
    const renamed = client.doc.getText().replace('func Add(a, b int)', 'func Add(a, y int)');
    client.doc = TextDocument.create(client.doc.uri, 'go', client.doc.version + 1, renamed);
    client.conn.sendNotification('textDocument/didChange', {
      textDocument: { uri: client.doc.uri, version: client.doc.version },
      contentChanges: [{ text: renamed }],
    });
    const find = () => diags.flatMap((p) => p.diagnostics).find((d) => d.code === 'next-edit');
    await waitFor(find, 30000, 'a next-edit diagnostic');
    const d = find();
    assert.equal(d.source, 'kimi');
    assert.equal(d.severity, 4, 'severity Hint');
    assert.equal(d.range.start.line, 6, 'on the use below the signature');
    assert.match(d.message, /^Kimi: next edit — /);
    assert.equal(standin.requests().length, 1, 'one provider request');
    const actions = await client.conn.sendRequest('textDocument/codeAction', {
      textDocument: { uri: client.doc.uri }, range: d.range, context: { diagnostics: [d] },
    });
    const apply = actions.find((a) => a.title.startsWith('Kimi: Apply next edit'));
    assert.ok(apply, JSON.stringify(actions));
    assert.equal(apply.kind, 'quickfix');
    assert.ok(apply.isPreferred === undefined || apply.isPreferred === true);
    assert.ok(actions.some((a) => a.title === 'Kimi: Dismiss next edit'), JSON.stringify(actions));
    assert.ok(!actions.some((a) => a.title.includes('Kimi: next edit')), 'no Fix of the suggestion itself: ' + JSON.stringify(actions));
    const r = await client.applyEdit({ edit: apply.edit });
    assert.deepEqual(r, { applied: true }, 'the edit is versioned against the open document');
    assert.ok(client.doc.getText().includes('\treturn a - y\n'), client.doc.getText());
    await waitFor(async () => {
      const st = await client.conn.sendRequest('workspace/executeCommand', { command: 'kimi.stats', arguments: [] });
      return st.nextEdit && st.nextEdit.accepted === 1;
    }, 15000, 'kimi.stats to count the next edit accepted');
  });
});
