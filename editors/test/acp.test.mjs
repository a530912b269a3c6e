// End-to-end tests of `kimi-lsp acp` through the real ACP client library
// (@agentclientprotocol/sdk), against the stand-in provider: a turn that
// reads two files and proposes an edit to calc.go, the permission request
// holding the diff, a rejected permission leaving the file untouched, an
// edit verified by gopls and repaired once, a cancel mid-stream, and the
// turn's requests in `kimi-lsp requests --json` with surface "agent".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { agentEnv, bin, startStandin, waitFor, waitGone, workspace } from './lib.mjs';

const CALC = 'package main\n\n// Mul returns a times b.\nfunc Mul(a, b int) int {\n\treturn a + b\n}\n';
const FIXED = CALC.replace('return a + b', 'return a * b');

/** Agent is `kimi-lsp acp` in a scratch Go workspace, driven by the ACP client library. */
class Agent {
  constructor(ws, standin) {
    this.ws = ws;
    this.allow = true;
    this.updates = [];
    this.asked = [];
    this.stderr = '';
    this.env = agentEnv(ws, standin);
    this.proc = spawn(bin('KIMI_LSP_BIN'), ['acp'], { cwd: ws.ws, env: this.env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stderr.on('data', (d) => (this.stderr += d));
    const app = acp
      .client({ name: 'kimi-e2e' })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        this.updates.push(params.update);
        this.onUpdate?.(params.update);
      })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        this.asked.push(params);
        return { outcome: { outcome: 'selected', optionId: this.allow ? 'allow' : 'reject' } };
      });
    this.conn = app.connect(acp.ndJsonStream(Writable.toWeb(this.proc.stdin), Readable.toWeb(this.proc.stdout)));
    this.agent = this.conn.agent;
  }

  async start() {
    const init = await this.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    assert.equal(init.protocolVersion, 1);
    assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true);
    const s = await this.agent.request(acp.methods.agent.session.new, { cwd: this.ws.ws, mcpServers: [] });
    this.sessionId = s.sessionId;
    return s;
  }

  prompt(text) {
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId: this.sessionId, prompt: [{ type: 'text', text }] });
  }

  /** toolCall returns what the client was told of the tool call id: its start and every update merged. */
  toolCall(id) {
    let call = null;
    for (const u of this.updates) {
      if (u.toolCallId !== id) continue;
      if (u.sessionUpdate === 'tool_call') call = { ...u, texts: [] };
      if (u.sessionUpdate === 'tool_call_update' && call) {
        if (u.status) call.status = u.status;
        for (const c of u.content ?? []) if (c.type === 'content' && c.content.type === 'text') call.texts.push(c.content.text);
      }
    }
    return call;
  }

  said(kind) {
    return this.updates.filter((u) => u.sessionUpdate === kind).map((u) => u.content.text).join('');
  }

  /** requests runs `kimi-lsp requests --json` with the agent's environment. */
  requests(last) {
    const out = execFileSync(bin('KIMI_LSP_BIN'), ['requests', '--last', String(last), '--json'], { env: this.env, encoding: 'utf8' });
    return JSON.parse(out);
  }

  async close() {
    this.conn.close();
    this.proc.stdin.end();
    await new Promise((r) => {
      if (this.proc.exitCode !== null) return r();
      this.proc.on('exit', r);
      setTimeout(() => {
        this.proc.kill('SIGKILL');
        r();
      }, 5000).unref();
    });
    await waitGone(this.ws.cacheHome);
  }
}

/** scenario runs fn with an agent in a fresh workspace holding calc.go, and a stand-in with the script. */
async function scenario(script, fn, { config = '' } = {}) {
  const ws = workspace();
  writeFileSync(path.join(ws.ws, 'calc.go'), CALC);
  if (config) {
    const dir = path.join(ws.configHome, 'kimi-lsp');
    execFileSync('mkdir', ['-p', dir]);
    writeFileSync(path.join(dir, 'config.toml'), config);
  }
  const standin = await startStandin(script);
  const a = new Agent(ws, standin);
  try {
    await a.start();
    await fn(a, ws, standin);
  } catch (e) {
    e.message += `\n--- kimi-lsp stderr:\n${a.stderr}`;
    throw e;
  } finally {
    await a.close();
    standin.stop();
  }
}

const noVerify = '[verify]\nenable = "off"\n';

test('acp: a turn reads two files, asks with the diff, and the allowed edit lands once', async () => {
  await scenario(
    'acp.json',
    async (a, ws, standin) => {
      const resp = await a.prompt('please fix Mul');
      assert.equal(resp.stopReason, 'end_turn');
      assert.equal(readFileSync(path.join(ws.ws, 'calc.go'), 'utf8'), FIXED);
      assert.equal(a.asked.length, 1, 'one permission question');
      const diff = a.asked[0].toolCall.content.find((c) => c.type === 'diff');
      assert.ok(diff, 'the permission question carries a diff');
      assert.equal(diff.path, path.join(ws.ws, 'calc.go'));
      assert.equal(diff.oldText, CALC);
      assert.equal(diff.newText, FIXED);
      for (const [id, kind] of [['turn1-read1', 'read'], ['turn1-read2', 'read'], ['turn1-edit', 'edit']]) {
        const c = a.toolCall(id);
        assert.ok(c, `tool call ${id} shown`);
        assert.equal(c.kind, kind, `${id} kind`);
        assert.equal(c.status, 'completed', `${id} status`);
        assert.ok(c.locations?.length > 0, `${id} names its file`);
      }
      assert.match(a.said('agent_message_chunk'), /Mul now multiplies\./);
      assert.match(a.said('agent_thought_chunk'), /Mul adds instead of multiplying/);
      const usage = a.updates.find((u) => u.sessionUpdate === 'usage_update');
      assert.ok(usage && usage.cost.currency === 'USD' && usage._meta.kimi.requests === 3, `usage_update ${JSON.stringify(usage)}`);
      assert.ok(resp.usage.inputTokens > 0, 'the prompt reply carries usage');
      const last = a.requests(1);
      assert.equal(last.length, 1);
      assert.equal(last[0].surface, 'agent');
      assert.deepEqual(last[0].files.map((f) => f.path).sort(), ['calc.go', 'main.go']);
      const all = a.requests(0);
      assert.equal(all.length, 3, 'the turn made three requests');
      assert.ok(all.every((r) => r.surface === 'agent' && r.outcome === 'ok'), JSON.stringify(all));
      assert.equal(standin.requests().length, 3);
    },
    { config: noVerify },
  );
});

test('acp: a rejected edit leaves calc.go untouched', async () => {
  await scenario(
    'acp.json',
    async (a, ws) => {
      a.allow = false;
      const resp = await a.prompt('please fix Mul');
      assert.equal(resp.stopReason, 'end_turn');
      assert.equal(a.asked.length, 1);
      assert.equal(readFileSync(path.join(ws.ws, 'calc.go'), 'utf8'), CALC);
      const edit = a.toolCall('turn1-edit');
      assert.equal(edit.status, 'failed');
      assert.ok(edit.texts.some((t) => /rejected/.test(t)), JSON.stringify(edit.texts));
    },
    { config: noVerify },
  );
});

test('acp: an edit that breaks the build is repaired once, verified by gopls', async () => {
  await scenario('acp-repair.json', async (a, ws, standin) => {
    const resp = await a.prompt('please fix Mul');
    assert.equal(resp.stopReason, 'end_turn');
    assert.equal(readFileSync(path.join(ws.ws, 'calc.go'), 'utf8'), FIXED);
    assert.equal(a.asked.length, 1);
    const texts = a.asked[0].toolCall.content.filter((c) => c.type === 'content').map((c) => c.content.text);
    assert.ok(texts.some((t) => t.includes('verified by gopls: no new errors after repair')), JSON.stringify(texts));
    const reqs = standin.requests();
    assert.ok(reqs.some((r) => JSON.stringify(r).includes('undefined: c')), 'the repair request quotes gopls');
    assert.ok(a.requests(0).some((r) => r.surface === 'repair'), 'the repair round is recorded');
  });
});

test('acp: session/cancel mid-stream hangs up the provider and the turn ends cancelled', async () => {
  await scenario(
    'acp.json',
    async (a, _ws, standin) => {
      let cancelled = false;
      a.onUpdate = (u) => {
        if (!cancelled && u.sessionUpdate === 'agent_message_chunk') {
          cancelled = true;
          a.agent.notify(acp.methods.agent.session.cancel, { sessionId: a.sessionId });
        }
      };
      const resp = await a.prompt('KIMI-E2E-SLOW answer');
      assert.equal(resp.stopReason, 'cancelled');
      await waitFor(() => standin.hungUp() >= 1, 10000, 'the stand-in to see the hang-up');
      const next = await a.prompt('and now?');
      assert.equal(next.stopReason, 'end_turn', 'the session goes on after a cancel');
    },
    { config: noVerify },
  );
});
