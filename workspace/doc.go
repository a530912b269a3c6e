// Package workspace owns the truth about text: open documents with their
// versions, the position mapper between byte offsets and LSP positions, the
// workspace folders, the files on disk and which paths may be read or written.
//
// Everything inside works on byte offsets; LSP positions (UTF-16 or UTF-8
// columns) appear only at the edge, through the mapper methods of Snapshot.
// Package workspace knows nothing about models or about LSP wire types.
package workspace
