package lsp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// requestTable maps request methods to handlers. "initialize" is handled
// by handleCall itself (it runs on the read loop).
var requestTable = map[string]requestFunc{
	"shutdown": func(s *Server, ctx context.Context, _ json.RawMessage) (any, error) {
		s.log.Info("shutdown requested")
		// Cancel every job and wait (bounded) for their ends to be sent.
		s.jobs.Close()
		return nil, nil
	},
	"textDocument/codeAction":  handleCodeAction,
	"workspace/executeCommand": handleExecuteCommand,
	methodInlineCompletion:     handleInlineCompletion,
	methodCompletion:           handleCompletion,
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
	"workspace/didChangeConfiguration":    handleDidChangeConfiguration,
	"workspace/didChangeWatchedFiles":     handleDidChangeWatchedFiles,
	"window/workDoneProgress/cancel":      handleWorkDoneProgressCancel,
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
	s.mu.Unlock()

	for _, f := range folders {
		if err := s.folders.Add(f.uri, f.name); err != nil {
			s.log.Warn("workspace folder ignored", "folder", f.uri, "error", err)
		}
	}
	if len(p.InitializationOptions) > 0 && string(p.InitializationOptions) != "null" {
		s.updateConfig(ctx, "initializationOptions", func(c config.Config) (config.Config, []error) {
			return c.WithInitOptions(p.InitializationOptions)
		})
	}
	s.loadWorkspaceConfig(ctx)

	s.state.Store(stateInitialized)
	s.log.Info("initialized", "client", s.client.Name, "clientVersion", s.client.Version,
		"positionEncoding", enc.String(), "folders", len(folders))
	if p.ProcessID != nil {
		go s.watchParent(int(*p.ProcessID))
	}
	result := &initializeResult{
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
	}
	s.completionCapabilities(&result.Capabilities, p.Capabilities)
	return result, nil
}

type folderRef struct {
	uri  workspace.URI
	name string
}

// initialFolders returns the workspace folders of initialize: the
// workspaceFolders, else rootUri, else rootPath. Malformed URIs are skipped.
func initialFolders(p *initializeParams) []folderRef {
	var out []folderRef
	for _, f := range p.WorkspaceFolders {
		if u, err := workspace.ParseURI(f.URI); err == nil {
			out = append(out, folderRef{u, f.Name})
		}
	}
	if len(out) == 0 && p.RootURI != nil && *p.RootURI != "" {
		if u, err := workspace.ParseURI(*p.RootURI); err == nil {
			out = append(out, folderRef{uri: u})
		}
	}
	if len(out) == 0 && p.RootPath != nil && *p.RootPath != "" {
		out = append(out, folderRef{uri: workspace.FileURI(*p.RootPath)})
	}
	return out
}

// loadWorkspaceConfig reads the workspace configuration file of every
// folder (it may tune actions and context, never apiKey or baseURL).
func (s *Server) loadWorkspaceConfig(ctx context.Context) {
	var paths []string
	for _, f := range s.folders.List() {
		paths = append(paths, config.WorkspaceFile(f.Path))
	}
	s.updateConfig(ctx, "workspace configuration files", func(c config.Config) (config.Config, []error) {
		return c.WithWorkspaceFiles(paths...)
	})
}

func handleInitialized(s *Server, ctx context.Context, _ json.RawMessage) error {
	s.showPendingProblems(ctx)
	go s.pullConfig(context.WithoutCancel(ctx))
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
	for _, f := range p.Event.Removed {
		if u, err := workspace.ParseURI(f.URI); err == nil {
			s.folders.Remove(u)
		}
	}
	for _, f := range p.Event.Added {
		u, err := workspace.ParseURI(f.URI)
		if err != nil {
			s.log.Warn("workspace folder ignored", "folder", f.URI, "error", err)
			continue
		}
		if err := s.folders.Add(u, f.Name); err != nil {
			s.log.Warn("workspace folder ignored", "folder", f.URI, "error", err)
		}
	}
	s.loadWorkspaceConfig(ctx)
	return nil
}

// handleWorkDoneProgressCancel cancels the job the progress belongs to.
func handleWorkDoneProgressCancel(s *Server, ctx context.Context, raw json.RawMessage) error {
	var p progressTokenParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	if s.cancelByToken(p.Token) == 0 {
		s.log.Debug("progress cancel for no running job", "token", string(p.Token))
	}
	return nil
}

func handleDidChangeWatchedFiles(s *Server, ctx context.Context, raw json.RawMessage) error {
	var p struct {
		Changes []struct {
			URI string `json:"uri"`
		} `json:"changes"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	uris := make([]workspace.URI, 0, len(p.Changes))
	reload := false
	for _, c := range p.Changes {
		if u, err := workspace.ParseURI(c.URI); err == nil {
			uris = append(uris, u)
			if path, err := u.Path(); err == nil && filepath.Base(path) == config.WorkspaceFileName {
				reload = true
			}
		}
	}
	s.folders.DidChangeWatchedFiles(uris)
	if reload {
		s.loadWorkspaceConfig(ctx)
	}
	return nil
}

// secretNotice tells the user, once, that a secrets file was kept out of a
// prompt.
func (s *Server) secretNotice(path string) {
	s.notify(context.Background(), "window/showMessage", &protocol.ShowMessageParams{
		Type:    protocol.MessageTypeInfo,
		Message: "kimi-lsp: " + path + " looks like a secrets file (.env, keys, credentials); such files are never sent to the model.",
	})
}

// watchDegraded is called when the inotify watch limit is reached: with a
// client that can watch files, register workspace/didChangeWatchedFiles
// for the folder and let the client's events keep the view fresh; else the
// workspace package rescans periodically.
func (s *Server) watchDegraded(folder workspace.Folder, err error) bool {
	msg := "kimi-lsp: the system's limit of file watches is reached (" + err.Error() + "); "
	caps := s.clientCaps()
	clientWatches := caps.Workspace.DidChangeWatchedFiles != nil && caps.Workspace.DidChangeWatchedFiles.DynamicRegistration
	if clientWatches {
		params := map[string]any{"registrations": []any{map[string]any{
			"id":     "kimi-watch-" + folder.Name,
			"method": "workspace/didChangeWatchedFiles",
			"registerOptions": map[string]any{"watchers": []any{map[string]any{
				"globPattern": map[string]any{"baseUri": string(folder.URI), "pattern": "**/*"},
			}}},
		}}}
		if err := s.call(context.Background(), "client/registerCapability", params, nil); err != nil {
			s.log.Warn("could not register file watching with the editor", "error", err)
			clientWatches = false
		}
	}
	if clientWatches {
		msg += "the editor now reports file changes in " + folder.Name + "."
	} else {
		msg += "files in " + folder.Name + " are rescanned periodically instead. Raise fs.inotify.max_user_watches to fix this."
	}
	s.log.Warn(msg)
	s.notify(context.Background(), "window/showMessage", &protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: msg})
	return clientWatches
}

// rpcError is a shorthand for jsonrpc2.Errorf.
func rpcError(code jsonrpc2.Code, format string, args ...any) error {
	return jsonrpc2.Errorf(code, format, args...)
}
