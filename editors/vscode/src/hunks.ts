// Hunks: the pure parts of the extension's own hunk review (edits.confirm)
// and of the "ask" question's change view. No `vscode` import: the edits
// are LSP's JSON, the texts plain strings, so `npm test` checks them.
//
// The review. With edits.confirm, the server sends an edit whose every
// hunk is an AnnotatedTextEdit with an annotation of its own
// (needsConfirmation, labelled "main.go:6 (hunk 1 of 2)"). VS Code's
// refactor preview starts such entries unticked and has no API to tick
// them, so the extension answers those workspace/applyEdit requests
// itself: one QuickPick item per hunk, all ticked, and an edit of the
// ticked hunks only (keptEdit), applied without confirmation.
//
// The change view. The server's answer to "Show the change" is a
// window/showMessage "Kimi: the proposed change:" and a unified diff per
// file (against the file as it was when the edit was planned); the
// proposed text is that diff applied to the file (applyFileDiff), shown in
// a diff editor beside the code.

/** An LSP position (UTF-16 code units, as VS Code's client negotiates). */
export interface Position {
  line: number;
  character: number;
}

/** An LSP range. */
export interface Range {
  start: Position;
  end: Position;
}

/** An LSP TextEdit or AnnotatedTextEdit. */
export interface TextEdit {
  range: Range;
  newText: string;
  annotationId?: string;
}

/** An LSP ChangeAnnotation. */
export interface ChangeAnnotation {
  label: string;
  description?: string;
  needsConfirmation?: boolean;
}

/** An LSP TextDocumentEdit. */
export interface TextDocumentEdit {
  textDocument: { uri: string; version?: number | null };
  edits: TextEdit[];
}

/** A resource operation (create, rename, delete). */
export interface ResourceOperation {
  kind: string;
  annotationId?: string;
  [field: string]: unknown;
}

/** An LSP WorkspaceEdit, as far as the review reads it. */
export interface WorkspaceEdit {
  changes?: { [uri: string]: TextEdit[] };
  documentChanges?: Array<TextDocumentEdit | ResourceOperation>;
  changeAnnotations?: { [id: string]: ChangeAnnotation };
}

/** One hunk to confirm: a text edit whose annotation needs confirmation. */
export interface Hunk {
  /** key names the edit in its WorkspaceEdit (keptEdit's keep set). */
  key: string;
  uri: string;
  edit: TextEdit;
  label: string;
  description: string;
}

function isTextDocumentEdit(c: TextDocumentEdit | ResourceOperation): c is TextDocumentEdit {
  return !('kind' in c) && Array.isArray((c as TextDocumentEdit).edits);
}

/** needsConfirmation says whether an annotation id asks for confirmation. */
function confirms(edit: WorkspaceEdit, id: string | undefined): boolean {
  return id !== undefined && edit.changeAnnotations?.[id]?.needsConfirmation === true;
}

/**
 * hunksToConfirm lists the text edits of edit whose annotation needs
 * confirmation, in the edit's order, or undefined when the extension's
 * review cannot take it: none needs confirmation, or a resource operation
 * does (a file to create, rename or delete only on the user's word: VS
 * Code's preview asks about those).
 */
export function hunksToConfirm(edit: WorkspaceEdit): Hunk[] | undefined {
  const hunks: Hunk[] = [];
  const add = (key: string, uri: string, e: TextEdit) => {
    if (!confirms(edit, e.annotationId)) return;
    const a = edit.changeAnnotations![e.annotationId!];
    hunks.push({ key, uri, edit: e, label: a.label, description: a.description ?? '' });
  };
  for (const [ci, c] of (edit.documentChanges ?? []).entries()) {
    if (!isTextDocumentEdit(c)) {
      if (confirms(edit, c.annotationId)) return undefined;
      continue;
    }
    c.edits.forEach((e, ei) => add(`${ci}:${ei}`, c.textDocument.uri, e));
  }
  for (const [uri, edits] of Object.entries(edit.changes ?? {})) edits.forEach((e, ei) => add(`${uri}#${ei}`, uri, e));
  return hunks.length > 0 ? hunks : undefined;
}

/**
 * keptEdit is edit with only the hunks in keep (by Hunk.key) and every
 * edit that needs no confirmation, annotations dropped: what VS Code then
 * applies without asking. A document left without edits is left out.
 */
export function keptEdit(edit: WorkspaceEdit, keep: ReadonlySet<string>): WorkspaceEdit {
  const plain = (e: TextEdit): TextEdit => ({ range: e.range, newText: e.newText });
  const out: WorkspaceEdit = {};
  if (edit.documentChanges) {
    out.documentChanges = [];
    for (const [ci, c] of edit.documentChanges.entries()) {
      if (!isTextDocumentEdit(c)) {
        const { annotationId: _drop, ...op } = c;
        out.documentChanges.push(op as ResourceOperation);
        continue;
      }
      const edits = c.edits.filter((e, ei) => !confirms(edit, e.annotationId) || keep.has(`${ci}:${ei}`)).map(plain);
      if (edits.length > 0) out.documentChanges.push({ textDocument: c.textDocument, edits });
    }
  }
  if (edit.changes) {
    out.changes = {};
    for (const [uri, edits] of Object.entries(edit.changes)) {
      const kept = edits.filter((e, ei) => !confirms(edit, e.annotationId) || keep.has(`${uri}#${ei}`)).map(plain);
      if (kept.length > 0) out.changes[uri] = kept;
    }
  }
  return out;
}

/** editsFor lists edit's text edits of the document uri. */
export function editsFor(edit: WorkspaceEdit, uri: string): TextEdit[] {
  const out: TextEdit[] = [];
  for (const c of edit.documentChanges ?? []) if (isTextDocumentEdit(c) && c.textDocument.uri === uri) out.push(...c.edits);
  out.push(...(edit.changes?.[uri] ?? []));
  return out;
}

/**
 * staleDocument names the first document edit was made for at a version
 * the editor's document no longer has (versionOf: the open document's
 * version, undefined when it is not open), as vscode-languageclient's own
 * handler checks; undefined when none.
 */
export function staleDocument(edit: WorkspaceEdit, versionOf: (uri: string) => number | undefined): string | undefined {
  for (const c of edit.documentChanges ?? []) {
    if (!isTextDocumentEdit(c)) continue;
    const want = c.textDocument.version;
    if (want === undefined || want === null || want < 0) continue;
    const have = versionOf(c.textDocument.uri);
    if (have !== undefined && have !== want) return c.textDocument.uri;
  }
  return undefined;
}

/**
 * reviewRefusal is the applyEdit answer when the review applies nothing:
 * dismissed (Escape), or accepted with every hunk unticked. The reason
 * reaches the job's end line; endNotice shows it as a status, not an error
 * (the user chose it).
 */
export function reviewRefusal(dismissed: boolean): { applied: false; failureReason: string } {
  return {
    applied: false,
    failureReason: dismissed ? 'you dismissed the hunk review: nothing applied' : 'you unticked every hunk: nothing applied',
  };
}

/** lineStarts are the offsets where text's lines start (LSP line ends: \n, \r\n, \r). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n' || (c === '\r' && text[i + 1] !== '\n')) starts.push(i + 1);
  }
  return starts;
}

/** offsetAt is a position's offset in text (UTF-16), clamped to the text. */
function offsetAt(text: string, starts: number[], p: Position): number {
  if (p.line >= starts.length) return text.length;
  const start = starts[p.line];
  const next = p.line + 1 < starts.length ? starts[p.line + 1] : text.length;
  let end = next;
  if (end > start && text[end - 1] === '\n') end--;
  if (end > start && text[end - 1] === '\r') end--;
  return Math.min(start + p.character, end);
}

/**
 * applyTextEdits is text with the LSP edits applied (their ranges on text,
 * not overlapping; any order).
 */
export function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  const starts = lineStarts(text);
  const spans = edits
    .map((e) => ({ from: offsetAt(text, starts, e.range.start), to: offsetAt(text, starts, e.range.end), text: e.newText }))
    .sort((a, b) => a.from - b.from || a.to - b.to);
  let out = '';
  let at = 0;
  for (const s of spans) {
    out += text.slice(at, s.from) + s.text;
    at = Math.max(at, s.to);
  }
  return out + text.slice(at);
}

/** One line of a hunk: its mark (' ', '-', '+'), its text, whether a newline ends it. */
export interface DiffLine {
  mark: ' ' | '-' | '+';
  text: string;
  eol: boolean;
}

/** A hunk of a unified diff. */
export interface DiffHunk {
  /** oldStart is 1-based; with oldLines 0 it is the line the hunk follows. */
  oldStart: number;
  oldLines: number;
  newLines: number;
  lines: DiffLine[];
}

/** One file of a unified diff. */
export interface FileDiff {
  /** Paths without their a/ and b/ prefixes; "/dev/null" for none. */
  oldPath: string;
  newPath: string;
  hunks: DiffHunk[];
  /** complete: every hunk has the lines its header counts (a cut message has not). */
  complete: boolean;
}

const stripPrefix = (p: string) => (p === '/dev/null' ? p : p.replace(/^[ab]\//, ''));

/** parseUnifiedDiff reads the files of a unified diff ("--- a/x", "+++ b/x", "@@ …"). */
export function parseUnifiedDiff(diff: string): FileDiff[] {
  const files: FileDiff[] = [];
  const lines = diff.split('\n');
  let file: FileDiff | undefined;
  let hunk: DiffHunk | undefined;
  const close = () => {
    if (file) file.complete = file.hunks.length > 0 && file.hunks.every(full);
  };
  const full = (h: DiffHunk) =>
    h.lines.filter((l) => l.mark !== '+').length === h.oldLines && h.lines.filter((l) => l.mark !== '-').length === h.newLines;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (l.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ') && (!hunk || full(hunk))) {
      close();
      file = { oldPath: stripPrefix(l.slice(4).trim()), newPath: stripPrefix(lines[i + 1].slice(4).trim()), hunks: [], complete: false };
      files.push(file);
      hunk = undefined;
      i++;
      continue;
    }
    const h = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(l);
    if (h && file) {
      hunk = { oldStart: Number(h[1]), oldLines: h[2] === undefined ? 1 : Number(h[2]), newLines: h[4] === undefined ? 1 : Number(h[4]), lines: [] };
      file.hunks.push(hunk);
      continue;
    }
    if (!hunk) continue;
    if (l.startsWith('\\')) {
      // "\ No newline at end of file": the line before has none.
      const last = hunk.lines[hunk.lines.length - 1];
      if (last) last.eol = false;
      continue;
    }
    const mark = l[0];
    if (mark === ' ' || mark === '-' || mark === '+') {
      // The last line of the message: its newline was trimmed, not absent.
      hunk.lines.push({ mark, text: l.slice(1), eol: true });
    } else if (l === '' && !full(hunk)) {
      hunk.lines.push({ mark: ' ', text: '', eol: true }); // a context line whose space was trimmed
    }
  }
  close();
  return files;
}

/**
 * applyFileDiff is original with fd's hunks applied, or undefined when a
 * hunk's old lines are not where its header says (the file changed since,
 * or the diff is cut). Line ends are compared without a final \r: the
 * message carrying the diff turned CRLF into LF; added lines take the
 * file's own line end.
 */
export function applyFileDiff(original: string, fd: FileDiff): string | undefined {
  if (!fd.complete) return undefined;
  const lines = original.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const crlf = /\r\n/.test(original);
  const bare = (s: string) => s.replace(/\r?\n$/, '').replace(/\r$/, '');
  const out: string[] = [];
  let at = 0;
  for (const h of fd.hunks) {
    const start = h.oldLines === 0 ? h.oldStart : h.oldStart - 1;
    if (start < at || start > lines.length) return undefined;
    out.push(...lines.slice(at, start));
    at = start;
    for (const l of h.lines) {
      if (l.mark === '+') {
        out.push(l.text.replace(/\r$/, '') + (l.eol ? (crlf ? '\r\n' : '\n') : ''));
        continue;
      }
      if (at >= lines.length || bare(lines[at]) !== l.text.replace(/\r$/, '')) return undefined;
      if (l.mark === ' ') out.push(lines[at]);
      at++;
    }
  }
  out.push(...lines.slice(at));
  return out.join('');
}

/** The server's answer to "Show the change", read. */
export interface ProposedChange {
  files: FileDiff[];
  /** The whole diff as the message holds it. */
  diff: string;
  /** savedIn: the message was cut, and this file holds the whole text. */
  savedIn?: string;
}

/**
 * proposedChange reads the server's "Kimi: the proposed change:" message,
 * or undefined for any other message.
 */
export function proposedChange(message: string): ProposedChange | undefined {
  const m = /^(?:Kimi: )?the proposed change:\n/.exec(message);
  if (!m) return undefined;
  let diff = message.slice(m[0].length);
  const cut = /\n… \(\d+ more characters; the whole text is in (.+)\)$/.exec(diff);
  if (cut) diff = diff.slice(0, cut.index);
  return { files: parseUnifiedDiff(diff), diff, savedIn: cut?.[1] };
}
