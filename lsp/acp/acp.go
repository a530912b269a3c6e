// Package acp is kimi-lsp's Agent Client Protocol face (`kimi-lsp acp`):
// ACP version 1 over stdio, on github.com/coder/acp-go-sdk, beside the
// LSP face of its parent package. It is the only package that knows ACP;
// the agent itself is assist/agent, which it drives through plain Go
// types (agent.Client, agent.FS, agent.Terminals) and converts at the edge.
//
// What it answers: initialize (the capabilities it has: embedded context
// in prompts, session/close; no session loading, no MCP, no images;
// run_command where the client has terminals), session/new (the working
// directory must be a folder the user could open: absolute, an existing
// directory, not a filesystem root nor inside .git; its .kimi-lsp.toml is
// read under the workspace rules, and its trust is the user's
// trust.folders, as for the helpers), session/prompt (one turn),
// session/cancel (the SDK cancels the turn's context: the provider stream
// and every tool call end, the turn ends "cancelled"), session/set_mode
// ("code", "ask"), session/set_model and session/set_config_option
// ("model", "mode"), session/close.
//
// Where the SDK falls short, and what this package does instead (D89): it
// runs each request in a goroutine of its own without recovering a panic
// (a panic would end the process), so every handler here recovers and
// answers an internal error; nothing of it waits for those goroutines, so
// Serve counts the turns it runs and waits for them (bounded) before it
// closes the sessions; its SetLogger races with the reading goroutine
// NewAgentSideConnection starts, so Serve holds the input back until the
// logger is set; session/close does not cancel the session's turn, so
// CloseSession does; and its fs/write_text_file refuses an empty content,
// so an edit that empties a file lands through the confined writer.
package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/agent"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/jobs"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// ProtocolVersion is the ACP version spoken.
const ProtocolVersion = 1

// scanBound bounds the wait for a session folder's first scan (its file
// list is the session's pinned context).
const scanBound = 10 * time.Second

// Options configure Serve.
type Options struct {
	// Config returns the configuration of a session in the folder root:
	// the user's, with root's workspace file; and its problems.
	Config func(root string) (config.Config, []error)
	// Ledger records and budgets every request of every session.
	Ledger *provider.Ledger
	// Logger receives the log (never stdout).
	Logger *slog.Logger
	// Version is the agent's version in initialize.
	Version string
	// HTTPClient sends the model requests (nil: the model package's).
	HTTPClient *http.Client
	// VerifyEnv is added to the helper language servers' environment
	// (tests).
	VerifyEnv []string
	// ExplanationDir is the engines' directory for long texts ("": the
	// user cache directory's, assist.Options.ExplanationDir); StatsFile
	// receives the statistics after each turn ("": none).
	ExplanationDir, StatsFile string
}

// Serve speaks ACP on in and out until in ends or ctx is done, then ends
// the running turns (within jobs.DefaultCloseTimeout) and closes every
// session.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Config == nil {
		return errors.New("acp: Options.Config is required")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &server{opts: opts, log: opts.Logger, base: ctx, sessions: map[string]*session{}}
	// The connection's goroutines start reading at once, and SetLogger's
	// write races with their first log line: nothing is read until the
	// logger and a.conn are set.
	gate := &gatedReader{r: in, open: make(chan struct{})}
	conn := sdk.NewAgentSideConnection(a, out, gate)
	conn.SetLogger(opts.Logger)
	a.conn = conn
	close(gate.open)
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	cancel()
	a.wait(jobs.DefaultCloseTimeout)
	a.closeAll()
	return nil
}

// gatedReader is r, read from once open is closed.
type gatedReader struct {
	r    io.Reader
	open chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}

// server is the ACP agent: the connection, what initialize said, the
// sessions.
type server struct {
	opts Options
	log  *slog.Logger
	conn *sdk.AgentSideConnection
	// base is Serve's context: every turn ends with it.
	base context.Context
	// turns counts the turns running (Prompt); Serve waits for them.
	turns sync.WaitGroup

	// mu guards the fields below.
	mu       sync.Mutex
	caps     sdk.ClientCapabilities
	sessions map[string]*session
	next     int
	closed   bool
}

var _ sdk.Agent = (*server)(nil)

// session is one ACP session: the agent's, and what it was made of.
type session struct {
	id      string
	root    string
	agent   *agent.Session
	engine  *assist.Engine
	folders *workspace.Folders
	ledger  *provider.Ledger

	// mu guards turn, the running turn (nil: none).
	mu   sync.Mutex
	turn *turnStop
}

// turnStop ends one turn.
type turnStop struct{ stop context.CancelFunc }

// running makes t the running turn; the function it returns clears it,
// unless a newer turn took its place.
func (s *session) running(t *turnStop) (done func()) {
	s.mu.Lock()
	s.turn = t
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.turn == t {
			s.turn = nil
		}
		s.mu.Unlock()
	}
}

// cancel ends the running turn, if any.
func (s *session) cancel() {
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t != nil {
		t.stop()
	}
}

// wait waits for the running turns, at most bound.
func (a *server) wait(bound time.Duration) {
	done := make(chan struct{})
	go func() { a.turns.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(bound):
		a.log.Warn("turns still running at exit", "bound", bound)
	}
}

// closeAll closes every session: its helpers, its folder's watchers.
func (a *server) closeAll() {
	a.mu.Lock()
	a.closed = true
	list := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		list = append(list, s)
	}
	a.sessions = map[string]*session{}
	a.mu.Unlock()
	for _, s := range list {
		s.close()
	}
}

func (s *session) close() {
	s.cancel()
	s.agent.Close()
	_ = s.folders.Close()
}

// lookup returns the session id names.
func (a *server) lookup(id sdk.SessionId) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[string(id)]
	if !ok {
		return nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("no session %q", id)})
	}
	return s, nil
}

// guard turns a panic of a handler into an internal error reply (the SDK
// does not recover it: the process would end).
func (a *server) guard(method string, err *error) {
	if r := recover(); r != nil {
		*err = sdk.NewInternalError(map[string]any{"error": provider.Recovered(a.log, "the ACP handler "+method, r).Error()})
	}
}

// Initialize answers what the agent supports and keeps what the client
// offers (its file methods).
func (a *server) Initialize(_ context.Context, p sdk.InitializeRequest) (_ sdk.InitializeResponse, err error) {
	defer a.guard("initialize", &err)
	a.mu.Lock()
	a.caps = p.ClientCapabilities
	a.mu.Unlock()
	title := "Kimi (kimi-lsp)"
	return sdk.InitializeResponse{
		ProtocolVersion: ProtocolVersion,
		AgentInfo:       &sdk.Implementation{Name: "kimi-lsp", Title: &title, Version: a.opts.Version},
		AgentCapabilities: sdk.AgentCapabilities{
			PromptCapabilities:  sdk.PromptCapabilities{EmbeddedContext: true},
			SessionCapabilities: sdk.SessionCapabilities{Close: &sdk.SessionCloseCapabilities{}},
		},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate: the API key comes from the configuration; nothing to do.
func (a *server) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// CheckFolder returns dir, cleaned, if it is a folder the user could open
// as a workspace: an absolute path to an existing directory, not a
// filesystem root, not inside a .git directory (which no tool of ours
// reads or writes). It is the check of session/new's cwd.
func CheckFolder(dir string) (string, error) {
	if dir == "" || !filepath.IsAbs(dir) {
		return "", fmt.Errorf("the working directory %q is not an absolute path", dir)
	}
	dir = filepath.Clean(dir)
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("the working directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("the working directory %s is not a directory", dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("the working directory: %w", err)
	}
	if filepath.Dir(real) == real {
		return "", fmt.Errorf("the working directory %s is a filesystem root: open a project folder", dir)
	}
	for _, p := range []string{dir, real} {
		if slices.Contains(strings.Split(filepath.ToSlash(p), "/"), ".git") {
			return "", fmt.Errorf("the working directory %s is inside a .git directory: open the project folder", dir)
		}
	}
	return dir, nil
}
