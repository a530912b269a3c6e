// Headless Neovim (Debian's nvim, 0.7 on bookworm) with the kimi plugin, the
// real kimi-lsp binary and the stand-in provider on loopback. Each scenario
// runs nvim/scenario.lua in its own nvim process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { bin, here, KEY, startStandin, waitFor, workspace } from './lib.mjs';

const NVIM = process.env.NVIM_BIN || 'nvim';

function runNvim(scenario, standin, ws, nvim = NVIM, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(
      nvim,
      ['--headless', '-u', 'NONE', '-i', 'NONE', '-n', '-c', `luafile ${path.join(here, 'nvim', 'scenario.lua')}`],
      {
        cwd: ws.ws,
        env: {
          ...process.env,
          KIMI_SCENARIO: scenario,
          KIMI_FILE: ws.file,
          KIMI_PLUGIN_DIR: path.join(here, '..', 'neovim'),
          KIMI_LSP_BIN: bin('KIMI_LSP_BIN'),
          KIMI_API_KEY: KEY,
          KIMI_BASE_URL: standin.url,
          KIMI_STANDIN_STDERR: standin.stderrFile,
          XDG_CACHE_HOME: ws.cacheHome,
          XDG_CONFIG_HOME: ws.configHome,
          XDG_STATE_HOME: path.join(ws.root, 'state'),
          XDG_DATA_HOME: path.join(ws.root, 'data'),
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out });
    });
  });
}

async function scenario(name, script, extra, nvim, env) {
  const standin = await startStandin(script);
  const ws = workspace();
  try {
    const r = await runNvim(name, standin, ws, nvim ?? NVIM, env);
    const detail = `nvim output:\n${r.out}\nstand-in:\n${standin.stderr().slice(-2000)}`;
    assert.equal(r.code, 0, `nvim scenario ${name} failed (exit ${r.code}, signal ${r.signal})\n${detail}`);
    assert.match(r.out, new RegExp(`PASS ${name}`), detail);
    if (extra) await extra(standin, detail);
  } finally {
    standin.stop();
  }
}

test('nvim: version', async () => {
  const r = await new Promise((resolve) => {
    const c = spawn(NVIM, ['--version'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('error', (e) => resolve({ code: -1, out: String(e) }));
    c.on('exit', (code) => resolve({ code, out }));
  });
  assert.equal(r.code, 0, `nvim not runnable (install Debian's neovim): ${r.out}`);
  console.log(r.out.split('\n')[0]);
});

test('nvim: :KimiExplain on a visual range opens the explanation, progress on the way', async () => {
  await scenario('explain', 'explain.json', async (standin) => {
    assert.equal(standin.requests().length, 1, 'one request reached the provider');
  });
});

test('nvim: the window/showMessage fallback also opens a scratch markdown split', async () => {
  await scenario('explain_showmessage', 'explain.json');
});

test('nvim: :KimiFix applies the diff and u restores the text', async () => {
  await scenario('fix', 'fix.json');
});

test('nvim: :KimiCancel stops a slow stream', async () => {
  // scenario.lua itself waits for the stand-in's "hung_up=true" line while
  // nvim and the server still run, so an exiting editor cannot fake it.
  await scenario('cancel', 'slow.json');
});

test('nvim: a failed job\'s whole reason reaches :messages, once', async () => {
  await scenario('fail', 'refused.json');
});

test('nvim: a missing key is told with the plugin\'s way to set it first (issue 21 item 18)', async () => {
  await scenario('nokey', 'explain.json', undefined, undefined, { KIMI_API_KEY: '' });
});

test('nvim: :KimiTests opens the created file in a window and leaves no empty file', async () => {
  await scenario('tests', 'tests.json');
});

test('nvim: with edits.confirm = "always" the review buffer accepts one hunk of two and only that hunk lands', async () => {
  await scenario('confirm', 'confirm.json');
});

test('nvim: q in the review buffer applies nothing and the job says so', async () => {
  await scenario('confirm_cancel', 'confirm.json');
});

test('nvim: a next-edit suggestion is shown at its place; <Tab> jumps, <Tab> applies it in one versioned applyEdit', async () => {
  await scenario('nextedit', 'nextedit.json', async (standin) => {
    assert.equal(standin.requests().length, 1, 'one request reached the provider');
  });
});

test('nvim: inline completion ghost text is shown, followed, accepted, dismissed and cleared', async () => {
  await scenario('completion', 'completion.json');
});

// Neovim 0.12+ draws inline completion itself (vim.lsp.inline_completion).
// Debian bookworm has 0.7; NVIM012_BIN points at a newer nvim when there is
// one (editors/test/nvim012.sh fetches Debian's from sid).
test('nvim 0.12: inline completion through vim.lsp.inline_completion', { skip: !process.env.NVIM012_BIN && 'NVIM012_BIN not set' }, async () => {
  await scenario('completion_builtin', 'completion.json', undefined, process.env.NVIM012_BIN);
});

// :KimiStats lays out the verification counts (issue 23): the edits the
// helper checked and the actions whose context its definitions chose, each
// only once there is something to count.
test('nvim: :KimiStats shows the verified edits and the context from the language server', async () => {
  const lines = (stats) =>
    new Promise((resolve) => {
      const lua = `io.stdout:write(table.concat(require('kimi').stats_lines(vim.fn.json_decode(${JSON.stringify(JSON.stringify(stats))})), '\\n') .. '\\n')`;
      const child = spawn(
        NVIM,
        ['--headless', '-u', 'NONE', '-i', 'NONE', '-n', '--cmd', `set rtp+=${path.join(here, '..', 'neovim')}`, '-c', `lua ${lua}`, '-c', 'qa!'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('exit', () => resolve(out));
    });
  const out = await lines({
    requests: 3,
    verify: { verified: 2, repaired: 1, withNewErrors: 1, unverified: 0, repairTokens: 1883, contextActions: 4, definitionNames: 40, definitionsLocated: 31 },
  });
  assert.match(out, /Verified edits\n  verified +2\n  after a repair +1 \(1883 tokens\)\n  new errors +1\n  not verified +0\n/, out);
  assert.match(out, /Context from the language server\n  actions +4\n  names located +31 of 40\n/, out);
  const none = await lines({ requests: 1, verify: { verified: 0, contextActions: 0 } });
  assert.doesNotMatch(none, /Verified edits|Context from/, none);
});
