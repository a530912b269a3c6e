#!/usr/bin/env node
// Checks `kimi-lsp acp` with the real ACP clients of editors/README.md,
// headless, against the stand-in provider (never a real endpoint):
// CodeCompanion in Neovim ≥ 0.11 and agent-shell in Emacs ≥ 29. Each
// client runs the setup of editors/README.md over a small Go workspace:
// a turn that reads calc.go and answers, then a turn whose scripted
// answer edits calc.go, allowed in one run and rejected in another. It
// prints PASS or FAIL per check (SKIP for a client not given) and exits
// non-zero on any FAIL.
//
// Not part of `make test` or run.sh: the plugins come from GitHub, which
// CI cannot reach. Give their directories (git checkouts or unpacked
// snapshots) in the environment:
//
//   CODECOMPANION_DIR=… PLENARY_DIR=… [NVIM=…] \
//   AGENT_SHELL_DIR=… ACP_EL_DIR=… SHELL_MAKER_DIR=… [EMACS=…] \
//     node editors/test/acp-clients.mjs
//
// NVIM defaults to the Neovim 0.12 of nvim012.sh, EMACS to the Emacs 30 of
// emacs30.sh, when they have been made. kimi-lsp and kimi-standin are
// built from this checkout unless KIMI_LSP_BIN and KIMI_STANDIN_BIN name
// them; gopls must be on PATH (edits are verified).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KEY, here, startStandin, tmpdir, waitGone, workspace } from './lib.mjs';

const CALC = 'package main\n\n// Mul returns a times b.\nfunc Mul(a, b int) int {\n\treturn a + b\n}\n';
const FIXED = CALC.replace('return a + b', 'return a * b');
const BOUND_MS = 60000; // a turn's wait in the client: generous, not a speed check

const results = [];
function check(name, ok, detail = '') {
  results.push({ name, ok });
  console.log(`${ok ? 'PASS' : 'FAIL'} ${name}${ok || !detail ? '' : `\n     ${detail.replace(/\n/g, '\n     ')}`}`);
}
function skip(name, why) {
  console.log(`SKIP ${name}: ${why}`);
}

/** binaries builds kimi-lsp and kimi-standin into dir, unless the environment names them. */
function binaries(dir) {
  const repo = path.resolve(here, '../..');
  for (const [env, pkg] of [['KIMI_LSP_BIN', './cmd/kimi-lsp'], ['KIMI_STANDIN_BIN', './assist/model/modeltest/cmd/kimi-standin']]) {
    if (process.env[env]) continue;
    const out = path.join(dir, path.basename(pkg));
    execFileSync('go', ['build', '-o', out, pkg], { cwd: repo, stdio: 'inherit' });
    process.env[env] = out;
  }
}

/** firstOf returns the first of the paths that exists. */
function firstOf(...paths) {
  return paths.find((p) => p && existsSync(p));
}

/** env is a client's environment: the stand-in as the provider, private homes. */
function clientEnv(ws, standin, extra) {
  return {
    ...process.env,
    KIMI_API_KEY: KEY,
    KIMI_BASE_URL: standin.url,
    XDG_CACHE_HOME: ws.cacheHome,
    XDG_CONFIG_HOME: ws.configHome,
    XDG_STATE_HOME: path.join(ws.root, 'state'),
    XDG_DATA_HOME: path.join(ws.root, 'data'),
    HOME: ws.root, // and the helper gopls's GOPATH
    ...extra,
  };
}

/** run runs a client to its end (at most boundMs) and returns its output. */
function run(cmd, args, opts, boundMs) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), boundMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}

/** requests is the record of the workspace's requests (`kimi-lsp requests --json`). */
function requests(env) {
  return JSON.parse(execFileSync(process.env.KIMI_LSP_BIN, ['requests', '--last', '0', '--json'], { env, encoding: 'utf8' }));
}

/**
 * session runs one client session (drive starts it and returns what the
 * user saw) in a fresh workspace and checks what every client must show.
 */
async function session(client, answer, drive) {
  const ws = workspace();
  writeFileSync(path.join(ws.ws, 'calc.go'), CALC);
  const standin = await startStandin('acp-clients.json');
  const env = clientEnv(ws, standin, {});
  const name = `${client} (${answer})`;
  try {
    const seen = await drive(ws, env);
    if (seen.error) {
      check(`${name}: the session ran`, false, seen.error);
      return;
    }
    check(`${name}: the read turn's answer is in the chat buffer`, /KIMI-ANSWER: Mul adds a and b/.test(seen.turn1), seen.turn1);
    check(`${name}: the read tool call is shown`, /calc\.go/.test(seen.turn1) && /Read/i.test(seen.turn1), seen.turn1);
    check(`${name}: the thoughts are shown`, /I should read calc\.go first\./.test(seen.turn1), seen.turn1);
    check(`${name}: the permission prompt carries the diff`, /-\s*return a \+ b/.test(seen.asking) && /\+\s*return a \* b/.test(seen.asking), seen.asking);
    const now = readFileSync(path.join(ws.ws, 'calc.go'), 'utf8');
    if (answer === 'accept') check(`${name}: the allowed edit changed calc.go`, now === FIXED, now);
    else check(`${name}: the rejected edit left calc.go untouched`, now === CALC, now);
    const recs = requests(env);
    check(`${name}: the record holds the five requests, surface agent`, recs.length === 5 && recs.every((r) => r.surface === 'agent'), JSON.stringify(recs.map((r) => r.surface)));
    for (const note of seen.notes ?? []) console.log(`     note: ${note}`);
  } finally {
    standin.stop();
    const left = await waitGone(ws.cacheHome);
    if (left.length === 0) rmSync(ws.root, { recursive: true, force: true });
    else console.log(`     (left ${ws.root}: still running ${left.join(', ')})`);
  }
}

/** codecompanion drives CodeCompanion in headless Neovim (acp-clients/codecompanion.lua). */
async function codecompanion(answer) {
  const cc = process.env.CODECOMPANION_DIR, plenary = process.env.PLENARY_DIR;
  const nvim = firstOf(process.env.NVIM, path.join(os.homedir(), '.cache/kimi-lsp/nvim012/nvim'));
  if (!cc || !plenary) return skip(`codecompanion (${answer})`, 'set CODECOMPANION_DIR and PLENARY_DIR');
  if (!nvim) return skip(`codecompanion (${answer})`, 'no Neovim ≥ 0.11: set NVIM, or make one with editors/test/nvim012.sh');
  await session('codecompanion', answer, async (ws, env) => {
    const out = path.join(ws.root, 'codecompanion.json');
    const r = await run(nvim, ['--headless', '-u', path.join(here, 'acp-clients/codecompanion.lua')], {
      cwd: ws.ws,
      env: { ...env, CC_RTP: `${plenary}:${cc}`, CC_OUT: out, CC_ANSWER: answer, CC_BOUND_MS: String(BOUND_MS) },
    }, 4 * BOUND_MS);
    if (!existsSync(out)) return { error: `Neovim wrote no result (exit ${r.code ?? r.signal}):\n${r.output}` };
    const res = JSON.parse(readFileSync(out, 'utf8'));
    const seen = Object.fromEntries(res.steps.map((s) => [s.name, s.value]));
    seen.error = res.error;
    const modes = (seen.config_options ?? []).map((o) => `${o.category}: ${o.options.map((v) => v.value).join(', ')}`);
    seen.notes = [`config options: ${modes.join('; ')}`, `tokens shown: ${seen.tokens} after turn 1, ${seen.tokens2} after turn 2`];
    return seen;
  });
}

if (process.env.NODE_TEST_CONTEXT) {
  // Picked up by `node --test`: this is a script, not a test file.
} else {
  const dir = tmpdir('kimi-acp-clients-');
  try {
    binaries(dir);
    for (const answer of ['accept', 'reject']) await codecompanion(answer);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const failed = results.filter((r) => !r.ok).length;
  console.log(`${results.length - failed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}
