// Emacs with eglot (Debian's emacs-nox + elpa-eglot 1.9, or Emacs 29+ with
// eglot built in) runs the README's eglot setup against the real kimi-lsp and
// the stand-in: code actions listed, kimi.explain executed, the explanation
// shown through window/showMessage (eglot 1.9 advertises neither progress nor
// showDocument). run.sh includes it with KIMI_E2E_EMACS=1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { bin, here, KEY, startStandin, workspace } from './lib.mjs';

test('emacs: eglot runs kimi.explain from a code action and shows the explanation', async () => {
  const standin = await startStandin('explain.json');
  const ws = workspace();
  const file = path.join(ws.ws, 'greet.sh');
  writeFileSync(file, '#!/bin/sh\n# greet prints a greeting.\ngreet() {\n  echo "hello $1"\n}\ngreet world\n');
  try {
    const r = await new Promise((resolve) => {
      const child = spawn('emacs', ['--batch', '-q', '-l', path.join(here, 'emacs', 'eglot-check.el'), file], {
        cwd: ws.ws,
        env: {
          ...process.env,
          KIMI_LSP_BIN: bin('KIMI_LSP_BIN'),
          KIMI_API_KEY: KEY,
          KIMI_BASE_URL: standin.url,
          XDG_CACHE_HOME: ws.cacheHome,
          XDG_CONFIG_HOME: ws.configHome,
          HOME: ws.root,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('error', (e) => resolve({ code: -1, out: String(e) }));
      const timer = setTimeout(() => child.kill('SIGKILL'), 90000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, out });
      });
    });
    const detail = `emacs output:\n${r.out}\nstand-in:\n${standin.stderr().slice(-2000)}`;
    assert.equal(r.code, 0, detail);
    assert.match(r.out, /^PASS$/m, detail);
    assert.equal(standin.requests().length, 1, `one request reached the provider\n${detail}`);
  } finally {
    standin.stop();
  }
});
