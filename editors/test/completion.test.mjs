// Inline completion through VS Code's protocol stack: a client on
// vscode-languageserver-protocol / vscode-jsonrpc (the libraries under
// vscode-languageclient) against the real kimi-lsp binary and the stand-in
// provider. It declares textDocument.inlineCompletion as
// vscode-languageclient's InlineCompletionItemFeature does, types the way
// VS Code does (didChange, then cancel the previous request through its
// CancellationToken, then a new request), and checks what the server
// answers and what reaches the provider. A second client declares no
// inline completion (Helix, eglot, Kakoune) and gets completion items.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import protocol from 'vscode-languageserver-protocol/node.js';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { KEY, bin, closeServer, startStandin, waitFor, workspace } from './lib.mjs';

const {
  createProtocolConnection, StreamMessageReader, StreamMessageWriter, CancellationTokenSource,
  InlineCompletionRequest, CompletionRequest, InlineCompletionTriggerKind,
} = protocol;

/** Editor: one Go document, typed into; the server process and its connection. */
class Editor {
  constructor(ws, standin, { inline = true, settings = {} } = {}) {
    this.ws = ws;
    this.inline = inline;
    this.doc = TextDocument.create(pathToFileURL(ws.file).href, 'go', 1, ws.text);
    this.notes = [];
    this.stderr = '';
    this.proc = spawn(bin('KIMI_LSP_BIN'), ['--stdio'], {
      cwd: ws.ws,
      env: { ...process.env, KIMI_API_KEY: KEY, KIMI_BASE_URL: standin.url, XDG_CACHE_HOME: ws.cacheHome, XDG_CONFIG_HOME: ws.configHome, HOME: ws.root },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.proc.stderr.on('data', (d) => (this.stderr += d));
    this.conn = createProtocolConnection(new StreamMessageReader(this.proc.stdout), new StreamMessageWriter(this.proc.stdin));
    this.conn.onNotification('window/showMessage', (p) => this.notes.push(p));
    this.conn.onNotification('$/kimi/completionStatus', (p) => this.notes.push({ status: p }));
    this.conn.onRequest('workspace/configuration', (p) => p.items.map(() => null));
    this.conn.onRequest('client/registerCapability', () => null);
    this.conn.listen();
    // These tests count completion's provider requests; next edits (tested
    // in lsp.test.mjs and the Go tests) would add requests of their own
    // after a pause in the typing.
    this.settings = { nextEdit: { enable: false }, ...settings };
  }

  async start() {
    const textDocument = {};
    // What vscode-languageclient's InlineCompletionItemFeature fills in.
    if (this.inline) textDocument.inlineCompletion = { dynamicRegistration: true };
    else textDocument.completion = { completionItem: { snippetSupport: true } };
    const res = await this.conn.sendRequest('initialize', {
      processId: process.pid,
      clientInfo: { name: 'kimi-e2e-completion' },
      rootUri: pathToFileURL(this.ws.ws).href,
      workspaceFolders: [{ uri: pathToFileURL(this.ws.ws).href, name: 'ws' }],
      initializationOptions: { kimi: this.settings },
      capabilities: { general: { positionEncodings: ['utf-16'] }, textDocument, experimental: { kimiCompletionStatus: true } },
    });
    this.capabilities = res.capabilities;
    this.conn.sendNotification('initialized', {});
    this.conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri: this.doc.uri, languageId: 'go', version: 1, text: this.doc.getText() },
    });
  }

  /** type inserts text at the end of line (0-based) and returns the cursor after it. */
  type(line, text) {
    const character = this.doc.getText({ start: { line, character: 0 }, end: { line: line + 1, character: 0 } }).replace(/\n$/, '').length;
    const range = { start: { line, character }, end: { line, character } };
    this.doc = TextDocument.update(this.doc, [{ range, text }], this.doc.version + 1);
    this.conn.sendNotification('textDocument/didChange', {
      textDocument: { uri: this.doc.uri, version: this.doc.version },
      contentChanges: [{ range, text }],
    });
    return { line, character: character + text.length };
  }

  /** ask sends an inline completion request; cancel() cancels it as VS Code does. */
  ask(position, triggerKind = InlineCompletionTriggerKind.Automatic) {
    const source = new CancellationTokenSource();
    const reply = this.conn.sendRequest(InlineCompletionRequest.type, {
      textDocument: { uri: this.doc.uri }, position, context: { triggerKind },
    }, source.token).then((r) => ({ result: r }), (error) => ({ error }));
    return { reply, cancel: () => source.cancel() };
  }

  /** accept applies an inline completion item as VS Code does. */
  accept(item) {
    return TextDocument.applyEdits(this.doc, [{ range: item.range, newText: item.insertText }]);
  }

  async stop() {
    await closeServer(this.conn, this.proc);
  }
}

async function withEditor(script, opts, fn) {
  const standin = await startStandin(script);
  const ws = workspace();
  const ed = new Editor(ws, standin, opts);
  try {
    await ed.start();
    await fn(ed, standin);
  } catch (err) {
    err.message += `\nserver stderr:\n${ed.stderr.slice(-4000)}\nstand-in:\n${standin.stderr().slice(-2000)}`;
    throw err;
  } finally {
    await ed.stop();
    standin.stop();
  }
}

// main.go: line 10 is "\tfmt.Println(Add(1, 2))"; we type on a new line
// after it. The stand-in answers "```go\n\tfmt.Println(Add(40, 2))\n```".
const LINE = 11;
function newLine(ed) {
  ed.type(LINE - 1, '\n');
}

test('completion: inlineCompletionProvider for VS Code; a fenced answer echoing the line inserts exactly', async () => {
  await withEditor('completion.json', {}, async (ed, standin) => {
    assert.equal(ed.capabilities.inlineCompletionProvider, true);
    assert.equal(ed.capabilities.completionProvider, undefined, 'no completion items for a client with inline completion (items: auto)');
    newLine(ed);
    const pos = ed.type(LINE, '\tfmt.Pr');
    const { reply } = ed.ask(pos, InlineCompletionTriggerKind.Invoked);
    const { result, error } = await reply;
    assert.equal(error, undefined);
    assert.equal(result.items.length, 1, JSON.stringify(result));
    assert.equal(result.items[0].insertText, 'intln(Add(40, 2))');
    const after = ed.accept(result.items[0]);
    assert.equal(after.split('\n')[LINE], '\tfmt.Println(Add(40, 2))');
    assert.equal(standin.requests().length, 1);
  });
});

// A 1 s debounce: a loaded machine may stretch the 50 ms pauses past the
// default 300 ms.
test('completion: typing as VS Code does — 8 keystrokes 50 ms apart make at most 4 provider requests; typing ahead makes none', async () => {
  await withEditor('completion.json', { settings: { completion: { debounceMs: 1000 } } }, async (ed, standin) => {
    newLine(ed);
    let pending;
    const replies = [];
    for (const ch of '\tfmt.Pri'.split('')) {
      const pos = ed.type(LINE, ch);
      pending?.cancel(); // VS Code cancels the request it no longer needs…
      pending = ed.ask(pos); // …and asks again
      replies.push(pending.reply);
      await new Promise((r) => setTimeout(r, 50));
    }
    const last = (await replies[replies.length - 1]).result;
    assert.equal(last.items.length, 1, `the last request is answered: ${JSON.stringify(last)}`);
    assert.equal(last.items[0].insertText, 'ntln(Add(40, 2))');
    for (const r of replies.slice(0, -1)) {
      const { result, error } = await r;
      assert.ok(error || result.items.length === 0, `an earlier request got nothing: ${JSON.stringify(result ?? error)}`);
    }
    await waitFor(() => standin.requests().length >= 1, 5000, 'the request log');
    const asked = standin.requests().length;
    assert.ok(asked <= 4, `${asked} provider requests for 8 keystrokes`);

    // Typing the suggestion's first letters: answered from it.
    for (const ch of 'ntl') {
      const pos = ed.type(LINE, ch);
      const { result } = await ed.ask(pos).reply;
      assert.equal(result.items.length, 1);
      assert.equal(ed.accept(result.items[0]).split('\n')[LINE], '\tfmt.Println(Add(40, 2))', 'the item replaces what was typed of it');
    }
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(standin.requests().length, asked, 'no provider request for typing ahead');
    const stats = await ed.conn.sendRequest('workspace/executeCommand', { command: 'kimi.stats', arguments: [] });
    assert.ok(stats.completion.reused >= 3, `kimi.stats counts the reused answers: ${JSON.stringify(stats.completion)}`);
    assert.equal(stats.completion.providerRequests, asked);
  });
});

test('completion: cancelling the request hangs up the provider stream', async () => {
  await withEditor('completion-stall.json', {}, async (ed, standin) => {
    newLine(ed);
    const pos = ed.type(LINE, '\tfmt.Pr');
    const { reply, cancel } = ed.ask(pos, InlineCompletionTriggerKind.Invoked);
    // The stand-in logs a request's body as it arrives.
    await waitFor(() => standin.requests().length >= 1, 10000, 'the stream to start');
    cancel();
    const { error } = await reply;
    assert.equal(error?.code, -32800, `the request ends as cancelled: ${JSON.stringify(error)}`);
    await waitFor(() => standin.hungUp() >= 1, 10000, 'the stand-in to see the stream hung up');
  });
});

test('completion: a client without inline completion gets one completion item that inserts exactly', async () => {
  await withEditor('completion.json', { inline: false }, async (ed) => {
    assert.equal(ed.capabilities.inlineCompletionProvider, undefined);
    assert.ok(ed.capabilities.completionProvider, 'completionProvider advertised');
    newLine(ed);
    const position = ed.type(LINE, '\tfmt.Pr');
    const list = await ed.conn.sendRequest(CompletionRequest.type, { textDocument: { uri: ed.doc.uri }, position });
    assert.equal(list.isIncomplete, true);
    assert.equal(list.items.length, 1, JSON.stringify(list));
    const item = list.items[0];
    assert.match(item.detail, /Kimi/);
    assert.equal(item.label, 'Println(Add(40, 2))');
    const after = TextDocument.applyEdits(ed.doc, [item.textEdit]);
    assert.equal(after.split('\n')[LINE], '\tfmt.Println(Add(40, 2))');
  });
});
