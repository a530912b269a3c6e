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
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { agentEnv, here, startStandin, tmpdir, waitGone, workspace } from './lib.mjs';

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

/** clientEnv is a client's environment: the stand-in as the provider, private homes and temporary directory. */
function clientEnv(ws, standin) {
  return agentEnv(ws, standin, {
    XDG_DATA_HOME: path.join(ws.root, 'data'),
    TMPDIR: ws.tmp, // the clients' temporary files (Neovim's RPC logs, agent-shell's diffs)
  });
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
  ws.tmp = path.join(ws.root, 'tmp');
  mkdirSync(ws.tmp);
  writeFileSync(path.join(ws.ws, 'calc.go'), CALC);
  const standin = await startStandin('acp-clients.json');
  const env = clientEnv(ws, standin);
  const name = `${client} (${answer})`;
  try {
    const seen = await drive(ws, env);
    if (seen.error) {
      check(`${name}: the session ran`, false, seen.error);
      return;
    }
    check(`${name}: the read turn's answer is in the chat buffer`, /KIMI-ANSWER: Mul adds a and b/.test(seen.turn1), seen.turn1);
    const all = seen.turn1All ?? seen.turn1;
    check(`${name}: the read tool call is shown`, seen.readCall.test(all), all);
    check(`${name}: the thoughts reach the chat`, /I should read calc\.go first\./.test(all), all);
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
    if (left.length > 0) console.log(`     (still running after the session: ${left.join(', ')})`);
    rmSync(ws.root, { recursive: true, force: true });
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
    seen.readCall = /^Read: calc\.go$/m;
    const modes = (seen.config_options ?? []).map((o) => `${o.category}: ${o.options.map((v) => v.value).join(', ')}`);
    seen.notes = [`config options: ${modes.join('; ')}`, `tokens shown: ${seen.tokens} after turn 1, ${seen.tokens2} after turn 2`];
    return seen;
  });
}

/** agentShell drives agent-shell in `emacs -Q --batch` (acp-clients/agent-shell-check.el). */
async function agentShell(answer) {
  const dirs = [process.env.AGENT_SHELL_DIR, process.env.ACP_EL_DIR, process.env.SHELL_MAKER_DIR];
  const emacs = firstOf(process.env.EMACS, path.join(os.homedir(), '.cache/kimi-lsp/emacs30/emacs'));
  if (dirs.some((d) => !d)) return skip(`agent-shell (${answer})`, 'set AGENT_SHELL_DIR, ACP_EL_DIR and SHELL_MAKER_DIR');
  if (!emacs) return skip(`agent-shell (${answer})`, 'no Emacs ≥ 29: set EMACS, or make one with editors/test/emacs30.sh');
  await session('agent-shell', answer, async (ws, env) => {
    const out = path.join(ws.root, 'agent-shell.json');
    const r = await run(emacs, ['-Q', '--batch', '-l', path.join(here, 'acp-clients/agent-shell-check.el')], {
      cwd: ws.ws,
      env: { ...env, AS_LOAD_PATH: dirs.join(':'), AS_OUT: out, AS_ANSWER: answer, AS_BOUND_S: String(BOUND_MS / 1000) },
    }, 4 * BOUND_MS);
    if (!existsSync(out)) return { error: `Emacs wrote no result (exit ${r.code ?? r.signal}):\n${r.output}` };
    const res = JSON.parse(readFileSync(out, 'utf8'));
    const seen = Object.fromEntries(res.steps.map((s) => [s.name, s.value]));
    seen.error = res.error;
    seen.turn1All = seen.turn1_all;
    seen.readCall = /\[✓\]\[read\] calc\.go/; // in a collapsed section
    if (!seen.error) {
      check(`agent-shell (${answer}): View opens the diff`, /-\s*return a \+ b/.test(seen.diff) && /\+\s*return a \* b/.test(seen.diff), seen.diff);
      check(`agent-shell (${answer}): no log line of kimi-lsp below warn in the shell`, !/level=(INFO|DEBUG)/.test(seen.turn2_all), seen.turn2_all);
    }
    seen.notes = [`header line: ${seen.header?.trim()}`, `options: ${seen.options}`];
    return seen;
  });
}

if (process.env.NODE_TEST_CONTEXT) {
  // Picked up by `node --test`: this is a script, not a test file.
} else {
  const dir = tmpdir('kimi-acp-clients-');
  // Every temporary directory of the run (the workspaces, the stand-ins'
  // logs) goes under dir, removed at the end.
  process.env.TMPDIR = path.join(dir, 'tmp');
  mkdirSync(process.env.TMPDIR);
  try {
    binaries(dir);
    for (const answer of ['accept', 'reject']) await codecompanion(answer);
    for (const answer of ['accept', 'reject']) await agentShell(answer);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const failed = results.filter((r) => !r.ok).length;
  console.log(`${results.length - failed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}
