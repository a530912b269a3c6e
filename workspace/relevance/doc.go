// Package relevance chooses what enters a prompt besides the active
// document: the declarations the selection and the active file use, the
// files they import, the open buffers, the directory's files, recently
// viewed files — ranked, and cut to a byte budget. Actions and inline
// completion use the same entry point:
//
//	docs := relevance.Choose(relevance.Workspace(folders), relevance.Request{
//		Active: snap, SelStart: start, SelEnd: end, Open: open,
//		MaxTokens: cfg.Context.MaxTokens, Bytes: est.Bytes,
//	})
//	// docs.Stable: the prompt's cached part; docs.Volatile: its tail
//
// (a completion sets Request.Snippets and gets declarations only, in
// docs.Stable).
//
// It reads the workspace through Source (the folders: options, paths,
// secret names, confinement, file text) and Folder (one folder's tree, its
// files on disk, its symbol index and Go package tables), which
// workspace.Folders and workspace.View implement; it keeps nothing between
// calls but what those hold.
//
// Where a language server can say where the selection's names are
// declared, the caller asks it for the names Lookups returns and passes
// its answers as Request.Definitions: those declarations rank first among
// the selection's, and the symbol index resolves only the names it did not
// answer (assist asks the verification helper, see assist/verify).
//
// Its invariants: the result depends on the snapshots, the workspace,
// what the prompt session's stable part holds (Request.Cached: within each
// group of candidates, what is cached goes first) and the definitions
// given (the volatile part only) only, and is
// deterministic (see Select for the order); the stable part depends on the
// active file, the open buffers and that ledger, never on the selection;
// a secret file (by its name or the target of its links), a binary file, a
// file over the size cap, outside the workspace, or ignored and not open
// never enters; nothing exceeds the budget, and a line longer than code's
// is cut (see Select and Snippets).
package relevance
