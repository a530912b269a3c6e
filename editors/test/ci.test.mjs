// .ci/run on a "fresh machine": a PATH holding only the shell tools the
// script itself uses, plus stand-ins for go, node, npm, nvim, emacs, patch,
// git, make, clangd, gopls, pyright, typescript-language-server and tsc
// that say what version they are (and apt-get,
// apt-cache, id where a case needs them). What is missing or too old must end the run with
// a sentence; with everything there it runs `make test`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { here, tmpdir } from './lib.mjs';

const script = path.join(here, '..', '..', '.ci', 'run');
// The tools .ci/run runs itself, from the real system.
const SHELL_TOOLS = ['bash', 'dirname', 'sed', 'sort', 'head', 'id'];

function which(tool) {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(path.join(dir, tool))) return path.join(dir, tool);
  }
  throw new Error(`${tool} not found on PATH`);
}

/**
 * machine makes a bin directory with the shell tools and the given
 * stand-ins (name → version it reports), and returns it with the file the
 * stand-in make writes its arguments to.
 */
function machine(standIns) {
  const bin = path.join(tmpdir('kimi-ci-'), 'bin');
  mkdirSync(bin);
  for (const t of SHELL_TOOLS) if (!(t in standIns)) symlinkSync(which(t), path.join(bin, t));
  const made = path.join(bin, '..', 'make-args');
  const bodies = {
    go: (v) => `if [ "$1 $2" = "env GOVERSION" ]; then echo go${v}; else echo "go version go${v} linux/amd64"; fi`,
    node: (v) => `echo ${v}`,
    npm: (v) => `echo ${v}`,
    nvim: (v) => `echo "NVIM v${v}"`,
    make: () => `echo "$@" > '${made}'`,
    // emacs VERSION[:eglot]: eglot loads when ":eglot" is given (built in)
    // or once the stand-in apt-get has installed elpa-eglot.
    emacs: (v) => {
      const [version, eglot] = v.split(':');
      return [
        `if [ "$1" = --version ]; then echo "GNU Emacs ${version}"; exit 0; fi`,
        `case "$*" in *"(require 'eglot)"*) ${eglot ? 'exit 0' : `[ -e '${path.join(bin, '..', 'eglot-installed')}' ]`};; esac`,
      ].join('\n');
    },
    // apt-get logs its arguments; installing elpa-eglot makes eglot load.
    'apt-get': () =>
      `echo "$@" >> '${path.join(bin, '..', 'apt-get-args')}'\n` +
      `case "$*" in *"install "*elpa-eglot*) : > '${path.join(bin, '..', 'eglot-installed')}';; esac`,
    // apt-cache policy elpa-eglot: the given candidate ('' prints nothing,
    // as for a package apt does not know).
    'apt-cache': (candidate) =>
      candidate ? `printf 'elpa-eglot:\\n  Installed: (none)\\n  Candidate: %s\\n' '${candidate}'` : 'true',
    id: (uid) => `echo ${uid}`,
    // The pinned helper language servers, as installed: .ci/run then
    // installs neither.
    gopls: (v) => `echo "golang.org/x/tools/gopls ${v}"`,
    pyright: (v) => `echo "pyright ${v}"`,
    'typescript-language-server': (v) => `echo ${v}`,
    tsc: (v) => `echo "Version ${v}"`,
  };
  for (const [name, version] of Object.entries(standIns)) {
    const body = (bodies[name] ?? (() => 'true'))(version);
    writeFileSync(path.join(bin, name), `#!${which('bash')}\n${body}\n`);
    chmodSync(path.join(bin, name), 0o755);
  }
  return { bin, made, aptArgs: path.join(bin, '..', 'apt-get-args') };
}

function run(bin) {
  const r = spawnSync(which('bash'), [script], { env: { PATH: bin, HOME: path.dirname(bin) }, encoding: 'utf8', timeout: 60000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

const ALL = {
  go: '1.26.8', node: '20.19.2', npm: '10.8.2', nvim: '0.7.2', emacs: '29.4:eglot', patch: '', git: '', make: '',
  gopls: 'v0.23.0', pyright: '1.1.414', 'pyright-langserver': '',
  'typescript-language-server': '5.3.0', tsc: '5.9.3', clangd: '',
  // The VS Code test's browser and what builds code-server's native modules.
  chromium: '', 'g++': '', python3: '', 'pkg-config': '',
};

test('.ci/run: nothing installed and no apt-get: one sentence naming what to install', () => {
  const { bin } = machine({});
  const r = run(bin);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /^\.ci\/run: Go Node\.js npm Neovim Emacs patch git make clangd not found, and there is no apt-get/m, r.out);
  assert.match(r.out, /install Go ≥ 1\.26(\.\d+)? \(https:\/\/go\.dev\/dl\), Node\.js ≥ 20\.10 with npm/, r.out);
});

test('.ci/run: Go too old', () => {
  const { bin } = machine({ ...ALL, go: '1.19.8' });
  const r = run(bin);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /Go 1\.19\.8 is too old: kimi-lsp needs Go ≥ 1\.26/, r.out);
});

test('.ci/run: Node too old', () => {
  const { bin } = machine({ ...ALL, node: '18.19.0' });
  const r = run(bin);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /Node\.js 18\.19\.0 is too old: the editor tests need Node\.js ≥ 20\.10/, r.out);
});

test('.ci/run: with everything there it runs README\'s test command, make test', () => {
  const { bin, made } = machine(ALL);
  const r = run(bin);
  assert.equal(r.code, 0, r.out);
  assert.equal(readFileSync(made, 'utf8').trim(), 'test');
});

test('.ci/run: without gopls and pyright it installs the pinned versions, and stops with a sentence when they are still missing', () => {
  const { gopls, pyright, 'pyright-langserver': _, ...rest } = ALL;
  const { bin, made } = machine(rest);
  const r = run(bin);
  assert.notEqual(r.code, 0, r.out);
  assert.match(r.out, /installing gopls v0\.23\.0 with go install/, r.out);
  assert.match(r.out, /gopls is still not on PATH after go install/, r.out);
  assert.equal(existsSync(made), false, 'make test ran without gopls');
});

test('.ci/run: Emacs 29 with eglot built in: no apt-get at all', () => {
  const { bin, made, aptArgs } = machine({ ...ALL, 'apt-get': '', 'apt-cache': '', id: '0' });
  const r = run(bin);
  assert.equal(r.code, 0, r.out);
  assert.equal(existsSync(aptArgs), false, `apt-get ran: ${existsSync(aptArgs) && readFileSync(aptArgs, 'utf8')}`);
  assert.match(r.out, /GNU Emacs 29\.4/, r.out);
  assert.equal(readFileSync(made, 'utf8').trim(), 'test');
});

test('.ci/run: Emacs 28 without eglot: apt-get update, then elpa-eglot installed', () => {
  const { bin, made, aptArgs } = machine({ ...ALL, emacs: '28.2', 'apt-get': '', 'apt-cache': '1.9-2', id: '0' });
  const r = run(bin);
  assert.equal(r.code, 0, r.out);
  const calls = readFileSync(aptArgs, 'utf8').trim().split('\n');
  assert.deepEqual(calls, ['update', 'install -y --no-install-recommends elpa-eglot ca-certificates'], r.out);
  assert.equal(readFileSync(made, 'utf8').trim(), 'test');
});

test('.ci/run: Emacs without eglot where apt has no elpa-eglot: one sentence, no install', () => {
  const { bin, made, aptArgs } = machine({ ...ALL, emacs: '28.2', 'apt-get': '', 'apt-cache': '', id: '0' });
  const r = run(bin);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /GNU Emacs 28\.2 has no eglot, and apt has no elpa-eglot package here: install Emacs ≥ 29/, r.out);
  assert.deepEqual(readFileSync(aptArgs, 'utf8').trim().split('\n'), ['update'], r.out);
  assert.equal(existsSync(made), false, 'make test did not run');
});

test('.ci/run: Emacs without eglot and no apt-get: one sentence', () => {
  const { bin, made } = machine({ ...ALL, emacs: '28.2' });
  const r = run(bin);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /GNU Emacs 28\.2 has no eglot, and there is no apt-get to install it here/, r.out);
  assert.equal(existsSync(made), false, 'make test did not run');
});

test('.ci/run: without Chromium and the headers of code-server\'s native modules, apt-get installs them, then make test runs', () => {
  const { chromium, 'pkg-config': _, ...rest } = ALL;
  const { bin, made, aptArgs } = machine({ ...rest, 'pkg-config': '', 'apt-get': '', 'apt-cache': '', id: '0' });
  // pkg-config finds no headers until apt-get installed them.
  writeFileSync(path.join(bin, 'pkg-config'), `#!${which('bash')}\n[ -e '${path.join(bin, '..', 'apt-get-args')}' ]\n`);
  const r = run(bin);
  assert.equal(r.code, 0, r.out);
  const apt = readFileSync(aptArgs, 'utf8');
  assert.match(apt, /install -y --no-install-recommends chromium libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev/, apt);
  assert.equal(readFileSync(made, 'utf8').trim(), 'test');
});
