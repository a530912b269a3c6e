// Package patch turns edits written by a model into a checked, all-or-nothing
// set of file changes.
//
// It parses the unified diffs models actually write (fenced or bare, with
// wrong or missing line numbers and counts, blank context lines without their
// leading space, a/ and b/ prefixes or none, creations, deletions and
// renames), locates every hunk level by level (the hinted line, exact
// anywhere, trailing whitespace ignored, blank-line drift in context,
// a consistent indentation shift, up to two outer context lines trimmed) and
// refuses as soon as a level finds more than one place. Either every hunk of
// every file finds exactly one place and no two overlap, or nothing is
// changed and the error says which hunk failed, how far matching got and
// which lines of the file came closest, in a form meant to be sent back to
// the model.
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
