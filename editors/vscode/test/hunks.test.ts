import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  WorkspaceEdit,
  applyFileDiff,
  applyTextEdits,
  editsFor,
  hunksToConfirm,
  keptEdit,
  parseUnifiedDiff,
  proposedChange,
  reviewRefusal,
  staleDocument,
} from '../src/hunks';

const MAIN = 'package main\n\nimport "fmt"\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\nfunc main() {\n\tfmt.Println(Add(1, 2))\n}\n';
const URI = 'file:///w/main.go';
const line = (l: number, c = 0) => ({ line: l, character: c });

/** twoHunks is what the server sends with edits.confirm = "always" for a two-hunk diff (lsp/confirm.go). */
function twoHunks(): WorkspaceEdit {
  return {
    documentChanges: [
      {
        textDocument: { uri: URI, version: 7 },
        edits: [
          { range: { start: line(4), end: line(5) }, newText: '// Add returns a plus b.\n', annotationId: 'kimi.hunk.1' },
          { range: { start: line(10), end: line(11) }, newText: '\tfmt.Println(Add(2, 3))\n', annotationId: 'kimi.hunk.2' },
        ],
      },
    ],
    changeAnnotations: {
      'kimi.hunk.1': { label: 'main.go:5 (hunk 1 of 2)', description: 'replace 1 line with 1', needsConfirmation: true },
      'kimi.hunk.2': { label: 'main.go:11 (hunk 2 of 2)', description: 'replace 1 line with 1', needsConfirmation: true },
    },
  };
}

test('each hunk needing confirmation is one review item, with its label and description (issue 33 item 17)', () => {
  const hunks = hunksToConfirm(twoHunks())!;
  assert.deepEqual(
    hunks.map((h) => [h.key, h.uri, h.label, h.description]),
    [
      ['0:0', URI, 'main.go:5 (hunk 1 of 2)', 'replace 1 line with 1'],
      ['0:1', URI, 'main.go:11 (hunk 2 of 2)', 'replace 1 line with 1'],
    ],
  );
  const plain = twoHunks();
  delete plain.changeAnnotations;
  assert.equal(hunksToConfirm(plain), undefined, 'an edit without annotations keeps the built-in path');
  const noConfirm = twoHunks();
  for (const a of Object.values(noConfirm.changeAnnotations!)) a.needsConfirmation = false;
  assert.equal(hunksToConfirm(noConfirm), undefined, 'annotations that need no confirmation: the built-in path');
  const withOp = twoHunks();
  withOp.documentChanges!.push({ kind: 'create', uri: 'file:///w/new.go', annotationId: 'kimi.hunk.1' });
  assert.equal(hunksToConfirm(withOp), undefined, 'a file operation to confirm is left to VS Code');
  const changes: WorkspaceEdit = { changes: { [URI]: twoHunks().documentChanges![0].edits as never }, changeAnnotations: twoHunks().changeAnnotations };
  assert.deepEqual(hunksToConfirm(changes)!.map((h) => h.key), [`${URI}#0`, `${URI}#1`], 'a changes map is read too');
});

test('keptEdit holds the ticked hunks only, without annotations, and what needs no confirmation', () => {
  const edit = twoHunks();
  (edit.documentChanges![0] as { edits: unknown[] }).edits.push({ range: { start: line(0), end: line(0) }, newText: '// top\n' });
  const kept = keptEdit(edit, new Set(['0:1']));
  assert.deepEqual(kept, {
    documentChanges: [
      {
        textDocument: { uri: URI, version: 7 },
        edits: [
          { range: { start: line(10), end: line(11) }, newText: '\tfmt.Println(Add(2, 3))\n' },
          { range: { start: line(0), end: line(0) }, newText: '// top\n' },
        ],
      },
    ],
  });
  assert.equal(hunksToConfirm(kept), undefined, 'VS Code applies it without asking');
  assert.equal(applyTextEdits(MAIN, editsFor(kept, URI)), '// top\n' + MAIN.replace('Add(1, 2)', 'Add(2, 3)'));
  assert.deepEqual(keptEdit(twoHunks(), new Set()), { documentChanges: [] }, 'nothing ticked: an empty edit');
  const op = keptEdit({ documentChanges: [{ kind: 'create', uri: 'file:///w/n.go', annotationId: 'x' }], changeAnnotations: { x: { label: 'n' } } }, new Set());
  assert.deepEqual(op, { documentChanges: [{ kind: 'create', uri: 'file:///w/n.go' }] });
});

test('applyTextEdits places UTF-16 positions, past surrogate pairs and CRLF', () => {
  const text = 'a😀b\r\ncd\nef';
  assert.equal(applyTextEdits(text, [{ range: { start: line(0, 3), end: line(0, 4) }, newText: 'X' }]), 'a😀X\r\ncd\nef');
  assert.equal(applyTextEdits(text, [{ range: { start: line(1, 1), end: line(2, 1) }, newText: '-' }, { range: { start: line(0, 0), end: line(0, 1) }, newText: 'A' }]), 'A😀b\r\nc-f');
  assert.equal(applyTextEdits(text, [{ range: { start: line(0, 99), end: line(0, 99) }, newText: '!' }]), 'a😀b!\r\ncd\nef', 'a character past the end is the line end');
  assert.equal(applyTextEdits(text, [{ range: { start: line(9), end: line(9) }, newText: '\n+' }]), text + '\n+', 'a line past the end is the text end');
});

test('staleDocument finds a document changed since the edit was made for it', () => {
  assert.equal(staleDocument(twoHunks(), () => 7), undefined);
  assert.equal(staleDocument(twoHunks(), () => undefined), undefined, 'not open: nothing to compare');
  assert.equal(staleDocument(twoHunks(), () => 8), URI);
});

test('reviewRefusal says why nothing was applied', () => {
  assert.deepEqual(reviewRefusal(true), { applied: false, failureReason: 'you dismissed the hunk review: nothing applied' });
  assert.deepEqual(reviewRefusal(false), { applied: false, failureReason: 'you unticked every hunk: nothing applied' });
});

// The server's answer to "Show the change" (lsp/verify.go): patch.Unified
// per file, the message cleaned (CRLF made LF) and trimmed.
const CHANGE =
  'Kimi: the proposed change:\n--- a/main.go\n+++ b/main.go\n@@ -8,5 +8,5 @@\n }\n \n func main() {\n-\tfmt.Println(Add(1, 2))\n+\tfmt.Println(Add(1, c))\n }';

test('proposedChange reads the server\'s diff, and applyFileDiff gives the proposed text (D100)', () => {
  const pc = proposedChange(CHANGE)!;
  assert.equal(pc.savedIn, undefined);
  assert.equal(pc.files.length, 1);
  const [fd] = pc.files;
  assert.equal(fd.oldPath, 'main.go');
  assert.equal(fd.newPath, 'main.go');
  assert.equal(fd.complete, true);
  assert.equal(applyFileDiff(MAIN, fd), MAIN.replace('Add(1, 2)', 'Add(1, c)'));
  assert.equal(applyFileDiff(MAIN.replace('Add(1, 2)', 'Add(5, 6)'), fd), undefined, 'a file changed since: not placed');
  assert.equal(applyFileDiff(MAIN.replaceAll('\n', '\r\n'), fd), MAIN.replace('Add(1, 2)', 'Add(1, c)').replaceAll('\n', '\r\n'), 'a CRLF file keeps CRLF');
  assert.equal(proposedChange('Kimi: the errors the edit brings (gopls):\nmain.go:11: undefined: c'), undefined);
});

test('parseUnifiedDiff: several files, a created file, no newline at the end, a cut message', () => {
  const diff =
    '--- a/a.go\n+++ b/a.go\n@@ -1,2 +1,1 @@\n-x\n+y\n--- z\n--- a/b.go\n+++ b/b.go\n@@ -0,0 +1,2 @@\n+package b\n+// end\n\\ No newline at end of file';
  const files = parseUnifiedDiff(diff);
  assert.deepEqual(files.map((f) => [f.oldPath, f.newPath, f.complete]), [['a.go', 'a.go', true], ['b.go', 'b.go', true]]);
  assert.equal(applyFileDiff('x\n-- z\nrest\n', files[0]), 'y\nrest\n', 'a removed line that reads "-- z" is not a header');
  assert.equal(applyFileDiff('', files[1]), 'package b\n// end', 'a created file, its last line without a newline');
  const cut = proposedChange('Kimi: the proposed change:\n--- a/a.go\n+++ b/a.go\n@@ -1,3 +1,3 @@\n x\n-y\n… (4000 more characters; the whole text is in /c/kimi/message-1.md)')!;
  assert.equal(cut.savedIn, '/c/kimi/message-1.md');
  assert.equal(cut.files[0].complete, false, 'a hunk shorter than its header');
  assert.equal(applyFileDiff('x\ny\nz\n', cut.files[0]), undefined);
  const trimmed = parseUnifiedDiff('--- a/a.go\n+++ b/a.go\n@@ -1,3 +1,3 @@\n-a\n+b\n c\n')[0];
  assert.equal(applyFileDiff('a\nc\n\n', trimmed), 'b\nc\n\n', 'a last context line whose space the message trimmed');
});
