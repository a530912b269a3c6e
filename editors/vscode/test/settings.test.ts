import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  SECTION_KEYS,
  answerConfiguration,
  buildSection,
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
