// Package patch turns edits written by a model into a checked, all-or-nothing
// set of file changes.
//
// It parses the unified diffs models actually write (fenced or bare, with
// wrong or missing line numbers and counts, blank context lines without their
// leading space, a/ and b/ prefixes or none, creations, deletions and
// renames), locates every hunk level by level (exact anywhere, trailing
// whitespace ignored, blank-line drift in context, a consistent indentation
// shift or change of indentation style, outer context lines the model made
// up trimmed) and refuses as soon as a level finds more than one place.
// Either every hunk of every file finds exactly one place and no two
// overlap, or nothing is changed and the error says which hunk failed, how
// far matching got, which of its lines did not match and which lines of the
// file it was compared with, in a form meant to be sent back to the model.
//
// Rules for the shapes models write:
//   - A hunk header's counts are hints, never limits: a hunk's extent is its
//     body. A count that does not fit never ends, extends or refuses a hunk;
//     one that fits exactly may confirm that a hunk is complete (a code fence
//     the model forgot to close). A reply cut off outside a fence cannot be
//     told from its text; callers refuse replies the provider reports as cut
//     off.
//   - A header's line number may confirm a place, or refuse one, and
//     choose one only between places far apart: a hunk whose old lines
//     occur at several places goes to the one the line names (corrected by
//     the offset the file's earlier hunks showed) within 3 lines, when every
//     other place lies 20 lines or more from it (Match.ByHeader). It refuses a place found away from it when at the line
//     it names (within 3 lines) the hunk's old lines all agree as written
//     but one removed line: the target changed since the model read it,
//     and a look-alike matched. A hunk with only one non-blank old line
//     found more than 3 lines away from the line its header names is
//     refused too: one line is too thin to tell its target, changed since,
//     from a copy of it. Likewise a hunk found only re-indented is
//     refused when all its lines but one match as written elsewhere. Any
//     other hunk whose old lines (context and removed lines) occur at two
//     places is refused, and uniqueness is judged with
//     trailing whitespace, and at the indentation level leading whitespace,
//     set aside. Thin or missing context anchors when what is left occurs
//     once; numberless headers ("@@", "@@ ... @@") anchor by content alone.
//   - Whitespace drift on context lines matches at the tolerant levels and
//     never reaches the file: context lines, and lines a replace_text call
//     keeps, are written back as the file has them.
//   - A header path that names no file, written relative to another root
//     ("--- a/myrepo/cmd/root.go" for the workspace's cmd/root.go, or
//     "cmd/root.go" for tools/cmd/root.go), edits the one workspace file
//     whose path shares the most trailing segments with it (the whole of
//     either path, or at least directory and name); two such files refuse,
//     naming both. When none qualifies, a diff of one file edits the
//     action's own document if the base names agree (Options.Document).
//   - An elision line ("...", "// ...", "# ... existing code ...",
//     "/* ... */") written as a context line, never as a removed or added
//     one, stands for unchanged lines: when the hunk does not match as
//     written (a file line reading "..." at that spot matches first), its
//     parts are placed one after the other, the first anywhere, each next
//     at the one place after the part before where it matches; a next part
//     that matches twice refuses. The lines in the gap are kept.
//   - Re-indentation is decided line by line: a line the file indents in
//     the other style (spaces in a Go raw string, tabs in a string of a
//     space-indented file) written as the file has it needs no mapping, and
//     an added line follows the mapping its neighbouring old lines follow.
//   - An edited file keeps its byte-order mark and its final-newline state;
//     an edit that would leave an empty last line in a file without a final
//     newline is refused. A deletion shows the content it removes (its
//     removed lines are the file's whole text) or comes through Delete.
//
// The package never writes files. It reads them through the small Files
// interface (implemented by the workspace package, with path confinement) and
// returns FileChanges with the text before and after; LineEdits turns a pair
// of texts into minimal line-level byte-offset edits and Rebase moves such
// edits over later, unrelated changes of the buffer.
//
// There is no character-level fuzzy matching and no similarity threshold:
// each level is an exact comparison after a named normalisation.
package patch
