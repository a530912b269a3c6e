package lspwire

import "encoding/json"

// The leaf types of LSP that more than one of server, helper client and
// test harness speak, gathered by hand from LSP 3.17 (docs/decisions.md,
// D71): plain structs with the fields we read or send, under their
// specification names. The server's outgoing diagnostics and its
// capability and initialize types stay in lsp/protocol.go (their exact
// encoding is the server's), positions and ranges inside lsp are
// go.lsp.dev/protocol's, which encode the same.

// Position is a zero-based line and character offset in a document (the
// character in the negotiated position encoding).
type Position struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

// Range is a span of a document, End exclusive.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Diagnostic is a diagnostic as read from a language server: severity 0
// (absent) and code absent are kept as such.
type Diagnostic struct {
	Range    Range           `json:"range"`
	Severity int             `json:"severity,omitempty"`
	Code     json.RawMessage `json:"code,omitempty"`
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
}

// TextDocumentIdentifier names a document by its URI.
type TextDocumentIdentifier struct {
	URI string `json:"uri"`
}

// VersionedTextDocumentIdentifier names a document and the version of
// its text.
type VersionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int32  `json:"version"`
}

// TextDocumentItem is a document as didOpen sends it.
type TextDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int32  `json:"version"`
	Text       string `json:"text"`
}

// WorkspaceFolder is one folder of the workspace, as initialize and
// workspace/didChangeWorkspaceFolders carry it.
type WorkspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

// FileEvent is one entry of workspace/didChangeWatchedFiles: the file's
// URI and its change type (1 created, 2 changed, 3 deleted).
type FileEvent struct {
	URI  string `json:"uri"`
	Type int    `json:"type"`
}
