package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/complete"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/jobs"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// RequestCancelled is LSP's error code for a request the client cancelled.
const RequestCancelled jsonrpc2.Code = -32800

// Options configure a Server.
type Options struct {
	// Version is reported in serverInfo.
	Version string
	// Logger receives the server's log; nil means slog.Default().
	Logger *slog.Logger
	// LogToEditor sends every record Logger enables to the editor as
	// window/logMessage (information as Info, debug as Log), not only
	// warnings and errors: for a command whose own log (stderr, which
	// editors show as errors) keeps errors only.
	LogToEditor bool
	// ParentPollInterval is how often the editor's process (initialize's
	// processId) is checked for life; 0 means 2 seconds.
	ParentPollInterval time.Duration
	// Config is the configuration from defaults, the user file and the
	// environment; the editor's settings and workspace files refine it.
	// The zero value means config.Default().
	Config config.Config
	// ConfigProblems are the problems found while building Config (the
	// user file, the environment). They are logged and shown to the editor
	// once it is ready, as a workspace file's problems are.
	ConfigProblems []error
	// OnConfig, if set, is called with every new effective configuration
	// (the command uses it to update the log redactor and level).
	OnConfig func(config.Config)
	// UserFile, if set, is the user configuration file Config was read
	// from (config.UserFilePath): the server watches it and applies what
	// it says from then on (userfile.go).
	UserFile string
	// Redact, if set, removes secrets from text sent to the editor.
	Redact func(string) string
	// HTTPClient, if set, carries the model requests (tests).
	HTTPClient *http.Client
	// ExplanationDir is where explanations are written; "" means the user
	// cache directory.
	ExplanationDir string
	// Ledger records every provider request and applies the budgets; nil
	// means the record in the state directory of the environment Getenv
	// reads (assist.OpenLedger, opened on first use, logging through the
	// server's logger).
	Ledger *provider.Ledger
	// Getenv looks up the environment variables the server reads (the
	// state directory); nil means os.Getenv.
	Getenv func(string) string
	// Replied, if set, is called once the initialize reply is written, on
	// the read loop (it must not block): the command starts catching
	// SIGINT and SIGTERM there, off the start-up path.
	Replied func()
	// ClientTimeout bounds a server→client request that needs no user
	// (registerCapability, workspace/configuration, …); 0 means
	// DefaultClientTimeout. Requests that wait for the user get
	// UserClientTimeout. Every one ends when the session ends.
	ClientTimeout time.Duration
}

// testKnobs are the places the tests of this package stall, break or
// shorten; they are no settings. NewServer leaves them zero; only the
// tests set them (export_test.go's newTestServer).
type testKnobs struct {
	// hook, if set, is called at fixed points ("request" with the method,
	// in a request's goroutine before its handler; "job" with the
	// *jobs.Job, in a job's goroutine; "progress" in a progress timer), so
	// that tests can stall or break those places.
	hook func(point string, arg any)
	// confirmWait bounds the wait for the editor's didChange of an applied
	// edit (0: workspace.DefaultConfirmWait); tests shorten it.
	confirmWait time.Duration
	// verifyEnv is added to the helper language servers' environment
	// (tests keep their caches in temporary directories); verifyStart
	// shortens their start bound.
	verifyEnv   []string
	verifyStart time.Duration
}

// hook calls testKnobs.hook.
func (s *Server) hook(point string, arg any) {
	if s.knobs.hook != nil {
		s.knobs.hook(point, arg)
	}
}

// requestFunc handles one request; it runs in its own goroutine.
type requestFunc func(s *Server, ctx context.Context, req *request) (any, error)

// request is one request as its handler gets it, besides its context.
type request struct {
	// params are the request's params as sent.
	params json.RawMessage
	// view is the open documents as they were when the request arrived,
	// taken on the read loop for the methods that read documents
	// (snapshotMethods); the zero view, no documents, for the others.
	view docView
	// key names the request to the jobs it starts (jobs.Spec.Request), so
	// that a $/cancelRequest of its id cancels them too: the id as
	// fmt.Sprintf("%q", id), the form cancelRequest looks them up by.
	key string
}

// notifyFunc handles one notification; it runs on the read loop, in order,
// and must not block.
type notifyFunc func(s *Server, ctx context.Context, params json.RawMessage) error

// Server is one LSP session over one connection. Its changing state is in
// parts, each owning its fields and lock and reached through its methods
// only (TestServerParts): the lifecycle (life, lifecycle.go), the client's
// session (client, client.go), the configuration (settings, config.go),
// the requests in flight (inflight, below), the forwarded log (logs,
// logging.go), the secret files (secrets, files.go), the numbering of the
// requests' document views (views, files.go), the recently closed files
// (recent, files.go), the session's goroutines (gos, goroutines.go) and
// the queue of slow state changes (serial, serial.go); the surfaces
// (surfaces, completion, nextEdit), the reviews and the diagnostics
// publisher own theirs. The other fields are set by NewServer and never
// change.
type Server struct {
	opts   Options
	knobs  testKnobs
	log    *slog.Logger
	stream *stream
	conn   jsonrpc2.Conn

	// requests and notifications are the method tables, copied per server so
	// tests can add methods.
	requests      map[string]requestFunc
	notifications map[string]notifyFunc

	docs      *workspace.Documents
	folders   *workspace.Folders
	engine    *assist.Engine
	ledger    *provider.Ledger
	ownLedger bool // made here: closed at the end
	jobs      *jobs.Engine
	lander    *assist.Lander
	recent    recentFiles
	// reviews are Kimi: Review's findings (see review.go).
	reviews reviews
	// diagnostics sends the kimi diagnostics of every surface, one list
	// per document (diagnostics.go).
	diagnostics diagnosticsPublisher
	// serial runs folder changes, configuration reloads and applies off
	// the read loop, in order (see serial).
	serial *serial

	// life is the session's state, its exit, the initialize reply and the
	// session's context (lifecycle.go).
	life lifecycle
	// client is what initialize said of the client: encoding,
	// capabilities, name (client.go).
	client clientSession
	// settings is the effective configuration, its updates and pulls, and
	// the problems told (config.go).
	settings settings
	// inflight are the cancel functions of the running requests.
	inflight inflightRequests
	// logs carries warnings to the editor (logging.go).
	logs logForwarding
	// secrets are isSecretURI's memo and the secret files the user was
	// told about (files.go).
	secrets secretFiles
	// gos owns the session's goroutines (spawn); Run waits for them.
	gos goroutines

	// surfaces are what the as-you-type surfaces (completion, next edits)
	// share: the model client, the pause and budget gate, the stream slots,
	// the streams' end with the session (assist/complete's Services).
	surfaces *complete.Services
	// completion answers inline completion requests (completion.go).
	completion *completionState
	// nextEdit proposes next edits (nextedit.go); their diagnostics go out
	// with the review's (diagnostics.go: one list per document).
	nextEdit *complete.NextEdits
	// views numbers the document views of requests (files.go).
	views docViews
}

// NewServer returns a server that will speak LSP over r and w once Run is
// called. c, if not nil, is closed when the session ends.
func NewServer(r io.Reader, w io.Writer, c io.Closer, opts Options) (*Server, error) {
	return newServer(r, w, c, opts, testKnobs{})
}

// newServer is NewServer with the tests' knobs (testKnobs): NewServer
// passes none, and the tests' newTestServer is its only other caller.
func newServer(r io.Reader, w io.Writer, c io.Closer, opts Options, knobs testKnobs) (*Server, error) {
	base := opts.Logger
	if base == nil {
		base = slog.Default()
	}
	logs, log := newLogForwarding(base.Handler(), opts.LogToEditor)
	if opts.ParentPollInterval == 0 {
		opts.ParentPollInterval = 2 * time.Second
	}
	cfg := opts.Config
	if cfg.BaseURL == "" {
		cfg = config.Default()
	}
	s := &Server{
		opts:          opts,
		knobs:         knobs,
		log:           log,
		logs:          logs,
		docs:          workspace.NewDocuments(),
		jobs:          jobs.New(jobs.Options{Limit: cfg.Jobs.MaxConcurrent, Logger: log}),
		requests:      make(map[string]requestFunc, len(requestTable)),
		notifications: make(map[string]notifyFunc, len(notificationTable)),
	}
	s.settings.init(cfg)
	s.life.init()
	s.docs.SetLogger(log)
	s.serial = newSerial(log)
	s.ledger = opts.Ledger
	if s.ledger == nil {
		getenv := opts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		s.ledger, s.ownLedger = assist.OpenLedger(getenv, cfg.Budget, log), true
	}
	s.ledger.OnWarn(func(msg string) { s.showMessage(s.life.context(), protocol.MessageTypeInfo, msg) })
	s.ledger.OnNotice(func(msg string) { s.showMessage(s.life.context(), protocol.MessageTypeWarning, msg) })
	engine, err := assist.NewEngine(assist.Options{
		Config: cfg, Logger: log, HTTPClient: opts.HTTPClient, ExplanationDir: opts.ExplanationDir,
		StatsFile: assist.DefaultStatsFile(), Gate: s.jobs, Ledger: s.ledger, Confirm: s.confirmSend,
		VerifyFolders: s.folderURIs, VerifyBuffers: s.docs.All, VerifyEnv: knobs.verifyEnv,
		VerifyBounds: assist.VerifyStartBound(knobs.verifyStart),
	})
	if err != nil {
		return nil, err
	}
	s.engine = engine
	s.reviews.changed = s.diagnostics.changed
	s.surfaces = complete.NewServices(complete.ServicesOptions{HTTPClient: s.opts.HTTPClient, Logger: s.log, Ledger: s.ledger, Context: s.life.context()})
	s.completion = newCompletionState(s)
	s.folders = workspace.NewFolders(assist.WorkspaceOptions(cfg), workspace.Hooks{
		Buffers:       buffers{s.docs},
		Logger:        log,
		SecretNotice:  s.secretNotice,
		WatchDegraded: s.watchDegraded,
		DiskChanged:   s.diskChanged,
	})
	s.lander = &assist.Lander{Queue: workspace.NewEditQueue(s.docs, s.folders, knobs.confirmWait), Folders: s.folders}
	s.nextEdit = newNextEdits(s)
	for k, v := range requestTable {
		s.requests[k] = v
	}
	for k, v := range notificationTable {
		s.notifications[k] = v
	}
	s.stream = newStream(r, w, c, log)
	s.conn = jsonrpc2.NewConn(s.stream)
	// Before initialized: queued, shown once the client is ready.
	s.reportConfigProblems(s.life.context(), "user configuration", opts.ConfigProblems)
	return s, nil
}

// folderURIs returns the workspace folders (the helper language servers
// get them when they start).
func (s *Server) folderURIs() []workspace.URI {
	fs := s.folders.List()
	out := make([]workspace.URI, len(fs))
	for i, f := range fs {
		out[i] = f.URI
	}
	return out
}

// Serve runs an LSP session on r/w until the client sends exit, the input
// ends or the editor process dies, and returns the process exit code: 0
// after shutdown+exit or end of input, 1 for exit without shutdown or when
// the editor died.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) int {
	s, err := NewServer(r, w, nil, opts)
	if err != nil {
		cmp.Or(opts.Logger, slog.Default()).Error("cannot start", "error", err)
		return 1
	}
	return s.Run(ctx)
}

// Run serves the connection and returns the exit code (see Serve).
func (s *Server) Run(ctx context.Context) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.log.Info("kimi-lsp starting", "version", s.opts.Version, "pid", os.Getpid())
	// Before the first message is read: a change made once the editor
	// has its initialize reply is seen (the watch itself starts after the
	// reply).
	userFile := s.watchUserFile()
	s.conn.Go(ctx, s.handle)
	s.spawn("forward logs", s.forwardLogs)
	s.spawn("send kimi diagnostics", func() { s.diagnosticsSender(s.life.context()) })
	select {
	case <-s.conn.Done():
		if err := s.conn.Err(); err != nil && !isEOF(err) {
			s.log.Error("connection failed", "error", err)
			s.life.finish(1)
		} else {
			s.log.Info("input closed; exiting")
			s.life.finish(0)
		}
	case <-s.life.exited():
	case <-ctx.Done():
		s.life.finish(1)
	}
	// Nothing below waits on the disk or the editor for long: requests to
	// the editor end with the session's context, the queued operation and
	// the scans stop at their next check.
	s.inflight.cancelAll()
	s.life.end() // before jobs.Close: a job's pending request to the editor ends now
	if userFile != nil {
		userFile.Close() // before serial.Close: it queues its reloads there
	}
	s.surfaces.Close() // the completion streams: hung up with the session's context, and waited for
	s.jobs.Close()
	s.engine.Close() // the helper language servers: ended, killed past 3.5 s, and waited for
	s.serial.Close()
	if s.ownLedger {
		s.ledger.Close()
	}
	if err := s.folders.Close(); err != nil {
		s.log.Debug("closing the workspace watcher", "error", err)
	}
	s.conn.Close()
	// Every goroutine of the session ends now: exited is closed, the
	// session's context and the requests are cancelled, the connection is
	// closed.
	s.waitGoroutines(sessionCloseWait)
	return s.life.code()
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed)
}

// handle is the jsonrpc2 handler. It runs on the connection's read loop:
// notifications are applied here, in order; each request is answered from
// its own goroutine so that no request waits for another. It always
// returns nil: an error would fail the connection (docs/protocol-pitfalls.md,
// "The library's async handler runs one request at a time" and "A handler
// error ends the connection").
func (s *Server) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	switch req := req.(type) {
	case *jsonrpc2.Notification:
		s.handleNotification(ctx, req)
	case *jsonrpc2.Call:
		s.handleCall(ctx, reply, req)
	}
	return nil
}

func (s *Server) handleNotification(ctx context.Context, n *jsonrpc2.Notification) {
	method := n.Method()
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic in notification handler", "method", method, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	state := s.life.state()
	if method == "exit" {
		if state == stateShutdown {
			s.life.finish(0)
		} else {
			s.life.finish(1)
		}
		return
	}
	if state == stateNew {
		s.log.Debug("notification before initialize dropped", "method", method)
		return
	}
	fn, ok := s.notifications[method]
	if !ok {
		s.log.Debug("unhandled notification", "method", method)
		return
	}
	if err := fn(s, ctx, json.RawMessage(n.Params())); err != nil {
		s.log.Warn("notification failed", "method", method, "error", err)
	}
}

func (s *Server) handleCall(ctx context.Context, reply jsonrpc2.Replier, call *jsonrpc2.Call) {
	method := call.Method()
	// Replies are sent on a context that cannot be cancelled: a reply to a
	// cancelled request must still be written (docs/protocol-pitfalls.md,
	// "A reply on a cancelled context is dropped").
	send := func(result any, err error) {
		if err != nil {
			var rpcErr *jsonrpc2.Error
			if !errors.As(err, &rpcErr) {
				// Plain errors would go out with code 0
				// (docs/protocol-pitfalls.md, "Plain errors go out with code 0").
				err = jsonrpc2.NewError(jsonrpc2.InternalError, err.Error())
			}
		}
		if werr := reply(context.WithoutCancel(ctx), result, err); werr != nil {
			s.log.Debug("reply not written", "method", method, "error", werr)
		}
	}
	state := s.life.state()
	switch {
	case method == "initialize":
		if state != stateNew {
			send(nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "initialize was already called"))
			return
		}
		// initialize runs on the read loop: nothing else may be processed
		// until the session's encoding and capabilities are known. Its
		// disk work (folders, workspace files) is queued (s.serial).
		result, err := s.safeCall(ctx, method, handleInitialize, &request{params: json.RawMessage(call.Params())})
		send(result, err)
		if err == nil {
			s.life.markReplied()
			if s.opts.Replied != nil {
				s.opts.Replied()
			}
			s.spawn("decode the client's capabilities", func() { s.clientCaps() }) // now, off the read loop, before a request needs them
		}
		return
	case state == stateNew:
		send(nil, jsonrpc2.Errorf(jsonrpc2.ServerNotInitialized, "%s: the server is not initialized", method))
		return
	case state == stateShutdown:
		send(nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "%s: the server is shutting down", method))
		return
	}
	fn, ok := s.requests[method]
	if !ok {
		send(nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %s", method))
		return
	}
	if method == "shutdown" {
		// Set before anything else is read, so later requests see it, and
		// stop the work in flight (model streams, jobs) before answering.
		s.life.setState(stateShutdown)
		s.inflight.cancelAll()
	}
	// The request sees what every notification before it changed: it waits
	// for the operations they queued (not shutdown, which must be prompt).
	mark := s.serial.Mark()
	if method == "shutdown" {
		mark = 0
	}
	id := call.ID()
	req := &request{params: json.RawMessage(call.Params()), key: fmt.Sprintf("%q", id)}
	if snapshotMethods[method] {
		// The documents as they are now, before any later didChange.
		req.view = s.takeView()
	}
	rctx, cancel := context.WithCancel(ctx)
	s.inflight.add(id, cancel)
	started := s.spawn("request "+method, func() {
		defer func() {
			s.inflight.remove(id)
			cancel()
		}()
		s.settle(rctx, mark)
		s.hook("request", method)
		result, err := s.safeCall(rctx, method, fn, req)
		if rctx.Err() != nil && ctx.Err() == nil && (err != nil || result == nil) {
			// Cancelled by $/cancelRequest and the handler gave up.
			send(nil, jsonrpc2.NewError(RequestCancelled, "request cancelled"))
			return
		}
		send(result, err)
	})
	if !started {
		s.inflight.remove(id)
		cancel()
		send(nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "%s: the server is shutting down", method))
	}
}

// safeCall runs a handler, turning a panic into an internal error reply.
func (s *Server) safeCall(ctx context.Context, method string, fn requestFunc, req *request) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic in request handler", "method", method, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error in %s: %v", method, r)
		}
	}()
	return fn(s, ctx, req)
}

// cancelRequest cancels the request with the given raw id, number or
// string, or the job that an already answered executeCommand request with
// that id started.
func (s *Server) cancelRequest(raw json.RawMessage) bool {
	id, ok := s.stream.lookupID(raw)
	if !ok {
		return false
	}
	ok = s.inflight.cancel(id)
	n := s.cancelByRequest(fmt.Sprintf("%q", id))
	return ok || n > 0
}

// inflightRequests are the cancel functions of the running requests, by
// id. It is safe for concurrent use.
type inflightRequests struct {
	// mu guards m.
	mu sync.Mutex
	m  map[jsonrpc2.ID]context.CancelFunc
}

// add records the cancel function of request id.
func (r *inflightRequests) add(id jsonrpc2.ID, cancel context.CancelFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[jsonrpc2.ID]context.CancelFunc)
	}
	r.m[id] = cancel
}

// remove forgets request id (it ended).
func (r *inflightRequests) remove(id jsonrpc2.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, id)
}

// cancel cancels request id; false if it is not running.
func (r *inflightRequests) cancel(id jsonrpc2.ID) bool {
	r.mu.Lock()
	cancel, ok := r.m[id]
	r.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

// cancelAll cancels every running request.
func (r *inflightRequests) cancelAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cancel := range r.m {
		cancel()
	}
}

// watchParent ends the session when the editor process dies.
func (s *Server) watchParent(pid int) {
	if pid <= 0 || pid == os.Getpid() {
		return
	}
	t := time.NewTicker(s.opts.ParentPollInterval)
	defer t.Stop()
	for {
		select {
		case <-s.life.exited():
			return
		case <-t.C:
			if !processAlive(pid) {
				s.log.Warn("editor process has exited; shutting down", "pid", pid)
				s.life.finish(1)
				return
			}
		}
	}
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// decodeParams decodes request params into v, or returns an InvalidParams
// error that names the method and the problem.
func decodeParams(method string, params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: missing params", method)
	}
	if err := json.Unmarshal(params, v); err != nil {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: invalid params: %v", method, err)
	}
	return nil
}

// notify sends a notification to the client; failures are logged at debug
// level only (the client may be gone).
func (s *Server) notify(ctx context.Context, method string, params any) {
	if err := s.conn.Notify(context.WithoutCancel(ctx), method, params); err != nil {
		s.log.Debug("notification not sent", "method", method, "error", err)
	}
}

// call sends a request to the client and decodes its result into result.
// It waits for the initialize reply to be written first (LSP forbids
// requests before it), and gives up when ctx is done, when the session ends
// or after the method's timeout (see clientTimeout): an editor that never
// answers holds nothing.
func (s *Server) call(ctx context.Context, method string, params, result any) error {
	ctx, cancel := context.WithTimeout(ctx, s.clientTimeout(method))
	defer cancel()
	stop := context.AfterFunc(s.life.context(), cancel)
	defer stop()
	select {
	case <-s.life.repliedCh():
	case <-ctx.Done():
		return fmt.Errorf("%s: not sent before the initialize reply: %w", method, ctx.Err())
	}
	if _, err := s.conn.Call(ctx, method, params, result); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// encoding returns the negotiated position encoding.
func (s *Server) encoding() workspace.Encoding {
	return s.client.encoding()
}

// clientCaps returns the client's capabilities (none before initialize).
// They are decoded on first use; Run's goroutine does it after the
// initialize reply.
func (s *Server) clientCaps() clientCapabilities {
	return s.client.capabilities(s.log)
}
