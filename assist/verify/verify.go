package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// The bounds on every wait of a check (see the package doc for how they
// were chosen).
const (
	// StartTimeout bounds starting a helper and its initialize reply.
	StartTimeout = 15 * time.Second
	// ColdTimeout bounds a helper's first diagnostics after it started:
	// it loads the workspace (gopls its packages, pyright the builtins)
	// before it answers.
	ColdTimeout = 20 * time.Second
	// DiagTimeout bounds each later diagnostics wait.
	DiagTimeout = 5 * time.Second
	// RetryAfter is how long a command that failed (did not start, did
	// not answer, crashed) is not started again; checks meanwhile end at
	// once, unverified, saying why.
	RetryAfter = time.Minute
	// DefaultIdle is how long a helper lives without use.
	DefaultIdle = 10 * time.Minute
)

// Command is a helper's command line: the program and its arguments.
type Command []string

// DefaultServers is the command table by LSP language identifier: each
// language's alternatives, the first found on PATH is used. Languages
// that name the same command share one helper.
var DefaultServers = map[string][]Command{
	"go":              {{"gopls"}},
	"python":          {{"pyright-langserver", "--stdio"}, {"basedpyright-langserver", "--stdio"}},
	"javascript":      {{"typescript-language-server", "--stdio"}},
	"javascriptreact": {{"typescript-language-server", "--stdio"}},
	"typescript":      {{"typescript-language-server", "--stdio"}},
	"typescriptreact": {{"typescript-language-server", "--stdio"}},
	"rust":            {{"rust-analyzer"}},
	"c":               {{"clangd"}},
	"cpp":             {{"clangd"}},
}

// Options configure a Verifier.
type Options struct {
	// Servers overrides DefaultServers per language: a language mapped to
	// an empty command is not verified.
	Servers map[string]Command
	// Folders returns the workspace folders now: a helper gets them when
	// it starts, and their changes at its next operation (FoldersChanged);
	// nil means none.
	Folders func() []workspace.URI
	// Buffers returns the editor's open documents, which the helpers
	// mirror; nil means none.
	Buffers func() []*workspace.Snapshot
	// Idle is how long a helper lives without use; 0 means DefaultIdle.
	Idle time.Duration
	// Env is added to the helpers' environment, after the allow-listed
	// part of ours (allowedEnv) and before a profile's own variables
	// (GOTOOLCHAIN=local, an untrusted folder's empty RUSTC_WRAPPER),
	// which win; its PATH, when it has one, is cleaned as ours is.
	Env []string
	// Trusted reports whether the user trusts the folders a helper will
	// run in (the workspace folders it gets). nil, or no folders, means
	// untrusted: the helper then starts restricted, so that it runs none
	// of the workspace's code its profile knows of (the package doc,
	// "Trust"). It is asked at each operation; TrustChanged stops the
	// helpers whose trust no longer holds.
	Trusted func(folders []workspace.URI) bool
	// Logger receives the helpers' stderr and messages (at debug level);
	// nil means none.
	Logger *slog.Logger
	// Bounds overrides the default bounds (StartTimeout, ColdTimeout,
	// DiagTimeout, RetryAfter) where its fields are set; tests shorten
	// them.
	Bounds Bounds
}

// Bounds are the bounds on a check's waits.
type Bounds struct {
	Start, Cold, Diag, Retry time.Duration
	// Definition bounds Definitions (DefinitionTimeout).
	Definition time.Duration
}

// File is one file of an edit: its URI and its whole text.
type File struct {
	URI  workspace.URI
	Text string
}

// Error is a new error an edit brought.
type Error struct {
	URI     workspace.URI
	Line    int // zero-based
	Message string
}

// String is "name.go:4: message", with a one-based line.
func (e Error) String() string {
	return fmt.Sprintf("%s:%d: %s", baseName(e.URI), e.Line+1, e.Message)
}

// Result is the outcome of a check.
type Result struct {
	// Helpers names the helpers that checked the edit ("gopls").
	Helpers []string
	// Verified reports that every file with a helper was checked.
	Verified bool
	// Reason says why the edit is not verified ("no gopls found",
	// "gopls did not answer within 5s").
	Reason string
	// NewErrors are the errors the edit brought, in file order: those
	// the Helpers found, also when another helper could not check its
	// files (Verified false: an edit of a Go and a Python file without
	// pyright still brings the errors gopls found).
	NewErrors []Error
	// None reports that no file of the edit is in a language with a
	// helper: nothing is said about verification then.
	None bool
	// Restricted reports that a helper that checked ran restricted in an
	// untrusted folder in a way that narrows what it sees (pyright
	// without the workspace's environment); Restriction says how
	// ("without the workspace's environment", or with several helpers
	// "pyright without …; clangd without …").
	Restricted  bool
	Restriction string
}

// Line is the result in one line: "verified by gopls: no new errors",
// "verified by gopls: 1 new error: undefined: x", "not verified (no gopls
// found)", or "" when no file had a helper. A check that some helpers
// made and others could not says both: "verified by gopls: no new
// errors; not verified (no pyright-langserver … found)". A restricted
// check says so after the helpers: "verified by pyright (untrusted
// folder: without the workspace's environment): no new errors".
func (r Result) Line() string {
	switch {
	case r.None:
		return ""
	case !r.Verified && len(r.Helpers) == 0:
		return "not verified (" + r.Reason + ")"
	}
	return r.By() + r.ErrorSummary() + r.Unverified()
}

// By is the start of Line for a check some helpers made: "verified by
// gopls: ", "verified by pyright (untrusted folder: without the
// workspace's environment): ".
func (r Result) By() string {
	by := "verified by " + strings.Join(r.Helpers, ", ")
	if r.Restricted {
		by += " (untrusted folder: " + r.Restriction + ")"
	}
	return by + ": "
}

// Unverified is "; not verified (reason)" for a check that some helpers
// made and others could not, else "".
func (r Result) Unverified() string {
	if r.Verified || r.None || len(r.Helpers) == 0 {
		return ""
	}
	return "; not verified (" + r.Reason + ")"
}

// ErrorSummary is "1 new error: undefined: x" or "3 new errors: a; b; …".
func (r Result) ErrorSummary() string {
	n := len(r.NewErrors)
	if n == 0 {
		return "no new errors"
	}
	noun := "new errors"
	if n == 1 {
		noun = "new error"
	}
	msgs := make([]string, 0, min(n, 3))
	for _, e := range r.NewErrors[:min(n, 3)] {
		msgs = append(msgs, firstLine(e.Message))
	}
	s := fmt.Sprintf("%d %s: %s", n, noun, strings.Join(msgs, "; "))
	if n > 3 {
		s += "; …"
	}
	return s
}

// Diagnostic is a helper's diagnostic of a document, in byte offsets of
// the text it was computed on.
type Diagnostic struct {
	URI        workspace.URI
	Start, End int // byte offsets
	Line       int // zero-based line of Start
	Severity   int // LSP DiagnosticSeverity; 0 when the helper sent none
	Source     string
	Message    string
}

// Verifier runs the helpers and checks edits with them. It is safe for
// concurrent use; checks on one helper run one at a time.
type Verifier struct {
	opts Options
	log  *slog.Logger

	// testHook, when set, runs between a check's before and after
	// diagnostics (tests kill or stop the helper there).
	testHook func(h *helper)
	// goHook, when set, runs first in every goroutine spawn starts, with
	// what it does (tests panic there).
	goHook func(what string)

	// base is cancelled by Close: it ends helper starts under way.
	base     context.Context
	stopBase context.CancelFunc

	// bg counts the goroutines the Verifier starts (spawn): helper starts,
	// retirements, shutdowns, warm-ups. Close waits for them.
	bg sync.WaitGroup

	// mu guards the fields below it.
	mu      sync.Mutex
	helpers map[string]*slot // by command line
	// procs are the helpers started whose process may still run: Close
	// kills and waits for those still there.
	procs  map[*helper]struct{}
	closed bool
}

// slot is one command's helper and its state between runs.
type slot struct {
	// start guards the fields below.
	start sync.Mutex
	h     *helper // nil when not running
	// pending is closed when the start under way ends (nil when none).
	pending chan struct{}
	failed  time.Time
	reason  string
	idle    *time.Timer
}

// take removes the running helper from the slot and stops its idle timer;
// it returns the helper (nil when none ran). Precondition: s.start is held.
func (s *slot) take() *helper {
	h := s.h
	s.h = nil
	if s.idle != nil {
		s.idle.Stop()
	}
	return h
}

// New returns a Verifier; no helper runs until the first check.
func New(opts Options) *Verifier {
	if opts.Idle <= 0 {
		opts.Idle = DefaultIdle
	}
	b := &opts.Bounds
	b.Start = cmp.Or(b.Start, StartTimeout)
	b.Cold = cmp.Or(b.Cold, ColdTimeout)
	b.Diag = cmp.Or(b.Diag, DiagTimeout)
	b.Retry = cmp.Or(b.Retry, RetryAfter)
	b.Definition = cmp.Or(b.Definition, DefinitionTimeout)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	base, stop := context.WithCancel(context.Background())
	return &Verifier{opts: opts, log: log, helpers: map[string]*slot{}, procs: map[*helper]struct{}{}, base: base, stopBase: stop}
}

// commandFor returns the command for a language: the configured one, or
// the first default found on PATH. missing names what was looked for
// when none is found; lang without a helper returns nil and "".
func (v *Verifier) commandFor(lang string) (argv Command, path, missing string) {
	// The helper is found on the PATH it will run with: never a program
	// of the workspace's own (cleanPath).
	return v.commandOn(lang, v.helperPath())
}

// commandOn is commandFor on the PATH list list (v.helperPath's).
func (v *Verifier) commandOn(lang, list string) (argv Command, path, missing string) {
	v.mu.Lock()
	cands, _ := candidates(v.opts.Servers, lang)
	v.mu.Unlock()
	return findCommand(cands, list)
}

// candidates are the commands that may check lang: the one servers names
// for it, else DefaultServers'; off is set (and none returned) when
// servers maps lang to no command.
func candidates(servers map[string]Command, lang string) (cands []Command, off bool) {
	if c, ok := servers[lang]; ok {
		if len(c) == 0 {
			return nil, true
		}
		return []Command{c}, false
	}
	return DefaultServers[lang], false
}

// findCommand returns the first of cands found on the PATH list path, or
// what was looked for.
func findCommand(cands []Command, list string) (argv Command, path, missing string) {
	if len(cands) == 0 {
		return nil, "", ""
	}
	var names []string
	for _, c := range cands {
		if p, err := lookPath(c[0], list); err == nil {
			return c, p, ""
		}
		names = append(names, c[0])
	}
	return nil, "", "no " + strings.Join(names, " or ") + " found"
}

// languageOf returns the LSP language of a URI.
func languageOf(uri workspace.URI) string {
	return workspace.LanguageOf(uri.AnyPath())
}

// errNotWaited is helperFor's error when its caller stopped waiting for a
// start (which goes on).
var errNotWaited = errors.New("the check was cancelled")

// restrictedKey ends the slot key of a restricted helper: one started for
// an untrusted folder and one for a trusted folder are different helpers.
const restrictedKey = "\x01restricted"

// slotKey is the key of argv's slot, restricted or not.
func slotKey(argv Command, restricted bool) string {
	key := strings.Join(argv, "\x00")
	if restricted {
		key += restrictedKey
	}
	return key
}

// trusted reports whether the user trusts the folders (Options.Trusted).
func (v *Verifier) trusted(folders []workspace.URI) bool {
	v.mu.Lock()
	f := v.opts.Trusted
	v.mu.Unlock()
	return f != nil && len(folders) > 0 && f(folders)
}

// helperFor returns the running helper of argv, starting it within
// StartTimeout when it is not running: restricted when the folders are
// not trusted.
func (v *Verifier) helperFor(ctx context.Context, argv Command, path string) (*helper, error) {
	restricted := !v.trusted(v.folders())
	key := slotKey(argv, restricted)
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return nil, errors.New("kimi-lsp is shutting down")
	}
	s := v.helpers[key]
	if s == nil {
		s = &slot{}
		v.helpers[key] = s
	}
	v.mu.Unlock()

	s.start.Lock()
	if h := s.h; h != nil && v.stale(h, v.folders()) {
		// The folders changed and this helper cannot be told (or the
		// folder it runs in is gone): a new one starts with them.
		v.log.Debug("restarting a verification helper for the workspace folders", "helper", h.name)
		s.h = nil
		if s.idle != nil {
			s.idle.Stop()
		}
		v.retireLater(h)
	}
	if h := s.h; h != nil {
		err := h.alive()
		if err == nil {
			s.start.Unlock()
			return h, nil
		}
		v.log.Warn("verification helper stopped", "helper", h.name, "err", err)
		v.shutdownLater(h)
		s.h = nil
		// A helper that hung is not started again for a while; one that
		// crashed is started again now.
		var t errTimeout
		if errors.As(err, &t) {
			s.failed, s.reason = time.Now(), h.name+" "+t.Error()
		}
	}
	if !s.failed.IsZero() && time.Since(s.failed) < v.opts.Bounds.Retry {
		reason := s.reason
		s.start.Unlock()
		return nil, errors.New(reason)
	}
	// The start runs on its own, bounded by StartTimeout and ended by
	// Close only: a caller that stops waiting (a code action request with
	// a short deadline) leaves it to finish for the next one.
	if s.pending == nil {
		pending := make(chan struct{})
		if !v.spawn("start a helper", func() { v.start(s, argv, path, restricted) }) {
			s.start.Unlock()
			return nil, errors.New("kimi-lsp is shutting down")
		}
		s.pending = pending
	}
	pending := s.pending
	s.start.Unlock()
	select {
	case <-pending:
	case <-ctx.Done():
		return nil, errNotWaited
	}
	s.start.Lock()
	defer s.start.Unlock()
	if s.h != nil {
		return s.h, nil
	}
	return nil, errors.New(cmp.Or(s.reason, "kimi-lsp is shutting down"))
}

// folders returns the workspace folders now (Options.Folders).
func (v *Verifier) folders() []workspace.URI {
	if v.opts.Folders == nil {
		return nil
	}
	return v.opts.Folders()
}

// stale reports whether h must give way to a helper started with the
// folders live: it does not take folder changes and knows other folders,
// or the folder it runs in is no longer one of them, or there are none.
func (v *Verifier) stale(h *helper, live []workspace.URI) bool {
	switch {
	case len(live) == 0:
		return true
	case h.dir != "" && !slices.Contains(live, h.dir):
		return true
	}
	return !h.folderChanges && !h.knows(live)
}

// retire shuts down a helper that gave way to another once the operation
// it may be running ends (within ColdTimeout, its longest wait, or at
// once when Close is called).
func (v *Verifier) retire(h *helper) {
	ctx, cancel := context.WithTimeout(v.base, v.opts.Bounds.Cold)
	_ = h.acquire(ctx)
	cancel()
	v.shutdown(h)
}

// retireLater retires h on a goroutine of the Verifier's (after Close,
// it kills h: Close waits for it).
func (v *Verifier) retireLater(h *helper) {
	if !v.spawn("retire a helper", func() { v.retire(h) }) {
		h.kill()
	}
}

// shutdownLater shuts h down on a goroutine of the Verifier's (after
// Close, it kills h: Close waits for it).
func (v *Verifier) shutdownLater(h *helper) {
	if !v.spawn("stop a helper", func() { v.shutdown(h) }) {
		h.kill()
	}
}

// shutdown shuts h down (helper.shutdown) and, once its process and its
// goroutines have ended, forgets it.
func (v *Verifier) shutdown(h *helper) {
	h.shutdown()
	if h.wait(shutdownWait) {
		v.mu.Lock()
		delete(v.procs, h)
		v.mu.Unlock()
	}
}

// spawn runs fn on a goroutine that Close waits for, under recover: a
// panic is logged with its stack and ends fn alone. After Close it runs
// nothing and returns false.
func (v *Verifier) spawn(what string, fn func()) bool {
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return false
	}
	v.bg.Add(1)
	v.mu.Unlock()
	go func() {
		defer v.bg.Done()
		defer func() {
			if r := recover(); r != nil {
				v.log.Error("panic in the verifier", "while", what, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			}
		}()
		if v.goHook != nil {
			v.goHook(what)
		}
		fn()
	}()
	return true
}

// FoldersChanged is called after the workspace folders changed (the
// editor's workspace/didChangeWorkspaceFolders). A running helper that
// takes folder changes is told them at the start of its next operation;
// one that does not, one whose folder it runs in was removed, and every
// helper when no folder is left are stopped now (the next operation
// starts them with the folders then), and so is one whose trust the new
// folders change (TrustChanged): a trusted helper never hears of a folder
// the user does not trust.
func (v *Verifier) FoldersChanged() {
	live := v.folders()
	slots := v.slotsWhere(nil)
	for _, s := range slots {
		s.start.Lock()
		h := s.h
		if h != nil && v.stale(h, live) {
			s.take()
			v.log.Debug("stopping a verification helper for the workspace folders", "helper", h.name)
			v.retireLater(h)
		}
		s.start.Unlock()
	}
	v.TrustChanged()
}

// TrustChanged is called after the user's trust in the workspace folders
// may have changed (Options.Trusted answers otherwise now): a running
// helper started restricted in folders now trusted, or unrestricted in
// folders no longer trusted, is stopped now, and the next operation
// starts it as the folders' trust says.
func (v *Verifier) TrustChanged() {
	restricted := !v.trusted(v.folders())
	for _, s := range v.slotsWhere(nil) {
		s.start.Lock()
		h := s.h
		if h != nil && h.restricted != restricted {
			s.take()
			v.log.Debug("stopping a verification helper for the folders' trust", "helper", h.name, "restricted", h.restricted)
			v.retireLater(h)
		}
		s.start.Unlock()
	}
}

// helperEnv is the environment a helper of the folders is started with:
// ours by allow-list (allowedEnv, never a credential), then Options.Env,
// with the PATH cleaned of the folders' entries (cleanPath).
func (v *Verifier) helperEnv(restricted bool, folders []string) []string {
	env := append(allowedEnv(os.Environ(), !restricted), v.opts.Env...)
	return append(env, "PATH="+cleanPath(envValue(env, "PATH"), folders))
}

// start starts the helper of slot s and records the outcome.
func (v *Verifier) start(s *slot, argv Command, path string, restricted bool) {
	sctx, cancel := context.WithTimeoutCause(v.base, v.opts.Bounds.Start, errTimeout{v.opts.Bounds.Start})
	defer cancel()
	folders := v.folders()
	paths := v.folderPaths()
	env := v.helperEnv(restricted, paths)
	l, err := launchFor(argv, path, env, restricted, paths)
	var h *helper
	if err == nil {
		h, err = startHelper(sctx, path, argv, l, restricted, folders, append(env, l.env...), v.log)
	} else {
		err = errRefused{err}
	}
	s.start.Lock()
	defer s.start.Unlock()
	defer func() {
		close(s.pending)
		s.pending = nil
	}()
	if err != nil {
		if c := context.Cause(sctx); c != nil && errors.As(c, new(errTimeout)) {
			err = c
		}
		if v.base.Err() != nil {
			s.reason = "kimi-lsp is shutting down"
			return
		}
		s.failed, s.reason = time.Now(), helperName(argv)+" "+describe(err)
		v.log.Warn("verification helper did not start", "helper", helperName(argv), "err", err)
		return
	}
	v.mu.Lock()
	closed := v.closed
	if !closed {
		v.procs[h] = struct{}{}
	}
	v.mu.Unlock()
	if closed {
		h.kill()
		h.wait(shutdownWait)
		s.reason = "kimi-lsp is shutting down"
		return
	}
	s.h, s.failed, s.reason = h, time.Time{}, ""
	v.armIdle(s, h)
}

// errRefused is a restricted helper's profile refusing to start it (an
// untrusted folder's typescript-language-server without a TypeScript of
// its own): its text says why and what to do.
type errRefused struct{ err error }

func (e errRefused) Error() string { return e.err.Error() }

// describe turns a helper's failure into the words after its name.
func describe(err error) string {
	var t errTimeout
	if errors.As(err, &t) {
		return t.Error()
	}
	if r, ok := err.(errRefused); ok {
		return r.Error()
	}
	return "failed: " + err.Error()
}

// armIdle stops h after the idle time without use.
func (v *Verifier) armIdle(s *slot, h *helper) {
	var check func()
	check = func() {
		s.start.Lock()
		defer s.start.Unlock()
		if s.h != h {
			return
		}
		h.mu.Lock()
		idleFor := time.Since(h.lastUse)
		h.mu.Unlock()
		busy := len(h.op) > 0
		idle := v.idle()
		if busy || idleFor < idle {
			s.idle = time.AfterFunc(max(idle-idleFor, time.Second), check)
			return
		}
		v.log.Debug("stopping an idle verification helper", "helper", h.name)
		s.h = nil
		v.shutdownLater(h)
	}
	s.idle = time.AfterFunc(v.idle(), check)
}

// groupOf returns the group of one file with a helper found, else nil
// and the Result that says why none checks it (None for a file without a
// helper language or outside the folders, the missing command).
func (v *Verifier) groupOf(uri workspace.URI) (*group, Result) {
	gs := v.groups([]workspace.URI{uri})
	if len(gs) == 0 {
		return nil, Result{None: true}
	}
	if gs[0].argv == nil {
		return nil, Result{Reason: gs[0].missing}
	}
	return gs[0], Result{}
}

// folderPaths returns the workspace folders' paths.
func (v *Verifier) folderPaths() []string {
	var out []string
	if v.opts.Folders != nil {
		for _, f := range v.opts.Folders() {
			if p, err := f.Path(); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// group is the files of an edit that one helper checks.
type group struct {
	argv          Command
	path, missing string
	uris          []workspace.URI
}

// groups sorts the touched files by the helper that checks them; files
// without one, files not on disk (untitled:) and files outside every
// workspace folder (a helper sees only the folders) are left out.
func (v *Verifier) groups(uris []workspace.URI) []*group {
	var out []*group
	byKey := map[string]*group{}
	folders := v.folderPaths()
	for _, uri := range uris {
		if !uri.IsFile() || !inFolders(uri, folders) {
			continue
		}
		argv, path, missing := v.commandFor(languageOf(uri))
		if argv == nil && missing == "" {
			continue
		}
		key := strings.Join(argv, "\x00") + "\x01" + missing
		g := byKey[key]
		if g == nil {
			g = &group{argv: argv, path: path, missing: missing}
			byKey[key] = g
			out = append(out, g)
		}
		g.uris = append(g.uris, uri)
	}
	return out
}

// inFolders reports whether uri's file is inside one of the folders.
func inFolders(uri workspace.URI, folders []string) bool {
	p, err := uri.Path()
	if err != nil {
		return false
	}
	for _, f := range folders {
		if rel, err := filepath.Rel(f, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

// Check verifies an edit: the touched files' diagnostics as they are
// (before), then with the candidate texts (after) in the helper only,
// never on disk or in the editor. A file absent from before is created by
// the edit, one absent from after deleted (empty in the helper during the
// check, so that a rename does not redeclare what it moves). It never fails: what it could
// not check it reports in Result.Reason, and it returns within the bounds
// of the package doc.
func (v *Verifier) Check(ctx context.Context, before, after []File) Result {
	b := map[workspace.URI]string{}
	a := map[workspace.URI]string{}
	var uris []workspace.URI
	add := func(u workspace.URI) {
		if !slices.Contains(uris, u) {
			uris = append(uris, u)
		}
	}
	for _, f := range before {
		b[f.URI] = f.Text
		add(f.URI)
	}
	for _, f := range after {
		a[f.URI] = f.Text
		add(f.URI)
	}
	gs := v.groups(uris)
	if len(gs) == 0 {
		return Result{None: true}
	}
	results := make([]Result, len(gs))
	var wg sync.WaitGroup
	for i, g := range gs {
		wg.Go(func() { results[i] = v.checkGroup(ctx, g, b, a) })
	}
	wg.Wait()
	out := Result{Verified: true}
	var reasons, notes []string
	for _, r := range results {
		if r.Restricted {
			out.Restricted = true
			notes = append(notes, strings.Join(r.Helpers, ", ")+" "+r.Restriction)
			out.Restriction = r.Restriction
		}
		out.Helpers = append(out.Helpers, r.Helpers...)
		out.NewErrors = append(out.NewErrors, r.NewErrors...)
		if !r.Verified {
			out.Verified = false
			reasons = append(reasons, r.Reason)
		}
	}
	out.Reason = strings.Join(reasons, "; ")
	if len(out.Helpers) > 1 && out.Restricted {
		// Say which helper did without what.
		out.Restriction = strings.Join(notes, "; ")
	}
	return out
}

func (v *Verifier) checkGroup(ctx context.Context, g *group, before, after map[workspace.URI]string) Result {
	if g.argv == nil {
		return Result{Reason: g.missing}
	}
	name := helperName(g.argv)
	h, err := v.helperFor(ctx, g.argv, g.path)
	if err != nil {
		return Result{Reason: err.Error()}
	}
	errs, err := v.checkWith(ctx, h, g.uris, before, after)
	if err != nil {
		if ctx.Err() != nil {
			return Result{Reason: "the check was cancelled"}
		}
		return Result{Reason: v.failed(h, err)}
	}
	return Result{Helpers: []string{name}, Verified: true, NewErrors: errs, Restricted: h.launch.note != "", Restriction: h.launch.note}
}

// checkWith runs one helper's part of a check.
func (v *Verifier) checkWith(ctx context.Context, h *helper, uris []workspace.URI, before, after map[workspace.URI]string) (_ []Error, err error) {
	bufs, err := v.begin(ctx, h, uris)
	if err != nil {
		return nil, err
	}
	defer h.release()
	// Every touched file holds its text before the edit, then each is
	// diagnosed: a file's diagnostics depend on the others' texts.
	old := map[workspace.URI][]wireDiagnostic{}
	for _, uri := range uris {
		text, ok := before[uri]
		if !ok {
			// Created by the edit: nothing before, and not open.
			if err := h.closeDoc(uri); err != nil {
				return nil, err
			}
			continue
		}
		if err := h.setText(uri, languageOf(uri), text, editorVersion(bufs, uri, text), false); err != nil {
			return nil, err
		}
	}
	for _, uri := range uris {
		if _, ok := before[uri]; !ok {
			continue
		}
		d, ok := h.cached(uri)
		if !ok {
			if d, err = h.diagnostics(ctx, uri, v.bound(h)); err != nil {
				return nil, err
			}
			h.remember(uri, d)
		}
		old[uri] = d
	}
	defer func() {
		// Take the candidate out again, even after a failure, so that the
		// helper holds what it held before the trial.
		if rerr := v.untry(h, bufs, uris, before); err == nil && rerr != nil {
			err = rerr
		}
	}()
	if v.testHook != nil {
		v.testHook(h)
	}
	// The whole candidate goes in before any file is diagnosed: a file
	// of the edit may use what another file of it declares.
	for _, uri := range uris {
		// A file the edit deletes (or renames away) is empty in the
		// helper meanwhile: it exists on disk, and its declarations
		// would still count (a rename would redeclare them all).
		text := after[uri]
		if err := h.setText(uri, languageOf(uri), text, -1, true); err != nil {
			return nil, err
		}
	}
	var created []string
	for _, uri := range uris {
		if _, was := before[uri]; !was {
			if p, err := uri.Path(); err == nil {
				created = append(created, p)
			}
		}
	}
	var out []Error
	for _, uri := range uris {
		text, ok := after[uri]
		if !ok {
			continue // deleted by the edit
		}
		d, err := h.diagnostics(ctx, uri, v.bound(h))
		if err != nil {
			return nil, err
		}
		for _, n := range newErrors(before[uri], text, old[uri], d) {
			if importOfCreated(n.Message, uri, created, v.folderPaths()) {
				continue
			}
			out = append(out, Error{URI: uri, Line: int(n.Range.Start.Line), Message: n.Message})
		}
	}
	return out, nil
}

// editorVersion returns the editor's version of uri when its buffer holds
// text, else -1.
func editorVersion(bufs []*workspace.Snapshot, uri workspace.URI, text string) int32 {
	for _, s := range bufs {
		if s.URI == uri && s.Text() == text {
			return s.Version
		}
	}
	return -1
}

// buffers returns the editor's open documents in h's languages.
func (v *Verifier) buffers(h *helper) []*workspace.Snapshot {
	if v.opts.Buffers == nil {
		return nil
	}
	var out []*workspace.Snapshot
	for _, s := range v.opts.Buffers() {
		if !s.URI.IsFile() {
			continue
		}
		argv, _, _ := v.commandFor(languageOf(s.URI))
		if slices.Equal(argv, h.argv) {
			out = append(out, s)
		}
	}
	return out
}

// untry takes a check's candidate texts out of the helper: each touched
// file holds its before text again (a file the edit creates is closed).
// A file that is not the editor's stays open at that text until the next
// operation, so that the next check of it finds its diagnostics cached.
func (v *Verifier) untry(h *helper, bufs []*workspace.Snapshot, uris []workspace.URI, before map[workspace.URI]string) error {
	var first error
	for _, uri := range uris {
		var err error
		if text, ok := before[uri]; ok {
			err = h.setText(uri, languageOf(uri), text, editorVersion(bufs, uri, text), true)
		} else {
			err = h.closeDoc(uri)
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// Diagnostics returns the helper's diagnostics of file that touch the
// byte range [start, end] of its text (the whole line of start when the
// range is empty), most severe first. The Result says which helper gave
// them, or why there are none (Result.Verified false).
func (v *Verifier) Diagnostics(ctx context.Context, file File, start, end int) ([]Diagnostic, Result) {
	g, r := v.groupOf(file.URI)
	if g == nil {
		return nil, r
	}
	name := helperName(g.argv)
	h, err := v.helperFor(ctx, g.argv, g.path)
	if err != nil {
		return nil, Result{Reason: err.Error()}
	}
	diags, err := v.diagnosticsWith(ctx, h, file)
	if err != nil {
		if ctx.Err() != nil {
			return nil, Result{Reason: "the request was cancelled"}
		}
		return nil, Result{Reason: v.failed(h, err)}
	}
	snap := workspace.NewSnapshot(file.URI, "", 0, file.Text)
	lo, hi := start, end
	if lo >= hi {
		line := snap.OffsetPosition(lo, workspace.UTF8).Line
		lo, hi = snap.LineStart(int(line)), snap.LineEnd(int(line))
	}
	var out []Diagnostic
	for _, d := range diags {
		s := snap.PositionOffset(workspace.Position(d.Range.Start), h.enc)
		e := snap.PositionOffset(workspace.Position(d.Range.End), h.enc)
		if e < s {
			e = s
		}
		if s > hi || e < lo {
			continue
		}
		out = append(out, Diagnostic{
			URI: file.URI, Start: s, End: e, Line: int(d.Range.Start.Line),
			Severity: d.Severity, Source: d.Source, Message: d.Message,
		})
	}
	slices.SortStableFunc(out, func(x, y Diagnostic) int { return rank(x.Severity) - rank(y.Severity) })
	return out, Result{Helpers: []string{name}, Verified: true, Restricted: h.launch.note != "", Restriction: h.launch.note}
}

// rank orders severities, errors (and none) first.
func rank(sev int) int {
	if sev == 0 {
		return severityError
	}
	return sev
}

func (v *Verifier) diagnosticsWith(ctx context.Context, h *helper, file File) ([]wireDiagnostic, error) {
	if err := v.beginWith(ctx, h, file); err != nil {
		return nil, err
	}
	defer h.release()
	if d, ok := h.cached(file.URI); ok {
		return d, nil
	}
	d, err := h.diagnostics(ctx, file.URI, v.bound(h))
	if err == nil {
		h.remember(file.URI, d)
	}
	return d, err
}

// begin takes h's operation slot and brings the helper up to date: the
// workspace folders, the editor's buffers (keep, the files of this
// operation, stay open). On success the caller releases the slot
// (h.release); on failure it is released.
func (v *Verifier) begin(ctx context.Context, h *helper, keep []workspace.URI) ([]*workspace.Snapshot, error) {
	if err := h.acquire(ctx); err != nil {
		return nil, err
	}
	bufs := v.buffers(h)
	err := h.syncFolders(v.folders())
	if err == nil {
		err = h.syncEditor(bufs, keep)
	}
	if err != nil {
		h.release()
		return nil, err
	}
	return bufs, nil
}

// beginWith is begin for an operation on one file, whose text the helper
// then holds (the editor's buffer, or file.Text for a check of it).
func (v *Verifier) beginWith(ctx context.Context, h *helper, file File) error {
	bufs, err := v.begin(ctx, h, []workspace.URI{file.URI})
	if err != nil {
		return err
	}
	if err := h.setText(file.URI, languageOf(file.URI), file.Text, editorVersion(bufs, file.URI, file.Text), false); err != nil {
		h.release()
		return err
	}
	return nil
}

// failed handles a helper's failure in an operation and says what
// happened. A helper that timed out on its first diagnostics is loading
// the workspace: it is left running for the next operation, once; any
// other timeout, or a second one, kills it (see helper.failedWith).
func (v *Verifier) failed(h *helper, err error) string {
	var t errTimeout
	if errors.As(err, &t) {
		h.mu.Lock()
		loading := !h.warm && h.coldMisses == 0
		if loading {
			h.coldMisses++
		}
		h.mu.Unlock()
		if loading {
			return h.name + " " + t.Error() + " (still loading)"
		}
	}
	h.failedWith(err)
	return h.name + " " + describe(err)
}

// bound is the bound on h's next diagnostics wait: Cold until one
// succeeded, then Diag.
func (v *Verifier) bound(h *helper) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.warm {
		return v.opts.Bounds.Diag
	}
	return v.opts.Bounds.Cold
}

// Warm starts the helper of uri's language in the background, so that the
// check of an edit the model is still writing finds it loaded.
func (v *Verifier) Warm(uri workspace.URI) {
	g, _ := v.groupOf(uri)
	if g == nil {
		return
	}
	v.spawn("warm a helper", func() {
		_, _ = v.helperFor(v.base, g.argv, g.path)
	})
}

// FileChangeType is LSP's FileChangeType.
type FileChangeType int

// The FileChangeType values.
const (
	FileCreated FileChangeType = 1
	FileChanged FileChangeType = 2
	FileDeleted FileChangeType = 3
)

// FileChange is a change of a file on disk.
type FileChange struct {
	URI  workspace.URI
	Type FileChangeType
}

// FilesChanged tells the running helpers that files changed on disk (a
// checkout, a generator, a file saved and closed): each gets them, as
// workspace/didChangeWatchedFiles, at the start of its next operation.
// Without it a helper keeps the workspace as it was when it started for
// the files the editor has not open (gopls does not watch the disk).
func (v *Verifier) FilesChanged(changes []FileChange) {
	if len(changes) == 0 {
		return
	}
	slots := v.slotsWhere(nil)
	for _, s := range slots {
		s.start.Lock()
		h := s.h
		s.start.Unlock()
		if h != nil {
			h.queueWatched(changes)
		}
	}
}

func (v *Verifier) idle() time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.opts.Idle
}

// SetServers replaces Options.Servers and Options.Idle (a configuration
// change): new helpers use them; a running helper that no language names
// any more (its language now names another command, or none) is stopped.
func (v *Verifier) SetServers(servers map[string]Command, idle time.Duration) {
	v.mu.Lock()
	v.opts.Servers = servers
	shorter := idle > 0 && idle < v.opts.Idle
	if idle > 0 {
		v.opts.Idle = idle
	}
	slots := v.slotsLocked(nil)
	v.mu.Unlock()
	if shorter {
		// The idle timers run to the old time: look again now (a longer
		// one is found at the old time, which re-arms for the rest).
		for _, s := range slots {
			s.start.Lock()
			if s.idle != nil && s.h != nil {
				s.idle.Reset(0)
			}
			s.start.Unlock()
		}
	}
	if len(slots) == 0 {
		// Nothing runs, so nothing to stop (as at the start, where
		// finding every language's command on the PATH would cost more
		// than the rest of the configuration); a helper started from now
		// on runs a command of the new servers.
		return
	}
	list := v.helperPath() // once: it resolves the links of every PATH entry
	named := map[string]bool{}
	for lang := range DefaultServers {
		if argv, _, _ := v.commandOn(lang, list); argv != nil {
			named[strings.Join(argv, "\x00")] = true
		}
	}
	for lang := range servers {
		if argv, _, _ := v.commandOn(lang, list); argv != nil {
			named[strings.Join(argv, "\x00")] = true
		}
	}
	v.stop(func(key string) bool { return !named[strings.TrimSuffix(key, restrictedKey)] })
}

// Stop stops the running helpers (verify.enable turned off); a later
// check starts them again. It does not wait for them to exit.
func (v *Verifier) Stop() { v.stop(func(string) bool { return true }) }

// slotsWhere returns the helpers' slots whose command line key matches
// (all for a nil match), taken under v.mu.
func (v *Verifier) slotsWhere(match func(key string) bool) []*slot {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.slotsLocked(match)
}

// slotsLocked is slotsWhere with v.mu held.
func (v *Verifier) slotsLocked(match func(key string) bool) []*slot {
	out := make([]*slot, 0, len(v.helpers))
	for key, s := range v.helpers {
		if match == nil || match(key) {
			out = append(out, s)
		}
	}
	return out
}

// stop shuts down the running helpers whose command line key matches.
func (v *Verifier) stop(match func(key string) bool) {
	slots := v.slotsWhere(match)
	for _, s := range slots {
		s.start.Lock()
		h := s.take()
		s.start.Unlock()
		if h != nil {
			v.log.Debug("stopping a verification helper no longer configured", "helper", h.name)
			v.shutdownLater(h)
		}
	}
}

// closeBound bounds Close's wait for what the Verifier started (helper
// starts, retirements, shutdowns: a polite shutdown takes at most about
// 3 × shutdownWait); past it, every helper still running is killed.
const closeBound = 3*shutdownWait + 500*time.Millisecond

// Close stops every helper — a shutdown request, then a kill — and returns
// once everything the Verifier started has ended: the helpers' processes
// (exited and reaped) and its goroutines. What does not end within
// closeBound is killed, then waited for (at most about 2 × shutdownWait
// more). A check after Close is not verified.
func (v *Verifier) Close() error {
	v.stopBase() // ends starts under way and retirements' waits
	v.mu.Lock()
	v.closed = true
	slots := v.slotsLocked(nil)
	v.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range slots {
		wg.Go(func() {
			s.start.Lock()
			if p := s.pending; p != nil {
				// A start under way ends at once now (base is cancelled).
				s.start.Unlock()
				<-p
				s.start.Lock()
			}
			h := s.take()
			s.start.Unlock()
			if h != nil {
				v.shutdown(h)
			}
		})
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		v.bg.Wait()
		close(done)
	}()
	t := time.NewTimer(closeBound)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		v.log.Warn("verification helpers did not stop in time; killing them", "bound", closeBound)
	}
	v.mu.Lock()
	left := make([]*helper, 0, len(v.procs))
	for h := range v.procs {
		left = append(left, h)
	}
	v.mu.Unlock()
	for _, h := range left {
		h.kill()
	}
	for _, h := range left {
		if !h.wait(shutdownWait) {
			v.log.Warn("a verification helper did not exit after being killed", "helper", h.name, "pid", h.cmd.Process.Pid)
		}
	}
	select {
	case <-done:
	case <-time.After(shutdownWait):
		v.log.Warn("the verifier's goroutines did not end after its helpers were killed")
	}
	return nil
}

func baseName(uri workspace.URI) string {
	p := uri.AnyPath()
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return clip(s, 200)
}

// Running reports whether the helper that checks uri runs (started, as
// the folders' trust has it now), so that a check needs no start.
func (v *Verifier) Running(uri workspace.URI) bool {
	g, _ := v.groupOf(uri)
	if g == nil {
		return false
	}
	key := slotKey(g.argv, !v.trusted(v.folders()))
	v.mu.Lock()
	s := v.helpers[key]
	v.mu.Unlock()
	if s == nil {
		return false
	}
	s.start.Lock()
	defer s.start.Unlock()
	return s.h != nil && s.h.alive() == nil
}

// Readiness says, of the helpers that would check the files uris, which
// are not running yet (starting: not started, or still starting) and
// which run but have not finished a check (loading: the first check of a
// helper loads the workspace, its slowest by far: 10–20 s for gopls on a
// cold module cache; bench/README.md), by name.
func (v *Verifier) Readiness(uris []workspace.URI) (starting, loading []string) {
	restricted := !v.trusted(v.folders())
	for _, g := range v.groups(uris) {
		if g.argv == nil {
			continue
		}
		name := helperName(g.argv)
		v.mu.Lock()
		s := v.helpers[slotKey(g.argv, restricted)]
		v.mu.Unlock()
		var h *helper
		if s != nil {
			s.start.Lock()
			if s.h != nil && s.h.alive() == nil {
				h = s.h
			}
			s.start.Unlock()
		}
		switch {
		case h == nil:
			starting = append(starting, name)
		default:
			h.mu.Lock()
			warm := h.warm
			h.mu.Unlock()
			if !warm {
				loading = append(loading, name)
			}
		}
	}
	return starting, loading
}

// Ready starts the helpers that would check the files uris where they do
// not run, and waits until they run (or could not start: Check says why)
// or ctx ends, so that a caller can tell the start from the check.
func (v *Verifier) Ready(ctx context.Context, uris []workspace.URI) {
	for _, g := range v.groups(uris) {
		if g.argv != nil {
			_, _ = v.helperFor(ctx, g.argv, g.path)
		}
	}
}
