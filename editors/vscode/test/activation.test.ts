// Activation without a server: the extension, loaded on the fake `vscode`
// module, with kimi.serverPath pointing nowhere. Notifications never settle
// (the user leaves them open), so an await on one would hang activation.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { extensionContext, installFakeVSCode } from './fake-vscode';

const MISSING = '/nonexistent/kimi/bin/kimi-lsp';
const fake = installFakeVSCode({ serverPath: { globalValue: MISSING } });
// Loaded after the fake is in place: the tsc output, or the packaged
// esbuild bundle when KIMI_EXTENSION_MAIN names it (editors/test/run.sh).
// eslint-disable-next-line @typescript-eslint/no-var-requires
const extension = require(process.env.KIMI_EXTENSION_MAIN || '../src/extension') as {
  activate(ctx: unknown): Promise<void>;
  deactivate(): Promise<void>;
};

/** within resolves p, or fails once ms pass (a hung promise fails the test). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not finish in ${ms} ms`)), ms).unref()),
  ]);
}

test('activation without a server finishes, and every command says what is wrong', async (t) => {
  await within(extension.activate(extensionContext()), 5000, 'activate');

  await t.test('the missing binary is told once at start, naming the configured path', () => {
    const errors = fake.shown.filter((s) => s.kind === 'error');
    assert.equal(errors.length, 1, JSON.stringify(fake.shown));
    assert.ok(errors[0].message.includes(MISSING), errors[0].message);
    assert.ok(errors[0].message.includes('kimi.serverPath'), errors[0].message);
    assert.ok(errors[0].items.includes('Copy Install Command'));
    const looked = fake.output.find((l) => l.includes('looked in'));
    assert.ok(looked?.includes(MISSING), `"looked in" names the configured path: ${looked}`);
  });

  await t.test('one Kimi status-bar item (issue 33 item 19): ⚠ while the server is missing, inline completion not shown as on', () => {
    assert.equal(fake.statusItems.length, 1, JSON.stringify(fake.statusItems));
    const [item] = fake.statusItems;
    assert.equal(item.text, '$(warning) Kimi');
    assert.match(item.tooltip, /kimi-lsp was not found/);
    assert.match(item.tooltip, /Inline completion: on, but kimi-lsp was not found/);
    assert.match(item.tooltip, /Next-edit suggestions: on/);
    assert.equal(item.command, 'kimi-lsp.menu');
    assert.ok(fake.commands.get('kimi-lsp.menu'), 'the menu is registered');
  });

  await t.test('Tab and Escape are bound to the next-edit commands only while one is visible', () => {
    for (const id of ['kimi-lsp.nextEdit.jumpOrAccept', 'kimi-lsp.nextEdit.dismiss', 'kimi-lsp.toggleNextEdit']) {
      assert.ok(fake.commands.get(id), `${id} is registered`);
    }
  });

  await t.test('Set API Key opens its input box', async () => {
    await within(Promise.resolve(fake.commands.get('kimi-lsp.setApiKey')!()), 5000, 'kimi-lsp.setApiKey');
    assert.ok(fake.shown.some((s) => s.kind === 'inputBox' && s.message.includes('Set API Key')), JSON.stringify(fake.shown));
  });

  for (const id of ['kimi-lsp.explainSelection', 'kimi-lsp.fix', 'kimi-lsp.rewrite', 'kimi-lsp.document', 'kimi-lsp.writeTests', 'kimi-lsp.reviewFile', 'kimi-lsp.reviewChanges', 'kimi-lsp.clearReview', 'kimi-lsp.cancel', 'kimi-lsp.showStats', 'kimi-lsp.showRequests']) {
    await t.test(`${id} tells the user the binary is missing`, async () => {
      const before = fake.shown.length;
      const fn = fake.commands.get(id);
      assert.ok(fn, `${id} is registered`);
      await within(Promise.resolve(fn()), 5000, id);
      const told = fake.shown.slice(before).filter((s) => s.kind === 'error' && s.message.includes(MISSING));
      assert.equal(told.length, 1, `${id} showed ${JSON.stringify(fake.shown.slice(before))}`);
    });
  }

  await within(extension.deactivate(), 5000, 'deactivate');
});
