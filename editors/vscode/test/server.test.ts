import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { INSTALL_COMMAND, LOCAL_BUILD_COMMAND, expand, findServer } from '../src/server';

function isExecutable(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function tree(): { root: string; make: (rel: string, exec?: boolean) => string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-vscode-'));
  return {
    root,
    make(rel: string, exec = true) {
      const p = path.join(root, rel);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, '#!/bin/sh\n');
      fs.chmodSync(p, exec ? 0o755 : 0o644);
      return p;
    },
  };
}

test('a configured path is used when executable', () => {
  const t = tree();
  const p = t.make('custom/kimi-lsp');
  const got = findServer({ configured: p, env: { PATH: '' }, workspaceFolders: [], isExecutable, platform: 'linux' });
  assert.deepEqual(got, { found: true, path: p, source: 'kimi.serverPath' });
});

test('a configured path that is missing is reported, not replaced by another binary', () => {
  const t = tree();
  t.make('bin/kimi-lsp');
  const missing = path.join(t.root, 'nope', 'kimi-lsp');
  const got = findServer({
    configured: missing,
    env: { PATH: path.join(t.root, 'bin') },
    workspaceFolders: [],
    isExecutable,
    platform: 'linux',
  });
  assert.equal(got.found, false);
  if (!got.found) {
    assert.ok(got.message.includes(missing));
    assert.ok(got.message.includes(INSTALL_COMMAND));
  }
});

test('PATH comes before the Go bin directory and the workspace build', () => {
  const t = tree();
  const onPath = t.make('p1/kimi-lsp');
  t.make('home/go/bin/kimi-lsp');
  t.make('ws/kimi-lsp');
  const got = findServer({
    configured: '',
    env: { PATH: [path.join(t.root, 'p0'), path.join(t.root, 'p1')].join(':'), HOME: path.join(t.root, 'home') },
    workspaceFolders: [path.join(t.root, 'ws')],
    isExecutable,
    platform: 'linux',
  });
  assert.deepEqual(got, { found: true, path: onPath, source: 'PATH' });
});

test('go install locations and the repository-local build are found', () => {
  const cases: Array<[string, { [k: string]: string }, string]> = [
    ['gobin/kimi-lsp', { GOBIN: 'gobin' }, 'GOBIN'],
    ['gopath/bin/kimi-lsp', { GOPATH: 'gopath' }, 'GOPATH'],
    ['home/go/bin/kimi-lsp', { HOME: 'home' }, '~/go/bin'],
    ['ws/bin/kimi-lsp', {}, 'workspace build'],
    ['ws/kimi-lsp', {}, 'workspace build'],
  ];
  for (const [rel, envRel, source] of cases) {
    const t = tree();
    const want = t.make(rel);
    const env: { [k: string]: string } = { PATH: path.join(t.root, 'empty') };
    for (const [k, v] of Object.entries(envRel)) env[k] = path.join(t.root, v);
    const got = findServer({ configured: '', env, workspaceFolders: [path.join(t.root, 'ws')], isExecutable, platform: 'linux' });
    assert.deepEqual(got, { found: true, path: want, source }, rel);
  }
});

test('a file without the executable bit is not taken', () => {
  const t = tree();
  t.make('p/kimi-lsp', false);
  const got = findServer({ configured: '', env: { PATH: path.join(t.root, 'p') }, workspaceFolders: [], isExecutable, platform: 'linux' });
  assert.equal(got.found, false);
});

test('the missing-binary message names both ways to get the server', () => {
  const got = findServer({ configured: '', env: { PATH: '/nonexistent-kimi' }, workspaceFolders: [], isExecutable, platform: 'linux' });
  assert.equal(got.found, false);
  if (!got.found) {
    assert.ok(got.message.includes('`go install ./cmd/kimi-lsp`') && got.message.includes('your clone'), got.message);
    assert.ok(!got.message.includes('@latest'), `the module is not published: ${got.message}`);
    assert.ok(got.message.includes(LOCAL_BUILD_COMMAND), got.message);
    assert.ok(got.tried.includes('/nonexistent-kimi/kimi-lsp'));
  }
});

test('expand handles ~ and ${workspaceFolder}', () => {
  assert.equal(expand('~/bin/kimi-lsp', { HOME: '/h' }, []), '/h/bin/kimi-lsp');
  assert.equal(expand('${workspaceFolder}/bin/kimi-lsp', {}, ['/ws']), '/ws/bin/kimi-lsp');
  assert.equal(expand(' /abs/kimi-lsp ', {}, []), '/abs/kimi-lsp');
});

test('a configured path that is missing is named as configured and as expanded in "looked in"', () => {
  const got = findServer({ configured: '~/bin/kimi-lsp', env: { HOME: '/home/u', PATH: '' }, workspaceFolders: [], isExecutable, platform: 'linux' });
  assert.equal(got.found, false);
  if (!got.found) {
    assert.deepEqual(got.tried, ['~/bin/kimi-lsp, that is /home/u/bin/kimi-lsp (kimi.serverPath)']);
    assert.ok(got.message.includes('"kimi.serverPath" is set to ~/bin/kimi-lsp, that is /home/u/bin/kimi-lsp'), got.message);
  }
});
