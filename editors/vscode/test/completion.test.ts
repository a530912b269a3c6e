import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  CompletionUI, STATUS_NOTIFICATION, TOGGLE_COMMAND, completionStatsLine, completionView, shouldRequest, toggled,
} from '../src/completion';

const pkg = require('../../package.json');

test('shouldRequest needs both kimi.completion.enable and editor.inlineSuggest.enabled', () => {
  assert.equal(shouldRequest(undefined, undefined), true, 'both default to on');
  assert.equal(shouldRequest(true, true), true);
  assert.equal(shouldRequest(false, true), false);
  assert.equal(shouldRequest(true, false), false);
});

test('completionView words on, off, VS Code off and problems', () => {
  assert.deepEqual(completionView(true, true), { line: 'Inline completion: on', warning: false });
  assert.deepEqual(completionView(false, true), { line: 'Inline completion: off', warning: false });
  assert.match(completionView(true, false).line, /editor\.inlineSuggest\.enabled/);
  assert.match(completionView(true, true, { state: 'noKey' }).line, /Set API Key/);
  const err = completionView(true, true, { state: 'error', message: 'rate limited by the provider' });
  assert.equal(err.warning, true);
  assert.match(err.line, /rate limited/);
  assert.equal(completionView(true, true, { state: 'ok' }).warning, false);
  // No "on" while there is no server (issue 33 item 19).
  const none = completionView(true, true, undefined, 'kimi-lsp was not found');
  assert.equal(none.warning, true);
  assert.match(none.line, /kimi-lsp was not found/);
});

test('toggled keeps the other completion settings', () => {
  assert.deepEqual(toggled(undefined, false), { enable: false });
  assert.deepEqual(toggled({ maxLines: 3, enable: false }, true), { maxLines: 3, enable: true });
});

/** fakeVSCode is the part of the vscode API CompletionUI uses, recording what it does. */
function fakeVSCode(settings: { [section: string]: { [k: string]: unknown } }) {
  const commands = new Map<string, () => unknown>();
  const item = { text: '', tooltip: '', command: '', shown: false, show() { this.shown = true; }, dispose() {} };
  const updates: Array<{ key: string; value: unknown; target: number }> = [];
  const get = (section: string, path: string): unknown => {
    let v: unknown = settings[section];
    for (const p of path.split('.')) v = v === undefined || v === null ? undefined : (v as { [k: string]: unknown })[p];
    return v;
  };
  const code = {
    StatusBarAlignment: { Left: 1, Right: 2 },
    ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
    window: { createStatusBarItem: () => item },
    commands: {
      registerCommand: (id: string, fn: () => unknown) => {
        commands.set(id, fn);
        return { dispose() {} };
      },
    },
    workspace: {
      onDidChangeConfiguration: () => ({ dispose() {} }),
      getConfiguration: (section: string) => ({
        get: (path: string) => get(section, path),
        inspect: (path: string) => ({ globalValue: get(section, path) }),
        update: async (key: string, value: unknown, target: number) => {
          updates.push({ key, value, target });
          settings[section] = { ...settings[section], [key]: value };
        },
      }),
    },
  };
  const context = { subscriptions: [] as unknown[] };
  return { code, context, commands, item, updates };
}

test('CompletionUI: the toggle, the proposed feature, the status and the middleware', async () => {
  const f = fakeVSCode({ kimi: { completion: { maxLines: 4 } }, editor: { inlineSuggest: { enabled: true } } });
  let changes = 0;
  const ui = new CompletionUI(f.code as any, 'kimi', f.context as any, () => changes++);
  assert.ok(f.commands.has(TOGGLE_COMMAND));
  assert.equal(ui.view().line, 'Inline completion: on');

  // attach: proposed features (inline completion in vscode-languageclient 9),
  // the experimental capability, the status notification.
  const calls: string[] = [];
  let feature: any;
  let handler: ((s: any) => void) | undefined;
  ui.attach({
    registerProposedFeatures: () => calls.push('proposed'),
    registerFeature: (f: unknown) => {
      calls.push('feature');
      feature = f;
    },
    onNotification: (method: string, h: (s: any) => void) => {
      assert.equal(method, STATUS_NOTIFICATION);
      handler = h;
    },
  });
  assert.deepEqual(calls, ['proposed', 'feature']);
  const caps: any = { experimental: { other: 1 } };
  feature.fillClientCapabilities(caps);
  assert.deepEqual(caps.experimental, { other: 1, kimiCompletionStatus: true });
  // What vscode-languageclient calls on every feature when it starts and
  // when it stops or restarts (cleanUp: clear() in reverse order, before the
  // shutdown request): a missing clear threw there (issue 33 item 13).
  feature.initialize({}, undefined);
  assert.deepEqual(feature.getState(), { kind: 'static' });
  assert.equal(typeof feature.clear, 'function');
  feature.clear();
  handler!({ state: 'error', message: 'rate limited by the provider' });
  assert.equal(ui.view().warning, true);
  assert.ok(changes > 0, 'the Kimi item is redrawn');
  // A new key makes the server's last reason stale (issue 33 item 19).
  ui.clearStatus();
  assert.equal(ui.view().warning, false);
  handler!({ state: 'noKey' });

  // The middleware asks the server only while completion is on.
  const mw = ui.middleware();
  let asked = 0;
  const next = () => {
    asked++;
    return [];
  };
  assert.deepEqual(mw.provideInlineCompletionItems({} as any, {} as any, {} as any, {} as any, next), []);
  assert.equal(asked, 1);

  // The status-bar command turns it off in the user settings, keeping maxLines.
  await f.commands.get(TOGGLE_COMMAND)!();
  assert.deepEqual(f.updates, [{ key: 'completion', value: { maxLines: 4, enable: false }, target: 1 }]);
  assert.equal(ui.view().line, 'Inline completion: off');
  assert.equal(mw.provideInlineCompletionItems({} as any, {} as any, {} as any, {} as any, next), null);
  assert.equal(asked, 1, 'no request while off');
});

test('CompletionUI: no request while VS Code inline suggestions are off', () => {
  const f = fakeVSCode({ kimi: {}, editor: { inlineSuggest: { enabled: false } } });
  const ui = new CompletionUI(f.code as any, 'kimi', f.context as any);
  let asked = 0;
  const r = ui.middleware().provideInlineCompletionItems({} as any, {} as any, {} as any, {} as any, () => {
    asked++;
    return [];
  });
  assert.equal(r, null);
  assert.equal(asked, 0);
  assert.match(ui.view().line, /inlineSuggest/);
});

test('package.json contributes the toggle and the completion settings', () => {
  const ids = (pkg.contributes.commands as Array<{ command: string }>).map((c) => c.command);
  assert.ok(ids.includes(TOGGLE_COMMAND));
  const props = pkg.contributes.configuration.properties['kimi.completion'].properties;
  for (const k of ['enable', 'items', 'debounceMs', 'model', 'reasoningEffort', 'maxCompletionTokens', 'maxContextTokens', 'maxLines']) {
    assert.ok(k in props, `kimi.completion.${k} missing`);
  }
});

test('completionStatsLine words the completion figures of kimi.stats', () => {
  assert.equal(completionStatsLine(undefined), '');
  assert.equal(completionStatsLine({ requested: 0 }), '');
  assert.equal(
    completionStatsLine({ requested: 40, shown: 12, reused: 7, providerRequests: 5, hitRatio: 0.93, costUSD: 0.0123 }),
    'completions 40 asked · 12 shown · 7 reused · 5 provider requests · hit ratio 93% · cost $0.0123',
  );
});
