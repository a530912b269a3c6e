package lsp

// The LSP structures of the base specification (3.17) that the server
// sends or receives beyond those in wire.go, written here rather than
// taken from go.lsp.dev/protocol (see jsonrpc.go): the field names and
// omitempty rules are the specification's.

// lspPosition is a zero-based line and a column in the negotiated
// encoding's units.
type lspPosition struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

// lspRange is a half-open range of positions.
type lspRange struct {
	Start lspPosition `json:"start"`
	End   lspPosition `json:"end"`
}

// textEdit replaces a range of a document.
type textEdit struct {
	Range   lspRange `json:"range"`
	NewText string   `json:"newText"`
}

// lspCommand is a command the editor shows and sends back with
// workspace/executeCommand.
type lspCommand struct {
	Title     string `json:"title"`
	Command   string `json:"command"`
	Arguments []any  `json:"arguments,omitempty"`
}

// messageType is the severity of window/showMessage and window/logMessage.
type messageType int

const (
	messageError   messageType = 1
	messageWarning messageType = 2
	messageInfo    messageType = 3
	messageLog     messageType = 4
)

// showMessageParams are window/showMessage's.
type showMessageParams struct {
	Type    messageType `json:"type"`
	Message string      `json:"message"`
}

// logMessageParams are window/logMessage's.
type logMessageParams struct {
	Type    messageType `json:"type"`
	Message string      `json:"message"`
}

// syncIncremental is TextDocumentSyncKind.Incremental.
const syncIncremental = 2

// textDocumentSyncOptions is the textDocumentSync server capability.
type textDocumentSyncOptions struct {
	OpenClose bool         `json:"openClose,omitempty"`
	Change    int          `json:"change,omitempty"`
	Save      *saveOptions `json:"save,omitempty"`
}

// saveOptions asks for didSave, with or without the text.
type saveOptions struct {
	IncludeText bool `json:"includeText,omitempty"`
}

// executeCommandOptions lists the commands the server executes.
type executeCommandOptions struct {
	Commands []string `json:"commands"`
}

// serverInfo names the server in the initialize result.
type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// progressBegin, progressReport and progressEnd are the values of
// $/progress for a work-done token.
type progressBegin struct {
	Kind        string `json:"kind"` // "begin"
	Title       string `json:"title"`
	Cancellable bool   `json:"cancellable,omitempty"`
	Message     string `json:"message,omitempty"`
}

type progressReport struct {
	Kind    string `json:"kind"` // "report"
	Message string `json:"message,omitempty"`
}

type progressEnd struct {
	Kind    string `json:"kind"` // "end"
	Message string `json:"message,omitempty"`
}
