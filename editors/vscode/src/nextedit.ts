// Next-edit suggestions: after you change one place and pause, kimi-lsp
// proposes the change that comes next elsewhere in the file, as a Hint
// diagnostic (source "kimi", code "next-edit") whose data holds the new
// text, with the code actions "Kimi: Apply next edit" and "Kimi: Dismiss
// next edit". This module shows it with a decoration at its place: the
// text it replaces struck through on the removed-text background, the new
// text after its last line (its first line and how many more) and whole in
// the decoration's hover, with the message. It sets the context key
// `kimi.nextEditVisible` so that Tab (jump to it, then accept) and Escape
// (dismiss) are bound only while one is shown, and keeps the toggle of
// `kimi.nextEdit.enable` (a line of the Kimi status-bar item).
//
// The `vscode` module is passed in (only its types are imported), so the
// pure parts run under `node --test` without VS Code.

import type * as vscode from 'vscode';

/** Commands of the extension (package.json binds Tab and Escape to them). */
export const JUMP_OR_ACCEPT_COMMAND = 'kimi-lsp.nextEdit.jumpOrAccept';
export const DISMISS_COMMAND = 'kimi-lsp.nextEdit.dismiss';
export const TOGGLE_NEXT_EDIT_COMMAND = 'kimi-lsp.toggleNextEdit';
/** The context key of the keybindings. */
export const VISIBLE_CONTEXT = 'kimi.nextEditVisible';
/** The server's commands. */
export const SERVER_APPLY = 'kimi.nextEdit.apply';
export const SERVER_DISMISS = 'kimi.nextEdit.dismiss';

/** A diagnostic as far as this module reads it. */
export interface DiagnosticLike {
  source?: string;
  code?: string | number | { value: string | number };
  message: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  data?: unknown;
}

/** What the diagnostic's data holds. */
export interface NextEditData {
  id: number;
  version: number;
  newText: string;
}

/** nextEditOf returns the next-edit diagnostic among ds, with its data. */
export function nextEditOf<D extends DiagnosticLike>(ds: readonly D[]): { diagnostic: D; data: NextEditData } | undefined {
  for (const d of ds) {
    const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
    if (d.source !== 'kimi' || code !== 'next-edit') continue;
    const data = (d.data ?? {}) as Partial<NextEditData>;
    return { diagnostic: d, data: { id: Number(data.id ?? 0), version: Number(data.version ?? 0), newText: String(data.newText ?? '') } };
  }
  return undefined;
}

/** preview is the text shown after the suggestion's first line. */
export function preview(newText: string, max = 80): string {
  const lines = newText.replace(/\n$/, '').split('\n');
  const first = (lines.find((l) => l.trim() !== '') ?? '').trim();
  let s = `→ ${first}`;
  if (lines.length > 1) s += `  (+${lines.length - 1} more)`;
  return s.length > max ? s.slice(0, max - 1) + '…' : s;
}

/** A range as far as this module reads it. */
export interface RangeLike {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

/** What the suggestion's decoration shows. */
export interface NextEditDecoration {
  /** The text it replaces (struck through); whole lines end at the last one's end. */
  removed: RangeLike;
  /** Shown after the removed range. */
  after: string;
  /** Markdown of the hover: the message and the whole new text. */
  hover: string;
}

/**
 * decorationOf is how the suggestion of diagnostic d is drawn. lineLength
 * gives a line's length: a range ending at the start of the line after its
 * last (whole lines replaced) ends at the last line's end instead, so the
 * new text is shown on the last replaced line, not the line after.
 */
export function decorationOf(
  d: DiagnosticLike,
  data: NextEditData,
  lineLength: (line: number) => number,
  languageId = '',
  removedText = '',
): NextEditDecoration {
  // Copied field by field: vscode.Position keeps line and character in
  // getters, which a spread ({...start}) does not copy — the range came out
  // undefined and nothing was drawn where it belongs (issue 33 item 15).
  const start = { line: d.range.start.line, character: d.range.start.character };
  const end = { line: d.range.end.line, character: d.range.end.character };
  let removed: RangeLike = { start, end };
  if (end.character === 0 && end.line > start.line) {
    removed = { start, end: { line: end.line - 1, character: lineLength(end.line - 1) } };
  }
  const text = data.newText.replace(/\n$/, '');
  // A fence longer than any run of backticks in the text.
  const fence = '`'.repeat(Math.max(3, ...(text.match(/`+/g) ?? []).map((r) => r.length + 1)));
  // The message's first line: the lines after it are the change as a diff, shown here whole.
  const message = d.message.split('\n')[0];
  // The change as a diff: the removed lines, then the new ones.
  const old = removedText.replace(/\n$/, '');
  const diff = [...(old === '' ? [] : old.split('\n').map((l) => `- ${l}`)), ...(text === '' ? [] : text.split('\n').map((l) => `+ ${l}`))].join('\n');
  const dfence = '`'.repeat(Math.max(3, ...(diff.match(/`+/g) ?? []).map((r) => r.length + 1)));
  const shown = old !== '' ? `${dfence}diff\n${diff}\n${dfence}` : text === '' ? '*(the marked text is removed)*' : `${fence}${languageId}\n${text}\n${fence}`;
  const hover = `${message}\n\n${shown}\n\nTab: jump to it, then apply it · Escape: dismiss it`;
  return { removed, after: text === '' ? '  (removed)' : '  ' + preview(data.newText), hover };
}

/** What the extension needs of the language client. */
export interface NextEditClient {
  sendRequest(method: string, params: unknown): Promise<unknown>;
  diagnostics?: vscode.DiagnosticCollection;
}

/**
 * NextEditUI shows the active editor's suggestion and owns its keys and
 * toggle. Create it once in activate.
 */
export class NextEditUI {
  private readonly mark: vscode.TextEditorDecorationType;
  /** gutter marks the suggestion's first line in the gutter and the overview ruler. */
  private readonly gutter: vscode.TextEditorDecorationType;
  private client: NextEditClient | undefined;
  private shown: { uri: string; line: number; id: number } | undefined;

  constructor(
    private readonly code: typeof vscode,
    private readonly section: string,
    context: vscode.ExtensionContext,
    private readonly onChange: () => void = () => undefined,
  ) {
    // The replaced text as a diff shows removed text; the new text after it.
    this.mark = code.window.createTextEditorDecorationType({
      backgroundColor: new code.ThemeColor('diffEditor.removedTextBackground'),
      textDecoration: 'line-through',
      isWholeLine: false,
    });
    this.gutter = code.window.createTextEditorDecorationType({
      gutterIconPath: context.asAbsolutePath('media/next-edit.svg'),
      gutterIconSize: 'contain',
      overviewRulerColor: new code.ThemeColor('editorOverviewRuler.modifiedForeground'),
      overviewRulerLane: code.OverviewRulerLane.Left,
    });
    context.subscriptions.push(
      this.mark,
      this.gutter,
      code.commands.registerCommand(JUMP_OR_ACCEPT_COMMAND, () => this.jumpOrAccept()),
      code.commands.registerCommand(DISMISS_COMMAND, () => this.dismiss()),
      code.commands.registerCommand(TOGGLE_NEXT_EDIT_COMMAND, () => this.toggle()),
      code.languages.onDidChangeDiagnostics(() => this.render()),
      code.window.onDidChangeActiveTextEditor(() => this.render()),
      code.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`${section}.nextEdit`)) this.onChange();
      }),
    );
  }

  /** attach sets the client that applies and dismisses suggestions. */
  attach(client: NextEditClient | undefined): void {
    this.client = client;
  }

  /** enabled reads kimi.nextEdit.enable (default on). */
  enabled(): boolean {
    const v = this.code.workspace.getConfiguration(this.section).get<{ enable?: boolean }>('nextEdit');
    return v?.enable !== false;
  }

  /** line is the Kimi status-bar item's tooltip line for next edits. */
  line(): string {
    return `Next-edit suggestions: ${this.enabled() ? 'on' : 'off'}`;
  }

  /** toggle flips kimi.nextEdit.enable in the user settings. */
  async toggle(): Promise<void> {
    const cfg = this.code.workspace.getConfiguration(this.section);
    const global = cfg.inspect<{ [k: string]: unknown }>('nextEdit')?.globalValue;
    await cfg.update('nextEdit', { ...(global ?? {}), enable: !this.enabled() }, this.code.ConfigurationTarget.Global);
    this.onChange();
  }

  /** render decorates the active editor's suggestion and sets the context key. */
  render(): void {
    const editor = this.code.window.activeTextEditor;
    let found: ReturnType<typeof nextEditOf> | undefined;
    if (editor) found = nextEditOf(this.code.languages.getDiagnostics(editor.document.uri) as unknown as DiagnosticLike[]);
    if (!editor || !found) {
      this.shown = undefined;
      if (editor) {
        editor.setDecorations(this.mark, []);
        editor.setDecorations(this.gutter, []);
      }
      void this.code.commands.executeCommand('setContext', VISIBLE_CONTEXT, false);
      return;
    }
    const r = found.diagnostic.range as vscode.Range;
    this.shown = { uri: editor.document.uri.toString(), line: r.start.line, id: found.data.id };
    const doc = editor.document;
    const removedText = doc.getText(r);
    const dec = decorationOf(found.diagnostic, found.data, (l) => doc.lineAt(l).text.length, doc.languageId, removedText);
    const range = new this.code.Range(dec.removed.start.line, dec.removed.start.character, dec.removed.end.line, dec.removed.end.character);
    editor.setDecorations(this.gutter, [new this.code.Range(r.start.line, 0, r.start.line, 0)]);
    editor.setDecorations(this.mark, [
      {
        range,
        hoverMessage: new this.code.MarkdownString(dec.hover),
        renderOptions: {
          // The new text is not struck through: it is what comes.
          after: { contentText: dec.after, color: new this.code.ThemeColor('editorCodeLens.foreground'), textDecoration: 'none' },
        },
      },
    ]);
    void this.code.commands.executeCommand('setContext', VISIBLE_CONTEXT, true);
  }

  /** jumpOrAccept: the first Tab moves to the suggestion, a Tab on it applies it. */
  async jumpOrAccept(): Promise<void> {
    const editor = this.code.window.activeTextEditor;
    const s = this.shown;
    if (!editor || !s || editor.document.uri.toString() !== s.uri) return;
    if (editor.selection.active.line !== s.line) {
      const line = editor.document.lineAt(s.line);
      const pos = new this.code.Position(s.line, line.firstNonWhitespaceCharacterIndex);
      editor.selection = new this.code.Selection(pos, pos);
      editor.revealRange(new this.code.Range(pos, pos));
      return;
    }
    await this.client?.sendRequest('workspace/executeCommand', { command: SERVER_APPLY, arguments: [{ uri: s.uri, id: s.id }] });
  }

  /** dismiss drops the suggestion. */
  async dismiss(): Promise<void> {
    const s = this.shown;
    if (!s) return;
    await this.client?.sendRequest('workspace/executeCommand', { command: SERVER_DISMISS, arguments: [{ uri: s.uri, id: s.id }] });
  }
}
