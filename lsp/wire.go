package lsp

import (
	"encoding/json"

	"go.lsp.dev/protocol"
)

// This file holds our own wire types where go.lsp.dev/protocol v0.12.0
// (LSP 3.15) lacks a field or decodes it wrongly. Leaf types (Position,
// Range, TextEdit, Diagnostic, Command, progress payloads) come from the
// library.

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
	} `json:"textDocument"`
}

type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

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
		} `json:"workspaceEdit,omitempty"`
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

type textDocumentIdentifier struct {
	URI string `json:"uri"`
}

type didCloseParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

type didSaveParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Text         *string                `json:"text,omitempty"`
}

type didChangeWorkspaceFoldersParams struct {
	Event struct {
		Added   []workspaceFolder `json:"added"`
		Removed []workspaceFolder `json:"removed"`
	} `json:"event"`
}

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

type didChangeConfigurationParams struct {
	Settings json.RawMessage `json:"settings"`
}
