package lsp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// lifecycle states of a connection.
const (
	stateNew int32 = iota
	stateInitialized
	stateShutdown
)

// lifecycle is the session's life: its state (stateNew, stateInitialized,
// stateShutdown), its exit and exit code, the initialize reply and the
// session's context. It is safe for concurrent use; init makes it ready.
type lifecycle struct {
	st       atomic.Int32
	exitCode atomic.Int32
	exit     chan struct{} // closed on exit, EOF or parent death
	exitOnce sync.Once
	// replied is closed once the initialize reply is written: no
	// server→client request goes out before it.
	replied     chan struct{}
	repliedOnce sync.Once
	// ctx is the session's context, the parent of every job, stream and
	// server→client request; cancelled when the session ends (exit, end
	// of input, editor gone).
	ctx    context.Context
	cancel context.CancelFunc
}

// init makes the channels and the session's context.
func (l *lifecycle) init() {
	l.exit = make(chan struct{})
	l.replied = make(chan struct{})
	l.ctx, l.cancel = context.WithCancel(context.Background())
}

// state is the session's state.
func (l *lifecycle) state() int32 { return l.st.Load() }

// setState moves the session to state st.
func (l *lifecycle) setState(st int32) { l.st.Store(st) }

// finish records the exit code (the first caller wins) and ends Run.
func (l *lifecycle) finish(code int) {
	l.exitOnce.Do(func() {
		l.exitCode.Store(int32(code))
		close(l.exit)
	})
}

// exited is closed once finish was called.
func (l *lifecycle) exited() <-chan struct{} { return l.exit }

// code is the exit code finish recorded.
func (l *lifecycle) code() int { return int(l.exitCode.Load()) }

// markReplied records that the initialize reply is written.
func (l *lifecycle) markReplied() { l.repliedOnce.Do(func() { close(l.replied) }) }

// repliedCh is closed once the initialize reply is written.
func (l *lifecycle) repliedCh() <-chan struct{} { return l.replied }

// context is the session's context; end cancels it.
func (l *lifecycle) context() context.Context { return l.ctx }

// end cancels the session's context.
func (l *lifecycle) end() { l.cancel() }

// requestTable maps request methods to handlers. "initialize" is handled
// by handleCall itself (it runs on the read loop).
var requestTable = map[string]requestFunc{
	"shutdown": func(s *Server, ctx context.Context, _ *request) (any, error) {
		s.log.Info("shutdown requested")
		// Cancel every job and wait (bounded) for their ends to be sent.
		s.jobs.Close()
		return nil, nil
	},
	"textDocument/codeAction":  handleCodeAction,
	"textDocument/diagnostic":  handleDocumentDiagnostic,
	"workspace/executeCommand": handleExecuteCommand,
	methodInlineCompletion:     handleInlineCompletion,
	methodCompletion:           handleCompletion,
	methodCopilotInlineEdit:    handleCopilotInlineEdit,
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
	"textDocument/willSave":               handleWillSave,
	"workspace/didChangeWorkspaceFolders": handleDidChangeWorkspaceFolders,
	"workspace/didChangeConfiguration":    handleDidChangeConfiguration,
	"workspace/didChangeWatchedFiles":     handleDidChangeWatchedFiles,
	"window/workDoneProgress/cancel":      handleWorkDoneProgressCancel,
	methodDidShowInlineEdit:               handleDidShowInlineEdit,
	// Commands sent as notifications (copilot.go).
	"workspace/executeCommand": handleExecuteCommandNotification,
}

func handleInitialize(s *Server, ctx context.Context, req *request) (any, error) {
	var p initializeParams
	if err := decodeParams("initialize", req.params, &p); err != nil {
		return nil, err
	}
	var pe initializeCaps
	if len(p.Capabilities) > 0 {
		if err := json.Unmarshal(p.Capabilities, &pe); err != nil {
			return nil, rpcError(jsonrpc2.InvalidParams, "initialize: invalid capabilities: %v", err)
		}
	}
	enc := negotiateEncoding(pe.General.PositionEncodings)
	folders := initialFolders(&p)

	var client clientInfo
	if p.ClientInfo != nil {
		client = *p.ClientInfo
	}
	s.client.set(enc, p.Capabilities, client)

	initOpts := p.InitializationOptions
	result := &initializeResult{
		Capabilities: serverCapabilities{
			PositionEncoding: enc.String(),
			TextDocumentSync: protocol.TextDocumentSyncOptions{
				OpenClose: true,
				Change:    protocol.TextDocumentSyncKindIncremental,
				// willSave marks a save's changes (a format on save) as no
				// typing for next edits; willSaveWaitUntil is not asked
				// for: an editor would wait for us at every save.
				WillSave: true,
				Save:     &protocol.SaveOptions{IncludeText: false},
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
	// What completion advertises depends on the client's inline completion
	// and on completion.items, which initializationOptions may set: a
	// preview of the configuration with them (parsing only; it is applied,
	// with the workspace files, on s.serial).
	cfg := s.config()
	if len(initOpts) > 0 && string(initOpts) != "null" && mayNameItems(initOpts) {
		cfg, _ = cfg.WithInitOptions(initOpts)
	}
	if pe.TextDocument.Diagnostic != nil && pe.Workspace.Diagnostics != nil && pe.Workspace.Diagnostics.RefreshSupport {
		// Only a client that can be told to pull again (pullsDiagnostics).
		result.Capabilities.DiagnosticProvider = &diagnosticOptions{Identifier: reviewSource}
	}
	var caps clientCapabilities
	caps.TextDocument.InlineCompletion = pe.TextDocument.InlineCompletion
	s.completionCapabilities(&result.Capabilities, caps, cfg)

	// state before the queued work: a configuration it applies may change
	// what completion registered (completionConfigChanged).
	s.life.setState(stateInitialized)
	// The settings, workspace files and folders are read off the read loop,
	// after the reply; requests wait for them (handleCall).
	s.serial.Do("initialize the workspace", func(ctx context.Context) {
		// Not before the reply is written: nothing here is needed for it,
		// and on two cores this work (the settings, the client's
		// capabilities decoded in full, the first scan) delayed it.
		select {
		case <-s.life.repliedCh():
		case <-ctx.Done():
			return
		}
		if len(initOpts) > 0 && string(initOpts) != "null" {
			s.updateConfig(ctx, "initializationOptions", func(c config.Config) (config.Config, []error) {
				return c.WithInitOptions(initOpts)
			})
		}
		// Workspace files before the folders: their excludes apply to the
		// first scan instead of restarting it.
		var files []string
		for _, f := range folders {
			if p, err := f.uri.Path(); err == nil {
				files = append(files, config.WorkspaceFile(p))
			}
		}
		s.loadWorkspaceFiles(ctx, files)
		for _, f := range folders {
			if err := s.folders.Add(f.uri, f.name); err != nil {
				s.log.Warn("workspace folder ignored", "folder", f.uri, "error", err)
			}
		}
	})

	s.log.Info("initialized", "client", client.Name, "clientVersion", client.Version,
		"positionEncoding", enc.String(), "folders", len(folders))
	if p.ProcessID != nil {
		pid := int(*p.ProcessID)
		s.spawn("watch the editor's process", func() { s.watchParent(pid) })
	}
	// Encoded here by encoding/json, not by jsonrpc2's codec (segmentio),
	// which would build its encoders for these types on this first reply.
	data, err := json.Marshal(result)
	return json.RawMessage(data), err
}

// mayNameItems reports whether the JSON raw may hold a key "items", the
// last part of completion.items, the one setting the initialize reply
// depends on: when it cannot, the preview of the configuration with the
// initializationOptions (their parsing, with a suggestion for each unknown
// key) would change nothing in the reply, and the reply is written without
// it. A key can only be "items" if those letters occur in raw, or if an
// escape (\u0069tems) writes them.
func mayNameItems(raw json.RawMessage) bool {
	return bytes.Contains(raw, []byte("items")) || bytes.IndexByte(raw, '\\') >= 0
}

// negotiateEncoding picks the position encoding of the session from the
// client's offer (general.positionEncodings, most preferred first): UTF-16
// whenever it is offered, or nothing is (LSP's default, which every client
// must support and gopls, pyright, typescript-language-server and
// rust-analyzer answer), so that kimi-lsp shares a buffer's encoding with
// the other servers attached to it (Neovim 0.12's :checkhealth warns when
// they differ); UTF-8 only for a client that offers UTF-8 but not UTF-16
// (D87).
func negotiateEncoding(offered []string) workspace.Encoding {
	if len(offered) == 0 || slices.Contains(offered, "utf-16") || !slices.Contains(offered, "utf-8") {
		return workspace.UTF16
	}
	return workspace.UTF8
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

// reloadWorkspaceConfig queues a reload of the workspace configuration
// files (see loadWorkspaceConfig).
func (s *Server) reloadWorkspaceConfig() {
	s.serial.Do("reload .kimi-lsp.toml", s.loadWorkspaceConfig)
}

// loadWorkspaceConfig reads the workspace configuration file of every
// folder (it may tune actions and context, never apiKey or baseURL). It
// reads the disk: it runs on s.serial, never on the read loop.
func (s *Server) loadWorkspaceConfig(ctx context.Context) {
	var paths []string
	for _, f := range s.folders.List() {
		paths = append(paths, config.WorkspaceFile(f.Path))
	}
	s.loadWorkspaceFiles(ctx, paths)
}

func (s *Server) loadWorkspaceFiles(ctx context.Context, paths []string) {
	s.updateConfig(ctx, "workspace configuration files", func(c config.Config) (config.Config, []error) {
		return c.WithWorkspaceFiles(paths...)
	})
}

func handleInitialized(s *Server, ctx context.Context, _ json.RawMessage) error {
	nctx := context.WithoutCancel(ctx)
	s.spawn("show the configuration problems", func() { s.showPendingProblems(nctx) })
	s.pullConfig()
	return nil
}

// settleTimeout bounds how long a request waits for the operations queued
// before it (s.serial): past it, the request runs on the state at hand
// rather than hang on a slow disk.
const settleTimeout = time.Second

// settle waits until the operations queued before the request arrived
// (mark, see serial.Mark) are done, at most settleTimeout.
func (s *Server) settle(ctx context.Context, mark uint64) {
	if mark == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	if err := s.serial.Wait(ctx, mark); err != nil {
		s.log.Debug("request runs before the workspace caught up", "error", err)
	}
}

// Timeouts of server→client requests (Options.ClientTimeout).
const (
	// DefaultClientTimeout bounds a request the editor answers by itself.
	DefaultClientTimeout = 30 * time.Second
	// UserClientTimeout bounds a request that may wait for the user: a
	// question (showMessageRequest) or an edit the editor may ask about.
	UserClientTimeout = 10 * time.Minute
)

// clientTimeout returns how long a server→client request of method may
// take.
func (s *Server) clientTimeout(method string) time.Duration {
	switch method {
	case "window/showMessageRequest", "workspace/applyEdit":
		return UserClientTimeout
	}
	return cmp.Or(s.opts.ClientTimeout, DefaultClientTimeout)
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

// handleDidChangeWorkspaceFolders queues the change: adding a folder reads
// the disk, and a removed folder's scan is stopped in the background; the
// verification helpers get the change (assist.Engine.FoldersChanged).
func handleDidChangeWorkspaceFolders(s *Server, ctx context.Context, raw json.RawMessage) error {
	var p didChangeWorkspaceFoldersParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	s.serial.Do("workspace folders changed", func(ctx context.Context) {
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
		// The helper language servers learn the folders at their next
		// operation; those that cannot be told are stopped now.
		s.engine.FoldersChanged()
		s.loadWorkspaceConfig(ctx)
	})
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
	var p didChangeWatchedFilesParams
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
	s.serial.Do("watched files changed", func(ctx context.Context) {
		s.folders.DidChangeWatchedFiles(uris)
		if reload {
			s.loadWorkspaceConfig(ctx)
		}
	})
	return nil
}

// secretNotice tells the user, once, that a secrets file was kept out of a
// prompt.
func (s *Server) secretNotice(path string) {
	s.notify(s.life.context(), "window/showMessage", &protocol.ShowMessageParams{
		Type:    protocol.MessageTypeInfo,
		Message: "kimi-lsp: " + path + " looks like a secrets file (.env, keys, credentials); such files are never sent to the model.",
	})
}

// watchDegraded is called from inside a folder's scan when the inotify
// watch limit is reached, and returns at once: with a client that can
// watch files, it promises to register workspace/didChangeWatchedFiles for
// the folder (registerWatching, on its own goroutine) so the client's
// events keep the view fresh; else the workspace package rescans
// periodically.
func (s *Server) watchDegraded(folder workspace.Folder, err error) bool {
	caps := s.clientCaps()
	clientWatches := caps.Workspace.DidChangeWatchedFiles != nil && caps.Workspace.DidChangeWatchedFiles.DynamicRegistration
	s.spawn("register file watching", func() { s.registerWatching(folder, err, clientWatches) })
	return clientWatches
}

// registerWatching asks the client to watch the folder's files (when
// clientWatches) and tells the user; if the client refuses or never
// answers, the folder falls back to periodic rescans.
func (s *Server) registerWatching(folder workspace.Folder, cause error, clientWatches bool) {
	msg := "kimi-lsp: the system's limit of file watches is reached (" + cause.Error() + "); "
	if clientWatches {
		params := &registrationParams{Registrations: []registration{{
			ID:     "kimi-watch-" + folder.Name,
			Method: "workspace/didChangeWatchedFiles",
			RegisterOptions: didChangeWatchedFilesRegistrationOptions{Watchers: []fileSystemWatcher{{
				GlobPattern: relativePattern{BaseURI: string(folder.URI), Pattern: "**/*"},
			}}},
		}}}
		if err := s.call(s.life.context(), "client/registerCapability", params, nil); err != nil {
			if s.life.context().Err() != nil {
				return // the session ended
			}
			s.log.Warn("could not register file watching with the editor", "error", err)
			s.folders.FallBackToPolling(folder.URI)
			clientWatches = false
		}
	}
	if clientWatches {
		msg += "the editor now reports file changes in " + folder.Name + "."
	} else {
		msg += "files in " + folder.Name + " are rescanned periodically instead. Raise fs.inotify.max_user_watches to fix this."
	}
	s.log.Warn(msg)
	s.notify(s.life.context(), "window/showMessage", &protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: msg})
}

// rpcError is a shorthand for jsonrpc2.Errorf.
func rpcError(code jsonrpc2.Code, format string, args ...any) error {
	return jsonrpc2.Errorf(code, format, args...)
}
