import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decorationOf, NextEditUI, nextEditOf, preview } from '../src/nextedit';

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

// Issue 32 item 6: the replaced text is marked as removed and the new text
// shown, whole-line ranges ending on their last line.
const NEXT = {
  source: 'kimi',
  code: 'next-edit',
  message: 'Kimi: next edit — `b` → `y`\n- \treturn a - b\n+ \treturn a - y',
  range: { start: { line: 6, character: 0 }, end: { line: 7, character: 0 } },
  data: { id: 3, version: 2, newText: '\treturn a - y\n' },
};

test('decorationOf marks the replaced lines up to the last one\'s end and shows the new text', () => {
  const found = nextEditOf([NEXT]);
  assert.ok(found);
  const d = decorationOf(found.diagnostic, found.data, (l) => (l === 6 ? '\treturn a - b'.length : 0), 'go');
  assert.deepEqual(d.removed, { start: { line: 6, character: 0 }, end: { line: 6, character: 13 } });
  assert.equal(d.after, '  → return a - y');
  assert.equal(d.hover, 'Kimi: next edit — `b` → `y`\n\n```go\n\treturn a - y\n```\n\nTab: jump to it, then apply it · Escape: dismiss it');
  // A range inside a line stays as it is; backticks in the text get a longer fence; a deletion says so.
  const inLine = { ...NEXT, range: { start: { line: 2, character: 4 }, end: { line: 2, character: 9 } } };
  const d2 = decorationOf(inLine, { id: 1, version: 1, newText: 'x := `a```' }, () => 99);
  assert.deepEqual(d2.removed, inLine.range);
  assert.match(d2.hover, /\n````\nx := `a```\n````\n/);
  assert.equal(decorationOf(inLine, { id: 1, version: 1, newText: '' }, () => 99).after, '  (removed)');
});

test('NextEditUI draws the suggestion struck through on the removed-text colour, the new text after the replaced line, a gutter marker, and the change as a diff in the hover', () => {
  const types: Array<Record<string, unknown>> = [];
  const set: Array<{ type: unknown; decorations: Array<Record<string, unknown>> }> = [];
  // As vscode's: line and character are getters, which a spread loses.
  class Position {
    constructor(
      private readonly _line: number,
      private readonly _character: number,
    ) {}
    get line() {
      return this._line;
    }
    get character() {
      return this._character;
    }
  }
  class Range {
    readonly start: Position;
    readonly end: Position;
    constructor(sl: number, sc: number, el: number, ec: number) {
      for (const v of [sl, sc, el, ec]) assert.equal(typeof v, 'number', 'a Range of numbers');
      this.start = new Position(sl, sc);
      this.end = new Position(el, ec);
    }
  }
  class MarkdownString {
    constructor(readonly value: string) {}
  }
  class ThemeColor {
    constructor(readonly id: string) {}
  }
  const lines = ['package main', '', 'import "fmt"', '', '// Add', 'func Add(a, y int) int {', '\treturn a - b', '}'];
  const editor = {
    document: {
      uri: { toString: () => 'file:///ws/main.go' },
      languageId: 'go',
      lineAt: (l: number) => ({ text: lines[l] }),
      getText: (r: Range) => (r.end.line > r.start.line ? lines.slice(r.start.line, r.end.line).join('\n') + '\n' : ''),
    },
    setDecorations: (type: unknown, decorations: Array<Record<string, unknown>>) => set.push({ type, decorations }),
  };
  const none = { dispose: () => undefined };
  const code = {
    Range,
    MarkdownString,
    ThemeColor,
    OverviewRulerLane: { Left: 1 },
    StatusBarAlignment: { Right: 2 },
    window: {
      activeTextEditor: editor,
      createTextEditorDecorationType: (o: Record<string, unknown>) => (types.push(o), { dispose: () => undefined, options: o }),
      createStatusBarItem: () => ({ show: () => undefined, dispose: () => undefined }),
      onDidChangeActiveTextEditor: () => none,
    },
    // The diagnostic as vscode-languageclient hands it over: vscode Ranges.
    languages: { getDiagnostics: () => [{ ...NEXT, range: new Range(6, 0, 7, 0) }], onDidChangeDiagnostics: () => none },
    commands: { registerCommand: () => none, executeCommand: async () => undefined },
    workspace: { getConfiguration: () => ({ get: () => undefined }), onDidChangeConfiguration: () => none },
  };
  const context = { subscriptions: [], asAbsolutePath: (p: string) => `/ext/${p}` };
  const ui = new NextEditUI(code as unknown as typeof import('vscode'), 'kimi', context as unknown as import('vscode').ExtensionContext);
  ui.render();
  assert.equal(types.length, 2);
  assert.equal(types[0].textDecoration, 'line-through');
  assert.equal((types[0].backgroundColor as ThemeColor).id, 'diffEditor.removedTextBackground');
  assert.equal(types[1].gutterIconPath, '/ext/media/next-edit.svg');
  const mark = set.find((s) => s.type && (s.type as { options: unknown }).options === types[0])!;
  const gutter = set.find((s) => s.type && (s.type as { options: unknown }).options === types[1])!;
  assert.deepEqual(gutter.decorations, [new Range(6, 0, 6, 0)], 'the gutter marker on the replaced line');
  const [dec] = mark.decorations;
  // Ends at the replaced line's end: the new text is drawn after it, not
  // before the next line's "}" (issue 33 item 15).
  assert.deepEqual(dec.range, new Range(6, 0, 6, 13));
  assert.match((dec.hoverMessage as MarkdownString).value, /```diff\n- \treturn a - b\n\+ \treturn a - y\n```/, 'the removed text and the new');
  const after = (dec.renderOptions as { after: { contentText: string; textDecoration: string } }).after;
  assert.equal(after.contentText, '  → return a - y');
  assert.equal(after.textDecoration, 'none');
});
