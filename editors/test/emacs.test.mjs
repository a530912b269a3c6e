// Emacs with eglot (Debian's emacs-nox + elpa-eglot 1.9, or an Emacs with
// eglot built in) runs editors/README.md's eglot setup against the real
// kimi-lsp and the stand-in provider, one `emacs --batch` per scenario
// (emacs/scenario.el): explain (the answer is eglot's last message), fix
// (eglot asks, one undo step), completion (Kimi's item completes the line).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bin, here, KEY, startStandin, waitGone, workspace } from './lib.mjs';

const EMACS = process.env.EMACS_BIN || 'emacs';
const GREET = '#!/bin/sh\n# greet prints a greeting.\ngreet() {\n  echo "hello $2"\n}\ngreet world\n';

function run(args, opts = {}, emacs = EMACS) {
  return new Promise((resolve) => {
    const child = spawn(emacs, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (e) => resolve({ code: -1, out: String(e) }));
    // Only a backstop for a wedged Emacs: scenario.el's own waits are
    // bounded (120 s each) and say what they waited for.
    const timer = setTimeout(() => child.kill('SIGKILL'), 600000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out });
    });
  });
}

async function scenario(name, script, files = { 'greet.sh': GREET }, emacs = EMACS) {
  const standin = await startStandin(script);
  const ws = workspace();
  for (const [rel, text] of Object.entries(files)) writeFileSync(path.join(ws.ws, rel), text);
  const file = path.join(ws.ws, Object.keys(files)[0]);
  try {
    const lsp = bin('KIMI_LSP_BIN');
    const r = await run(['--batch', '-q', '-l', path.join(here, 'emacs', 'scenario.el')], {
      cwd: ws.ws,
      env: {
        ...process.env,
        // The README's snippet names "kimi-lsp": found on PATH, as a user's.
        PATH: `${path.dirname(lsp)}${path.delimiter}${process.env.PATH}`,
        KIMI_SCENARIO: name,
        KIMI_FILE: file,
        KIMI_README: path.join(here, '..', 'README.md'),
        KIMI_API_KEY: KEY,
        KIMI_BASE_URL: standin.url,
        XDG_CACHE_HOME: ws.cacheHome,
        XDG_CONFIG_HOME: ws.configHome,
        HOME: ws.root,
      },
    }, emacs);
    const exited = Date.now();
    const detail = `emacs output:\n${r.out}\nstand-in:\n${standin.stderr().slice(-2000)}`;
    assert.equal(r.code, 0, `emacs scenario ${name} failed (exit ${r.code}, signal ${r.signal})\n${detail}`);
    assert.match(r.out, new RegExp(`^PASS ${name}$`, 'm'), detail);
    assert.ok(!r.out.includes(KEY), `the API key appeared in Emacs's output\n${detail}`);
    const left = await waitGone(ws.cacheHome);
    assert.deepEqual(left, [], `processes of the scenario (kimi-lsp, its helpers) still ran 30 s after Emacs exited\n${detail}`);
    const lingered = Date.now() - exited;
    if (lingered >= 500) console.log(`info: ${lingered} ms from Emacs's exit until no process of the scenario was left`);
    return { standin, detail, out: r.out };
  } finally {
    standin.stop();
    await waitGone(ws.cacheHome);
  }
}

test('emacs: version', async () => {
  const r = await run([
    '--batch', '-q', '--eval',
    `(progn (require 'eglot) (require 'lisp-mnt) (require 'find-func)
       (princ (format "%s; eglot %s (%s)\\n" (car (split-string (emacs-version) "\\n"))
         (with-temp-buffer (insert-file-contents (find-library-name "eglot")) (lm-version))
         (locate-library "eglot"))))`,
  ]);
  assert.equal(r.code, 0, `emacs with eglot not runnable (Debian: apt-get install emacs-nox elpa-eglot): ${r.out}`);
  console.log(r.out.trim().split('\n').pop());
});

test('emacs: eglot-code-actions → Kimi: Explain shows the explanation last', async () => {
  const { standin, detail } = await scenario('explain', 'explain.json');
  assert.equal(standin.requests().length, 1, `one request reached the provider\n${detail}`);
});

test('emacs: eglot-code-actions → Kimi: Fix edits the buffer, one undo restores it', async () => {
  const { standin, detail } = await scenario('fix', 'emacs-fix.json');
  assert.equal(standin.requests().length, 1, `one request reached the provider\n${detail}`);
});

// Issue 33 item 11: eglot sends no region at point (the sexp there, or
// point): Fix and Review are then of the whole buffer. The prompt holds the
// whole file as the code to fix (the last line, outside the function, too).
test('emacs: eglot-code-actions at point offers Kimi: Fix File and Kimi: Review File; Fix File fixes the buffer', async () => {
  const { standin, detail } = await scenario('fix_point', 'emacs-fix.json');
  const reqs = standin.requests();
  assert.equal(reqs.length, 1, `one request reached the provider\n${detail}`);
  const prompt = JSON.stringify(reqs[0]);
  assert.ok(prompt.includes('greet world') && prompt.includes('greet prints a greeting'), `the prompt holds the whole file\n${detail}`);
});

test('emacs: completion-at-point offers Kimi\'s suggestion and completes the line', async () => {
  await scenario('completion', 'emacs-completion.json');
});

// Issue 23 item 4 with eglot, which sends a server only the diagnostics it
// got from it: main.go of a Go module has an undefined name, eglot runs
// kimi-lsp as go-mode's server (no gopls of its own), verify.enable is
// "auto". M-x eglot-code-actions on the error offers Kimi: Fix quoting
// gopls's message (the server asks its helper gopls), at the y and at the
// line's start; not on a clean line. Picking it sends the stand-in a prompt
// with the message (the script's only rule matches it: any other prompt
// gets no diff) and the fix lands in the buffer.
test('emacs: eglot-code-actions on gopls\'s error offers Kimi: Fix quoting it (helper diagnostics), the fix lands; none on a clean line', async () => {
  const main = readFileSync(path.join(here, 'fixtures', 'workspace', 'main.go'), 'utf8').replace('return a - b', 'return a /* 😀 */ + y');
  const { standin, detail } = await scenario('fix_helper', 'helper-fix.json', { 'main.go': main });
  const reqs = standin.requests();
  assert.equal(reqs.length, 1, `one request reached the provider\n${detail}`);
  assert.ok(JSON.stringify(reqs[0]).includes('undefined: y'), `the prompt holds gopls's message\n${detail}`);
});

// Issue 32 item 6 with eglot: kimi-lsp as go-mode's server on main.go; the
// rename of b in Add's signature brings a next edit on the use below, whose
// Flymake note previews the change (the diagnostic's message: "- " the line
// it replaces, "+ " the new one), and M-x eglot-code-actions there applies it.
test('emacs: a next edit\'s Flymake note previews the change and eglot-code-actions applies it', async () => {
  const main = readFileSync(path.join(here, 'fixtures', 'workspace', 'main.go'), 'utf8');
  const { detail } = await scenario('nextedit', 'nextedit.json', { 'main.go': main });
  const note = detail.split('\n').find((l) => l.startsWith('ok: the Flymake note'));
  if (note) console.log(`info: ${note}`);
});

// A newer eglot (Emacs 30's built-in 1.17, Debian sid's emacs-nox, fetched
// by emacs30.sh; EMACS30_BIN) declares $/progress and window/showDocument
// (issue 33 item 11): the explanation streams as progress and opens as a
// buffer in another window, the code's window staying selected; Fix File
// at point works there too.
const EMACS30 = process.env.EMACS30_BIN;
test('emacs 30 (eglot 1.17): Kimi: Explain streams as $/progress and opens the explanation beside the code', { skip: !EMACS30 && 'EMACS30_BIN not set' }, async () => {
  const { out, detail } = await scenario('explain', 'explain.json', undefined, EMACS30);
  assert.match(out, /^ok: \$\/progress: \d+ notifications \([1-9]\d* reports\)$/m, `the explanation streamed as progress\n${detail}`);
  assert.match(out, /^ok: the explanation .* shown in a window beside the code$/m, `opened with showDocument beside the code\n${detail}`);
  for (const line of out.split('\n').filter((l) => /^ok: (\$\/progress|the explanation)/.test(l))) console.log(`info: ${line}`);
});

test('emacs 30 (eglot 1.17): Kimi: Fix File at point fixes the buffer', { skip: !EMACS30 && 'EMACS30_BIN not set' }, async () => {
  const { standin, detail } = await scenario('fix_point', 'emacs-fix.json', undefined, EMACS30);
  assert.equal(standin.requests().length, 1, `one request reached the provider\n${detail}`);
});
