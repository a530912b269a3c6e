package lsp

import (
	"encoding/json"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/complete"
	"github.com/kimi-lsp/kimi-lsp/assist/lspwire"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/cache"
)

// This file holds the protocol types of the server, all in one place: the
// params and results of the messages it reads and writes, with the fields
// it uses. They are ours where go.lsp.dev/protocol v0.12.0 (LSP 3.15) lacks
// a field (3.16-3.18 additions: position encodings, inline completion,
// labelDetails, trigger kinds), decodes one wrongly, or would decode much
// more than we read (initialize's capabilities, on the way to its reply).
// Leaf types (Position, Range, TextEdit, Command, ServerInfo, the progress
// payloads, the sync and execute-command options) come from the library;
// the few leaf types the helper client speaks too (workspace folders,
// document identifiers) are assist/lspwire's (D71).
// The JSON-RPC envelope is stream.go's.

// Initialize: what we read of the request and of the client, what we
// answer.

// initializeParams is what we read of InitializeParams. Decoding into our
// own type lets us read 3.17 fields (general.positionEncodings) and keeps
// the fields we do not use from failing the request.
type initializeParams struct {
	ProcessID             *int64          `json:"processId"`
	ClientInfo            *clientInfo     `json:"clientInfo,omitempty"`
	RootPath              *string         `json:"rootPath,omitempty"`
	RootURI               *string         `json:"rootUri"`
	InitializationOptions json.RawMessage `json:"initializationOptions,omitempty"`
	// Capabilities are decoded into clientCapabilities on first use
	// (Server.clientCaps), after the initialize reply: the first decoding
	// of those nested types cost a third of the start-up instructions.
	Capabilities     json.RawMessage   `json:"capabilities"`
	WorkspaceFolders []workspaceFolder `json:"workspaceFolders,omitempty"`
	WorkDoneToken    json.RawMessage   `json:"workDoneToken,omitempty"`
}

// initializeCaps is what initialize itself needs of the capabilities: the
// position encodings and whether the client does inline completion (see
// completionCapabilities).
type initializeCaps struct {
	General struct {
		PositionEncodings []string `json:"positionEncodings,omitempty"`
	} `json:"general"`
	TextDocument struct {
		InlineCompletion *dynamicRegistration `json:"inlineCompletion,omitempty"`
		Diagnostic       *dynamicRegistration `json:"diagnostic,omitempty"`
	} `json:"textDocument"`
	Workspace struct {
		Diagnostics *struct {
			RefreshSupport bool `json:"refreshSupport"`
		} `json:"diagnostics,omitempty"`
	} `json:"workspace"`
}

type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// workspaceFolder is the shared leaf type (assist/lspwire, D71).
type workspaceFolder = lspwire.WorkspaceFolder

// clientCapabilities holds the client capabilities the server acts on.
type clientCapabilities struct {
	General struct {
		PositionEncodings []string `json:"positionEncodings,omitempty"`
	} `json:"general"`
	Window struct {
		WorkDoneProgress bool `json:"workDoneProgress"`
		ShowDocument     *struct {
			Support bool `json:"support"`
		} `json:"showDocument,omitempty"`
		ShowMessage *struct {
			MessageActionItem *struct {
				AdditionalPropertiesSupport bool `json:"additionalPropertiesSupport"`
			} `json:"messageActionItem,omitempty"`
		} `json:"showMessage,omitempty"`
	} `json:"window"`
	Workspace struct {
		ApplyEdit     bool `json:"applyEdit"`
		WorkspaceEdit *struct {
			DocumentChanges    bool     `json:"documentChanges"`
			ResourceOperations []string `json:"resourceOperations,omitempty"`
			FailureHandling    string   `json:"failureHandling,omitempty"`
			// ChangeAnnotationSupport (LSP 3.16): the client shows
			// annotated edits and asks about those needing confirmation.
			ChangeAnnotationSupport *struct {
				GroupsOnLabel bool `json:"groupsOnLabel"`
			} `json:"changeAnnotationSupport,omitempty"`
		} `json:"workspaceEdit,omitempty"`
		Diagnostics *struct {
			RefreshSupport bool `json:"refreshSupport"`
		} `json:"diagnostics,omitempty"`
		Configuration          bool `json:"configuration"`
		WorkspaceFolders       bool `json:"workspaceFolders"`
		DidChangeConfiguration *struct {
			DynamicRegistration bool `json:"dynamicRegistration"`
		} `json:"didChangeConfiguration,omitempty"`
		DidChangeWatchedFiles *struct {
			DynamicRegistration bool `json:"dynamicRegistration"`
		} `json:"didChangeWatchedFiles,omitempty"`
	} `json:"workspace"`
	TextDocument struct {
		CodeAction *struct {
			CodeActionLiteralSupport *struct {
				CodeActionKind struct {
					ValueSet []string `json:"valueSet"`
				} `json:"codeActionKind"`
			} `json:"codeActionLiteralSupport,omitempty"`
			IsPreferredSupport bool `json:"isPreferredSupport"`
			DataSupport        bool `json:"dataSupport"`
		} `json:"codeAction,omitempty"`
		InlineCompletion *dynamicRegistration  `json:"inlineCompletion,omitempty"`
		Completion       *completionClientCaps `json:"completion,omitempty"`
		// Diagnostic is pull diagnostics (LSP 3.17).
		Diagnostic *dynamicRegistration `json:"diagnostic,omitempty"`
	} `json:"textDocument"`
	// Experimental is kept raw: clients put anything there.
	Experimental json.RawMessage `json:"experimental,omitempty"`
}

// completionClientCaps is what we read of textDocument.completion.
type completionClientCaps struct {
	DynamicRegistration bool                `json:"dynamicRegistration"`
	CompletionItem      *completionItemCaps `json:"completionItem,omitempty"`
}

// completionItemCaps is what we read of completion.completionItem: the
// documentation formats (markdown, plaintext) and whether labelDetails
// are shown (LSP 3.17).
type completionItemCaps struct {
	DocumentationFormat []string `json:"documentationFormat,omitempty"`
	LabelDetailsSupport bool     `json:"labelDetailsSupport"`
}

// item returns the completionItem capabilities, none when c or they are
// absent.
func (c *completionClientCaps) item() completionItemCaps {
	if c == nil || c.CompletionItem == nil {
		return completionItemCaps{}
	}
	return *c.CompletionItem
}

// experimentalCaps is what we read of the client's experimental
// capabilities (kept raw in clientCapabilities: clients put anything
// there).
type experimentalCaps struct {
	// KimiCompletionStatus asks for $/kimi/completionStatus.
	KimiCompletionStatus bool `json:"kimiCompletionStatus"`
}

// dynamicRegistration is a client capability with only that flag we read.
type dynamicRegistration struct {
	DynamicRegistration bool `json:"dynamicRegistration"`
}

// initializeResult is InitializeResult with the 3.17 capabilities we add.
type initializeResult struct {
	Capabilities serverCapabilities   `json:"capabilities"`
	ServerInfo   *protocol.ServerInfo `json:"serverInfo,omitempty"`
}

// serverCapabilities lists exactly what the server implements.
type serverCapabilities struct {
	// PositionEncoding is LSP 3.17's negotiated encoding ("utf-8"/"utf-16").
	PositionEncoding       string                           `json:"positionEncoding"`
	TextDocumentSync       protocol.TextDocumentSyncOptions `json:"textDocumentSync"`
	CodeActionProvider     codeActionOptions                `json:"codeActionProvider"`
	ExecuteCommandProvider protocol.ExecuteCommandOptions   `json:"executeCommandProvider"`
	Workspace              workspaceServerCapabilities      `json:"workspace"`
	// InlineCompletionProvider (LSP 3.18) and CompletionProvider: see
	// completionCapabilities.
	InlineCompletionProvider bool               `json:"inlineCompletionProvider,omitempty"`
	CompletionProvider       *completionOptions `json:"completionProvider,omitempty"`
	// DiagnosticProvider (LSP 3.17) is declared to clients that pull
	// diagnostics: they get the review's findings that way.
	DiagnosticProvider *diagnosticOptions `json:"diagnosticProvider,omitempty"`
}

type diagnosticOptions struct {
	Identifier            string `json:"identifier,omitempty"`
	InterFileDependencies bool   `json:"interFileDependencies"`
	WorkspaceDiagnostics  bool   `json:"workspaceDiagnostics"`
}

// outDiagnostic is a Diagnostic we send (a review finding).
type outDiagnostic struct {
	Range    protocol.Range `json:"range"`
	Severity int            `json:"severity"`
	Code     string         `json:"code"`
	Source   string         `json:"source"`
	Message  string         `json:"message"`
	// Data is *findingData for a review finding, nextEditData for a
	// next-edit suggestion.
	Data any `json:"data,omitempty"`
}

// findingData identifies a review finding in its diagnostic.
type findingData struct {
	Finding int `json:"finding"`
}

// publishDiagnosticsParams is textDocument/publishDiagnostics' params.
type publishDiagnosticsParams struct {
	URI         string          `json:"uri"`
	Version     *int32          `json:"version,omitempty"`
	Diagnostics []outDiagnostic `json:"diagnostics"`
}

// documentDiagnosticParams is textDocument/diagnostic's params.
type documentDiagnosticParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
	PreviousResultID string `json:"previousResultId,omitempty"`
}

// fullDiagnosticReport answers textDocument/diagnostic.
type fullDiagnosticReport struct {
	Kind     string          `json:"kind"`
	ResultID string          `json:"resultId,omitempty"`
	Items    []outDiagnostic `json:"items"`
}

// clearReviewReply answers kimi.clearReview.
type clearReviewReply struct {
	Cleared int `json:"cleared"`
}

type codeActionOptions struct {
	CodeActionKinds []string `json:"codeActionKinds"`
	ResolveProvider bool     `json:"resolveProvider"`
}

type workspaceServerCapabilities struct {
	WorkspaceFolders workspaceFoldersServerCapabilities `json:"workspaceFolders"`
}

type workspaceFoldersServerCapabilities struct {
	Supported           bool `json:"supported"`
	ChangeNotifications bool `json:"changeNotifications"`
}

type completionOptions struct {
	TriggerCharacters []string `json:"triggerCharacters,omitempty"`
	ResolveProvider   bool     `json:"resolveProvider"`
}

// Text synchronisation.

// didChangeParams decodes textDocument/didChange with a pointer Range: the
// library's value Range turns a full-text change into an insert at 0:0
// (docs/protocol-pitfalls.md, "A full-text change is read as an insert").
type didChangeParams struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int32  `json:"version"`
	} `json:"textDocument"`
	ContentChanges []struct {
		Range *protocol.Range `json:"range,omitempty"`
		Text  string          `json:"text"`
	} `json:"contentChanges"`
}

type didOpenParams struct {
	TextDocument struct {
		URI        string `json:"uri"`
		LanguageID string `json:"languageId"`
		Version    int32  `json:"version"`
		Text       string `json:"text"`
	} `json:"textDocument"`
}

// textDocumentIdentifier is the shared leaf type (assist/lspwire, D71).
type textDocumentIdentifier = lspwire.TextDocumentIdentifier

type didCloseParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

type didSaveParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Text         *string                `json:"text,omitempty"`
}

// willSaveParams are textDocument/willSave's (the reason is not read).
type willSaveParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

// Workspace folders, configuration and watched files.

type didChangeWorkspaceFoldersParams struct {
	Event struct {
		Added   []workspaceFolder `json:"added"`
		Removed []workspaceFolder `json:"removed"`
	} `json:"event"`
}

type didChangeConfigurationParams struct {
	Settings json.RawMessage `json:"settings"`
}

// configurationParams is workspace/configuration's params.
type configurationParams struct {
	Items []configurationItem `json:"items"`
}

type configurationItem struct {
	ScopeURI string `json:"scopeUri,omitempty"`
	Section  string `json:"section,omitempty"`
}

// didChangeWatchedFilesParams is what we read of
// workspace/didChangeWatchedFiles.
type didChangeWatchedFilesParams struct {
	Changes []struct {
		URI string `json:"uri"`
	} `json:"changes"`
}

// registrationParams is client/registerCapability's params.
type registrationParams struct {
	Registrations []registration `json:"registrations"`
}

type registration struct {
	ID              string                                   `json:"id"`
	Method          string                                   `json:"method"`
	RegisterOptions didChangeWatchedFilesRegistrationOptions `json:"registerOptions"`
}

type didChangeWatchedFilesRegistrationOptions struct {
	Watchers []fileSystemWatcher `json:"watchers"`
}

// fileSystemWatcher watches a RelativePattern (LSP 3.17): the pattern is
// matched below the folder's URI.
type fileSystemWatcher struct {
	GlobPattern relativePattern `json:"globPattern"`
}

type relativePattern struct {
	BaseURI string `json:"baseUri"`
	Pattern string `json:"pattern"`
}

// Cancellation, progress and the window.

// cancelParams decodes $/cancelRequest's id ourselves: the library's
// interface{} id becomes float64 for numbers and is then rejected
// (docs/protocol-pitfalls.md, "Numeric cancel ids never cancel").
type cancelParams struct {
	ID json.RawMessage `json:"id"`
}

// progressTokenParams decodes window/workDoneProgress/cancel; tokens are
// kept raw (string or number of any size).
type progressTokenParams struct {
	Token json.RawMessage `json:"token"`
}

// workDoneProgressCreateParams is window/workDoneProgress/create's params.
type workDoneProgressCreateParams struct {
	Token json.RawMessage `json:"token"`
}

// progressParams is $/progress's params; Value is one of the library's
// WorkDoneProgressBegin, Report or End.
type progressParams struct {
	Token json.RawMessage `json:"token"`
	Value any             `json:"value"`
}

// showDocumentParams is window/showDocument's params.
type showDocumentParams struct {
	URI       string `json:"uri"`
	External  bool   `json:"external,omitempty"`
	TakeFocus *bool  `json:"takeFocus,omitempty"`
}

// showDocumentResult is window/showDocument's result.
type showDocumentResult struct {
	Success bool `json:"success"`
}

// messageActionItem is a button of window/showMessageRequest.
type messageActionItem struct {
	Title string `json:"title"`
}

// showMessageRequestParams is window/showMessageRequest's params.
type showMessageRequestParams struct {
	Type    protocol.MessageType `json:"type"`
	Message string               `json:"message"`
	Actions []messageActionItem  `json:"actions,omitempty"`
}

// Code actions and commands.

// diagnostic is what we read of a Diagnostic for a prompt: the code action
// context's diagnostics are kept raw otherwise, to travel back to us in the
// command argument unchanged.
type diagnostic struct {
	diagnosticHead
	Range  protocol.Range `json:"range"`
	Source string         `json:"source"`
}

// diagnosticHead is what a menu title needs of a Diagnostic
// (diagnosticSummary runs on every code action request: decoding the rest
// cost it allocations).
type diagnosticHead struct {
	Severity int    `json:"severity"`
	Message  string `json:"message"`
}

// codeActionParams is textDocument/codeAction's params. Diagnostics are kept
// raw so that they travel back to us in the command argument unchanged.
type codeActionParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Range        protocol.Range         `json:"range"`
	Context      struct {
		Diagnostics []json.RawMessage `json:"diagnostics"`
		Only        []string          `json:"only,omitempty"`
		// TriggerKind is 1 when the user asked for the menu, 2 when the
		// client asks on its own (a lightbulb), absent before LSP 3.17.
		TriggerKind int `json:"triggerKind,omitempty"`
	} `json:"context"`
}

// Code action trigger kinds (LSP 3.17 CodeActionTriggerKind).
const (
	triggerInvoked   = 1
	triggerAutomatic = 2
)

// codeAction is the CodeAction literal we send (the library's type lacks
// nothing here, but its Diagnostics are decoded values; we pass ours raw).
type codeAction struct {
	Title       string            `json:"title"`
	Kind        string            `json:"kind,omitempty"`
	Diagnostics []json.RawMessage `json:"diagnostics,omitempty"`
	IsPreferred bool              `json:"isPreferred,omitempty"`
	Edit        *workspaceEdit    `json:"edit,omitempty"`
	Command     *protocol.Command `json:"command,omitempty"`
}

// commandArgs is the one argument object of every kimi.* command.
type commandArgs struct {
	URI         string            `json:"uri,omitempty"`
	Range       *protocol.Range   `json:"range,omitempty"`
	Diagnostics []json.RawMessage `json:"diagnostics,omitempty"`
	Instruction string            `json:"instruction,omitempty"`
	Name        string            `json:"name,omitempty"`
	Job         string            `json:"job,omitempty"`
	// ID names a next-edit suggestion (kimi.nextEdit.*).
	ID uint64 `json:"id,omitempty"`
	// Diff asks kimi.review for the uncommitted changes against HEAD.
	Diff bool `json:"diff,omitempty"`
	// Finding is the review finding a kimi.fix fixes (removed when the
	// fix lands).
	Finding int `json:"finding,omitempty"`
	// Last is how many requests kimi.requests returns (0: 50).
	Last int `json:"last,omitempty"`
}

// executeCommandParams is workspace/executeCommand's params, with the
// work-done token kept raw.
type executeCommandParams struct {
	Command       string            `json:"command"`
	Arguments     []json.RawMessage `json:"arguments,omitempty"`
	WorkDoneToken json.RawMessage   `json:"workDoneToken,omitempty"`
}

// jobReply is executeCommand's answer for a command that starts a job.
type jobReply struct {
	Job string `json:"job"`
}

// cancelReply is kimi.cancel's answer.
type cancelReply struct {
	Cancelled int `json:"cancelled"`
}

// jobInfo describes a running job in kimi.stats.
type jobInfo struct {
	Job   string `json:"job"`
	Title string `json:"title"`
}

// statsReply is kimi.stats's result: the cache accounting and the running
// jobs.
type statsReply struct {
	cache.Stats
	// Cost is CostUSD under the name editors/README.md documents for
	// kimi.stats (the editor clients read either).
	Cost float64   `json:"cost"`
	Jobs []jobInfo `json:"jobs"`
	// Streams and Queued count the model streams open and the jobs
	// waiting for one.
	Streams int `json:"streams"`
	Queued  int `json:"queued"`
	// Completion has inline completion's figures.
	Completion complete.Stats `json:"completion"`
	// Spend is every surface's spend against the budgets, across restarts
	// and editors: this hour's and today's, with their limits (0: none)
	// and ends.
	Spend spendReply `json:"spend"`
	// Verify counts the edits verified, repaired and not verified by the
	// helper language servers.
	Verify assist.VerifyStats `json:"verify"`
	// NextEdit has next-edit suggestions' figures.
	NextEdit complete.NextStats `json:"nextEdit"`
	// Trust says, per workspace folder, whether the user trusts it and
	// what that changes.
	Trust []folderTrust `json:"trust"`
}

// folderTrust is one workspace folder's trust in kimi.stats.
type folderTrust struct {
	Folder  string `json:"folder"`
	Trusted bool   `json:"trusted"`
	// Why is "trusted by the editor", "trusted (trust.folders: DIR)" or
	// "untrusted"; Means says what an untrusted folder changes.
	Why   string `json:"why"`
	Means string `json:"means,omitempty"`
}

// spendReply is kimi.stats's spend: the hour and day windows, whether a
// budget is spent (and which, until when), and budget.confirmAbove.
type spendReply struct {
	spend.Status
	ConfirmAbove float64 `json:"confirmAboveUSD"`
}

// requestsReply is kimi.requests's result: the newest requests the record
// holds, oldest first (metadata only: no contents, no key).
type requestsReply struct {
	Requests []spend.Record `json:"requests"`
}

// Diagnostic severities.
const (
	severityHint = 4
)

// nextEditData is the data of a next-edit diagnostic: the suggestion, for
// editor plugins that show it in place (Neovim, VS Code).
type nextEditData struct {
	ID      uint64         `json:"id"`
	Version int32          `json:"version"`
	Range   protocol.Range `json:"range"`
	NewText string         `json:"newText"`
}

// Completion: inline (LSP 3.18) and items.

type inlineCompletionParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Position     protocol.Position      `json:"position"`
	Context      struct {
		TriggerKind            int              `json:"triggerKind"`
		SelectedCompletionInfo *json.RawMessage `json:"selectedCompletionInfo,omitempty"`
	} `json:"context"`
}

type inlineCompletionItem struct {
	InsertText string          `json:"insertText"`
	Range      *protocol.Range `json:"range,omitempty"`
}

type inlineCompletionList struct {
	Items []inlineCompletionItem `json:"items"`
}

type completionParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Position     protocol.Position      `json:"position"`
}

type completionItem struct {
	Label            string                 `json:"label"`
	LabelDetails     *completionLabelDetail `json:"labelDetails,omitempty"`
	Kind             int                    `json:"kind"`
	Detail           string                 `json:"detail"`
	Documentation    any                    `json:"documentation,omitempty"` // a string or *markupContent
	FilterText       string                 `json:"filterText"`
	SortText         string                 `json:"sortText"`
	InsertTextFormat int                    `json:"insertTextFormat"`
	TextEdit         protocol.TextEdit      `json:"textEdit"`
}

type completionLabelDetail struct {
	Description string `json:"description"`
}

type markupContent struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

type completionList struct {
	IsIncomplete bool             `json:"isIncomplete"`
	Items        []completionItem `json:"items"`
}

// completionKindText and insertTextPlain are LSP's CompletionItemKind.Text
// and InsertTextFormat.PlainText.
const (
	completionKindText = 1
	insertTextPlain    = 1
)

// Workspace edits, with resource operations (the library's
// WorkspaceEdit.DocumentChanges holds TextDocumentEdits only).

type versionedID struct {
	URI string `json:"uri"`
	// Version is null for a file that is not open in the editor.
	Version *int32 `json:"version"`
}

type textDocumentEdit struct {
	TextDocument versionedID         `json:"textDocument"`
	Edits        []protocol.TextEdit `json:"edits"`
}

type createFile struct {
	Kind    string `json:"kind"` // "create"
	URI     string `json:"uri"`
	Options struct {
		Overwrite      bool `json:"overwrite"`
		IgnoreIfExists bool `json:"ignoreIfExists"`
	} `json:"options"`
}

type renameFile struct {
	Kind   string `json:"kind"` // "rename"
	OldURI string `json:"oldUri"`
	NewURI string `json:"newUri"`
}

type deleteFile struct {
	Kind string `json:"kind"` // "delete"
	URI  string `json:"uri"`
}

type workspaceEdit struct {
	Changes         map[string][]protocol.TextEdit `json:"changes,omitempty"`
	DocumentChanges []any                          `json:"documentChanges,omitempty"`
	// ChangeAnnotations (LSP 3.16) are the hunks' annotations of an edit
	// confirmed hunk by hunk (confirm.go).
	ChangeAnnotations map[string]changeAnnotation `json:"changeAnnotations,omitempty"`
}

// changeAnnotation is LSP 3.16's ChangeAnnotation.
type changeAnnotation struct {
	Label             string `json:"label"`
	NeedsConfirmation bool   `json:"needsConfirmation"`
	Description       string `json:"description,omitempty"`
}

// annotatedDocumentEdit is a TextDocumentEdit of AnnotatedTextEdits.
type annotatedDocumentEdit struct {
	TextDocument versionedID         `json:"textDocument"`
	Edits        []annotatedTextEdit `json:"edits"`
}

// annotatedTextEdit is LSP 3.16's AnnotatedTextEdit.
type annotatedTextEdit struct {
	Range        protocol.Range `json:"range"`
	NewText      string         `json:"newText"`
	AnnotationID string         `json:"annotationId"`
}

type applyEditParams struct {
	Label string        `json:"label,omitempty"`
	Edit  workspaceEdit `json:"edit"`
}

// applyEditResult is workspace/applyEdit's result (the library's
// Client.ApplyEdit decodes it into a bool and fails:
// docs/protocol-pitfalls.md, "applyEdit's answer fails to decode").
type applyEditResult struct {
	Applied       bool   `json:"applied"`
	FailureReason string `json:"failureReason,omitempty"`
}
