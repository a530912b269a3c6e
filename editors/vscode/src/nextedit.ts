// Next-edit suggestions: after you change one place and pause, kimi-lsp
// proposes the change that comes next elsewhere in the file, as a Hint
// diagnostic (source "kimi", code "next-edit") whose data holds the new
// text, with the code actions "Kimi: Apply next edit" and "Kimi: Dismiss
// next edit". This module shows it with decorations at its place (the range
// marked, the new text after its first line), sets the context key
// `kimi.nextEditVisible` so that Tab (jump to it, then accept) and Escape
// (dismiss) are bound only while one is shown, and keeps a status-bar toggle
// of `kimi.nextEdit.enable`.
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
  private readonly item: vscode.StatusBarItem;
  private client: NextEditClient | undefined;
  private shown: { uri: string; line: number; id: number } | undefined;

  constructor(
    private readonly code: typeof vscode,
    private readonly section: string,
    context: vscode.ExtensionContext,
  ) {
    this.mark = code.window.createTextEditorDecorationType({
      backgroundColor: new code.ThemeColor('diffEditor.insertedTextBackground'),
      isWholeLine: false,
    });
    this.item = code.window.createStatusBarItem('kimi-lsp.nextEdit', code.StatusBarAlignment.Right, 98);
    this.item.name = 'Kimi next edits';
    this.item.command = TOGGLE_NEXT_EDIT_COMMAND;
    context.subscriptions.push(
      this.mark,
      this.item,
      code.commands.registerCommand(JUMP_OR_ACCEPT_COMMAND, () => this.jumpOrAccept()),
      code.commands.registerCommand(DISMISS_COMMAND, () => this.dismiss()),
      code.commands.registerCommand(TOGGLE_NEXT_EDIT_COMMAND, () => this.toggle()),
      code.languages.onDidChangeDiagnostics(() => this.render()),
      code.window.onDidChangeActiveTextEditor(() => this.render()),
      code.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`${section}.nextEdit`)) this.refreshItem();
      }),
    );
    this.refreshItem();
    this.item.show();
  }

  /** attach sets the client that applies and dismisses suggestions. */
  attach(client: NextEditClient | undefined): void {
    this.client = client;
  }

  private enabled(): boolean {
    const v = this.code.workspace.getConfiguration(this.section).get<{ enable?: boolean }>('nextEdit');
    return v?.enable !== false;
  }

  private refreshItem(): void {
    const on = this.enabled();
    this.item.text = on ? '$(arrow-right) Kimi NES' : '$(circle-slash) Kimi NES';
    this.item.tooltip = on ? 'Kimi next-edit suggestions are on (click to turn off)' : 'Kimi next-edit suggestions are off (click to turn on)';
  }

  /** toggle flips kimi.nextEdit.enable in the user settings. */
  async toggle(): Promise<void> {
    const cfg = this.code.workspace.getConfiguration(this.section);
    const global = cfg.inspect<{ [k: string]: unknown }>('nextEdit')?.globalValue;
    await cfg.update('nextEdit', { ...(global ?? {}), enable: !this.enabled() }, this.code.ConfigurationTarget.Global);
    this.refreshItem();
  }

  /** render decorates the active editor's suggestion and sets the context key. */
  render(): void {
    const editor = this.code.window.activeTextEditor;
    let found: ReturnType<typeof nextEditOf> | undefined;
    if (editor) found = nextEditOf(this.code.languages.getDiagnostics(editor.document.uri) as unknown as DiagnosticLike[]);
    if (!editor || !found) {
      this.shown = undefined;
      if (editor) editor.setDecorations(this.mark, []);
      void this.code.commands.executeCommand('setContext', VISIBLE_CONTEXT, false);
      return;
    }
    const r = found.diagnostic.range as vscode.Range;
    this.shown = { uri: editor.document.uri.toString(), line: r.start.line, id: found.data.id };
    editor.setDecorations(this.mark, [
      { range: r, renderOptions: { after: { contentText: '  ' + preview(found.data.newText), color: new this.code.ThemeColor('editorCodeLens.foreground') } } },
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
