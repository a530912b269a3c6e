// Change view: how the extension shows an edit before it lands. Two
// surfaces (D100, D101):
//
//   - The "ask" question's *Show the change*: the server answers with a
//     window/showMessage holding a unified diff; each file's proposed text
//     opens in a diff editor beside the code (original ↔ proposed) before
//     the question is asked again. A diff that does not apply to the file
//     (changed since) opens as a `diff` document instead.
//   - The hunk review of edits.confirm: a workspace/applyEdit whose hunks
//     need confirmation opens the diff of the proposed result and a
//     QuickPick with one item per hunk, all ticked; the diff follows the
//     ticks; Enter applies the ticked hunks (an edit of those only, without
//     confirmation), Escape none.
//
// The proposed texts are virtual documents of the scheme `kimi-proposed`,
// never written anywhere. The pure parts are hunks.ts; the `vscode` module
// is passed in (only its types are imported).

import type * as vscode from 'vscode';
import {
  Hunk,
  ProposedChange,
  WorkspaceEdit,
  applyFileDiff,
  applyTextEdits,
  editsFor,
  hunksToConfirm,
  keptEdit,
  reviewRefusal,
  staleDocument,
} from './hunks';

/** The scheme of the proposed texts. */
export const PROPOSED_SCHEME = 'kimi-proposed';

/** workspace/applyEdit's params and answer, as far as the review reads them. */
export interface ApplyEditParams {
  label?: string;
  edit: WorkspaceEdit;
}
export interface ApplyEditResult {
  applied: boolean;
  failureReason?: string;
}

/** What ChangeView needs of the language client. */
export interface ClientConverters {
  asWorkspaceEdit(edit: WorkspaceEdit): Promise<vscode.WorkspaceEdit | undefined>;
  asUri(uri: string): vscode.Uri;
}

/** ChangeView shows proposed changes and runs the hunk review. */
export class ChangeView implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed: vscode.EventEmitter<vscode.Uri>;
  readonly onDidChange: vscode.Event<vscode.Uri>;
  /** lock orders the edits: one applies (or is reviewed) at a time, in the order they came. */
  private lock: Promise<unknown> = Promise.resolve();
  private seq = 0;

  constructor(
    private readonly code: typeof vscode,
    context: { subscriptions: Array<{ dispose(): unknown }> },
    private readonly log: (line: string) => void,
  ) {
    this.changed = new code.EventEmitter<vscode.Uri>();
    this.onDidChange = this.changed.event;
    context.subscriptions.push(this.changed, code.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, this));
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  /** proposedUri is the virtual document of a file's proposed text (id: one per view). */
  private proposedUri(file: vscode.Uri, id: number): vscode.Uri {
    return file.with({ scheme: PROPOSED_SCHEME, query: String(id) });
  }

  private setText(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
  }

  /** openDiff opens original ↔ proposed beside the code, the focus left where it is. */
  private async openDiff(original: vscode.Uri, proposed: vscode.Uri, name: string): Promise<void> {
    await this.code.commands.executeCommand('vscode.diff', original, proposed, `${name} ↔ proposed by Kimi`, {
      viewColumn: this.code.ViewColumn.Beside,
      preserveFocus: true,
      preview: false,
    });
  }

  /** resolve finds a diff's path: absolute, or in the first workspace folder that has it. */
  private async resolve(p: string): Promise<vscode.Uri | undefined> {
    if (p.startsWith('/')) return this.code.Uri.file(p);
    const folders = this.code.workspace.workspaceFolders ?? [];
    for (const f of folders) {
      const u = this.code.Uri.joinPath(f.uri, p);
      try {
        await this.code.workspace.fs.stat(u);
        return u;
      } catch {
        // not in this folder
      }
    }
    return folders[0] ? this.code.Uri.joinPath(folders[0].uri, p) : undefined;
  }

  /** textOf is a document's text: the open buffer, the file, or "" for none. */
  private async textOf(uri: vscode.Uri): Promise<string | undefined> {
    try {
      return (await this.code.workspace.openTextDocument(uri)).getText();
    } catch {
      return undefined;
    }
  }

  /**
   * showChange opens each file of the server's proposed change in a diff
   * editor beside the code; a change it cannot place opens as a diff
   * document (or, cut in the message, the file holding all of it).
   */
  async showChange(pc: ProposedChange): Promise<void> {
    const id = ++this.seq;
    const views: Array<{ original: vscode.Uri; proposed: vscode.Uri; name: string }> = [];
    let placed = pc.savedIn === undefined && pc.files.length > 0;
    for (const fd of placed ? pc.files : []) {
      const name = fd.newPath === '/dev/null' ? fd.oldPath : fd.newPath;
      const file = await this.resolve(name);
      const before = file && (await this.textOf(file));
      const created = before === undefined && fd.hunks.every((h) => h.oldLines === 0);
      const after = file && (before !== undefined || created) ? applyFileDiff(before ?? '', fd) : undefined;
      if (!file || after === undefined) {
        placed = false;
        break;
      }
      const proposed = this.proposedUri(file, id);
      this.setText(proposed, fd.newPath === '/dev/null' ? '' : after);
      // A file the change creates has no original: an empty one stands in.
      let original = file;
      if (created) {
        original = file.with({ scheme: PROPOSED_SCHEME, query: `${id}-before` });
        this.setText(original, '');
      }
      views.push({ original, proposed, name });
    }
    if (!placed) {
      this.log(`[kimi] the proposed change does not apply to the files as they are: shown as a diff`);
      if (pc.savedIn) {
        await this.code.window.showTextDocument(this.code.Uri.file(pc.savedIn), { viewColumn: this.code.ViewColumn.Beside, preserveFocus: true });
        return;
      }
      const doc = await this.code.workspace.openTextDocument({ language: 'diff', content: pc.diff });
      await this.code.window.showTextDocument(doc, { viewColumn: this.code.ViewColumn.Beside, preserveFocus: true });
      return;
    }
    for (const v of views) await this.openDiff(v.original, v.proposed, v.name);
  }

  /** closeViews closes the diff editors of proposed texts and forgets the texts. */
  async closeViews(): Promise<void> {
    const tabs = this.code.window.tabGroups.all.flatMap((g) => g.tabs);
    const ours = tabs.filter((t) => t.input instanceof this.code.TabInputTextDiff && t.input.modified.scheme === PROPOSED_SCHEME);
    if (ours.length > 0) await this.code.window.tabGroups.close(ours, true);
    this.texts.clear();
  }

  /**
   * applyEdit answers workspace/applyEdit: an edit with hunks to confirm
   * goes through the review, any other as vscode-languageclient applies
   * it. One edit at a time.
   */
  applyEdit(params: ApplyEditParams, client: ClientConverters): Promise<ApplyEditResult> {
    const run = this.lock.then(async () => {
      const hunks = hunksToConfirm(params.edit);
      return hunks ? this.review(params, hunks, client) : this.apply(params.edit, client);
    });
    this.lock = run.catch(() => undefined);
    return run;
  }

  /** apply applies edit unless a document it was made for changed since. */
  private async apply(edit: WorkspaceEdit, client: ClientConverters): Promise<ApplyEditResult> {
    const versions = new Map(this.code.workspace.textDocuments.map((d) => [d.uri.toString(), d.version]));
    const stale = staleDocument(edit, (uri) => versions.get(client.asUri(uri).toString()));
    if (stale) return { applied: false, failureReason: `${this.code.workspace.asRelativePath(client.asUri(stale))} changed meanwhile` };
    const converted = await client.asWorkspaceEdit(edit);
    const applied = converted !== undefined && (await this.code.workspace.applyEdit(converted));
    return applied ? { applied } : { applied, failureReason: 'VS Code did not apply the edit' };
  }

  /**
   * review shows the proposed result and one ticked QuickPick item per
   * hunk; Enter applies the ticked hunks, Escape none.
   */
  private async review(params: ApplyEditParams, hunks: Hunk[], client: ClientConverters): Promise<ApplyEditResult> {
    const id = ++this.seq;
    const files = [...new Set(hunks.map((h) => h.uri))];
    const bases = new Map<string, string>();
    for (const uri of files) bases.set(uri, (await this.textOf(client.asUri(uri))) ?? '');
    const show = (keep: ReadonlySet<string>) => {
      const kept = keptEdit(params.edit, keep);
      for (const uri of files) this.setText(this.proposedUri(client.asUri(uri), id), applyTextEdits(bases.get(uri)!, editsFor(kept, uri)));
    };
    const all = new Set(hunks.map((h) => h.key));
    show(all);
    for (const uri of files) {
      const file = client.asUri(uri);
      await this.openDiff(file, this.proposedUri(file, id), this.code.workspace.asRelativePath(file));
    }
    const keep = await this.pick(params.label, hunks, show);
    await this.closeViews();
    if (keep === undefined) return reviewRefusal(true);
    if (keep.size === 0) return reviewRefusal(false);
    this.log(`[kimi] hunk review: ${keep.size} of ${hunks.length} ticked`);
    return this.apply(keptEdit(params.edit, keep), client);
  }

  /** pick asks which hunks to apply: their keys, or undefined on Escape. */
  private pick(label: string | undefined, hunks: Hunk[], onChange: (keep: ReadonlySet<string>) => void): Promise<Set<string> | undefined> {
    type Item = vscode.QuickPickItem & { key: string };
    const qp = this.code.window.createQuickPick<Item>();
    const items: Item[] = hunks.map((h) => ({ label: h.label, description: h.description, detail: firstLine(h.edit.newText), key: h.key }));
    qp.title = `${label ?? 'Kimi'}: ${hunks.length} ${hunks.length === 1 ? 'hunk' : 'hunks'} to apply`;
    qp.placeholder = 'Enter applies the ticked hunks, Escape none';
    qp.canSelectMany = true;
    qp.ignoreFocusOut = true; // clicking into the diff keeps the review open
    qp.matchOnDescription = true;
    qp.items = items;
    qp.selectedItems = items;
    const keys = (sel: readonly Item[]) => new Set(sel.map((i) => i.key));
    return new Promise((resolve) => {
      qp.onDidChangeSelection((sel) => onChange(keys(sel)));
      qp.onDidAccept(() => {
        resolve(keys(qp.selectedItems));
        qp.hide();
      });
      qp.onDidHide(() => {
        resolve(undefined);
        qp.dispose();
      });
      qp.show();
    });
  }
}

/** firstLine is what a hunk's QuickPick item shows of its new text. */
function firstLine(newText: string): string {
  const l = newText.split('\n').find((s) => s.trim() !== '');
  return l === undefined ? '(removes lines)' : `→ ${l.trim()}`;
}
