import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { nextEditOf, preview } from '../src/nextedit';

const range = { start: { line: 3, character: 0 }, end: { line: 4, character: 0 } };

test('nextEditOf finds the kimi next-edit diagnostic and its data', () => {
  const ds = [
    { source: 'gopls', code: 'UnusedVar', message: 'x', range },
    { source: 'kimi', code: 'next-edit', message: 'Kimi: next edit — `factor` → `k`', range, data: { id: 7, version: 2, newText: '\tif k == 0 {\n' } },
  ];
  const got = nextEditOf(ds);
  assert.ok(got);
  assert.equal(got.data.id, 7);
  assert.equal(got.data.newText, '\tif k == 0 {\n');
  assert.equal(nextEditOf([{ source: 'kimi', code: 'review', message: 'r', range }]), undefined);
  // VS Code's converted diagnostics may carry the code as {value}.
  assert.ok(nextEditOf([{ source: 'kimi', code: { value: 'next-edit' }, message: 'm', range, data: { id: 1 } }]));
});

test('preview shows the first new line and how many more', () => {
  assert.equal(preview('\tif k == 0 {\n'), '→ if k == 0 {');
  assert.equal(preview('a\nb\nc\n'), '→ a  (+2 more)');
  assert.ok(preview('x'.repeat(200)).length <= 80);
});

test('package.json binds Tab and Escape to next edits with the kimi.nextEditVisible context', () => {
  const pkg = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
  const kb = pkg.contributes.keybindings as Array<{ command: string; key: string; when: string }>;
  const tab = kb.find((k) => k.command === 'kimi-lsp.nextEdit.jumpOrAccept');
  const esc = kb.find((k) => k.command === 'kimi-lsp.nextEdit.dismiss');
  assert.equal(tab?.key, 'tab');
  assert.equal(esc?.key, 'escape');
  assert.match(tab!.when, /kimi\.nextEditVisible/);
  assert.match(esc!.when, /kimi\.nextEditVisible/);
  assert.match(tab!.when, /!inlineSuggestionVisible/);
  // Escape keeps its own jobs first: an extension's binding comes before
  // VS Code's own, so without these it would dismiss the suggestion instead
  // of collapsing a selection or the extra cursors, or closing parameter
  // hints or the find widget.
  for (const ctx of ['!editorHasSelection', '!editorHasMultipleSelections', '!parameterHintsVisible', '!findWidgetVisible']) {
    assert.ok(esc!.when.split(' && ').includes(ctx), `escape's when lacks ${ctx}: ${esc!.when}`);
  }
});
