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
//   - A header's line number may confirm a place, never choose one: a hunk
//     whose old lines (context and removed lines) occur at two places is
//     refused whatever its header says, and uniqueness is judged with
//     trailing whitespace, and at the indentation level leading whitespace,
//     set aside. Thin or missing context anchors when what is left occurs
//     once; numberless headers ("@@", "@@ ... @@") anchor by content alone.
//   - Whitespace drift on context lines matches at the tolerant levels and
//     never reaches the file: context lines, and lines a replace_text call
//     keeps, are written back as the file has them.
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
