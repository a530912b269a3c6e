package lsp

import (
	"context"
	"encoding/json"
	"slices"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// requestTable maps request methods to handlers. "initialize" is handled
// by handleCall itself (it runs on the read loop).
var requestTable = map[string]requestFunc{
	"shutdown": func(s *Server, ctx context.Context, _ json.RawMessage) (any, error) {
		s.log.Info("shutdown requested")
		return nil, nil
	},
}

// notificationTable maps notification methods to handlers; "exit" is
// handled by handleNotification itself.
var notificationTable = map[string]notifyFunc{
	"initialized":                         handleInitialized,
	"$/cancelRequest":                     handleCancelRequest,
	"$/setTrace":                          func(*Server, context.Context, json.RawMessage) error { return nil },
	"textDocument/didOpen":                handleDidOpen,
	"textDocument/didChange":              handleDidChange,
	"textDocument/didClose":               handleDidClose,
	"textDocument/didSave":                handleDidSave,
	"workspace/didChangeWorkspaceFolders": handleDidChangeWorkspaceFolders,
}

func handleInitialize(s *Server, ctx context.Context, raw json.RawMessage) (any, error) {
	var p initializeParams
	if err := decodeParams("initialize", raw, &p); err != nil {
		return nil, err
	}
	enc := workspace.UTF16
	if slices.Contains(p.Capabilities.General.PositionEncodings, "utf-8") {
		enc = workspace.UTF8
	}
	folders := initialFolders(&p)

	s.mu.Lock()
	s.enc = enc
	s.caps = p.Capabilities
	if p.ClientInfo != nil {
		s.client = *p.ClientInfo
	}
	s.folders = folders
	s.initParams = &p
	s.mu.Unlock()

	s.state.Store(stateInitialized)
	s.log.Info("initialized", "client", s.client.Name, "clientVersion", s.client.Version,
		"positionEncoding", enc.String(), "folders", len(folders))
	if p.ProcessID != nil {
		go s.watchParent(int(*p.ProcessID))
	}
	return &initializeResult{
		Capabilities: serverCapabilities{
			PositionEncoding: enc.String(),
			TextDocumentSync: protocol.TextDocumentSyncOptions{
				OpenClose: true,
				Change:    protocol.TextDocumentSyncKindIncremental,
				Save:      &protocol.SaveOptions{IncludeText: false},
			},
			CodeActionProvider: codeActionOptions{
				CodeActionKinds: codeActionKinds(),
			},
			ExecuteCommandProvider: protocol.ExecuteCommandOptions{
				Commands: commandNames(),
			},
			Workspace: workspaceServerCapabilities{
				WorkspaceFolders: workspaceFoldersServerCapabilities{
					Supported:           true,
					ChangeNotifications: true,
				},
			},
		},
		ServerInfo: &protocol.ServerInfo{Name: "kimi-lsp", Version: s.opts.Version},
	}, nil
}

// initialFolders returns the workspace folders of initialize: the
// workspaceFolders, else rootUri, else rootPath. Malformed URIs are logged
// and skipped.
func initialFolders(p *initializeParams) []workspace.URI {
	var out []workspace.URI
	for _, f := range p.WorkspaceFolders {
		if u, err := workspace.ParseURI(f.URI); err == nil {
			out = append(out, u)
		}
	}
	if len(out) == 0 && p.RootURI != nil && *p.RootURI != "" {
		if u, err := workspace.ParseURI(*p.RootURI); err == nil {
			out = append(out, u)
		}
	}
	if len(out) == 0 && p.RootPath != nil && *p.RootPath != "" {
		out = append(out, workspace.FileURI(*p.RootPath))
	}
	return out
}

func handleInitialized(s *Server, ctx context.Context, _ json.RawMessage) error {
	return nil
}

func handleCancelRequest(s *Server, ctx context.Context, raw json.RawMessage) error {
	var p cancelParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	if !s.cancelRequest(p.ID) {
		s.log.Debug("$/cancelRequest for a request not running", "id", string(p.ID))
	}
	return nil
}

func handleDidChangeWorkspaceFolders(s *Server, ctx context.Context, raw json.RawMessage) error {
	var p didChangeWorkspaceFoldersParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range p.Event.Removed {
		if u, err := workspace.ParseURI(f.URI); err == nil {
			s.folders = slices.DeleteFunc(s.folders, func(x workspace.URI) bool { return x == u })
		}
	}
	for _, f := range p.Event.Added {
		if u, err := workspace.ParseURI(f.URI); err == nil && !slices.Contains(s.folders, u) {
			s.folders = append(s.folders, u)
		}
	}
	return nil
}

// rpcError is a shorthand for jsonrpc2.Errorf.
func rpcError(code jsonrpc2.Code, format string, args ...any) error {
	return jsonrpc2.Errorf(code, format, args...)
}
