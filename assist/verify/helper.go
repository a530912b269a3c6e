package verify

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/lspwire"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// helper is one running language server: its process, its connection,
// and what it has of each document.
type helper struct {
	name string   // shown to the user: "gopls", "pyright"
	argv []string // the configured command line
	log  *slog.Logger

	// restricted: started for an untrusted folder (launchFor's profile).
	restricted bool
	// launch is how it was started: its initializationOptions, its
	// answers to workspace/configuration, the restriction's note.
	launch launch

	cmd  *exec.Cmd
	conn *conn
	// exited is closed when the process has exited.
	exited chan struct{}
	// wg counts the goroutines of the process (its exit, its stderr, the
	// end of its output); wait waits for them.
	wg sync.WaitGroup

	// Set by initialize, read-only after.
	pull bool               // serverCapabilities.diagnosticProvider
	enc  workspace.Encoding // the negotiated position encoding
	// folderChanges: the helper takes workspace/didChangeWorkspaceFolders
	// (serverCapabilities.workspace.workspaceFolders supported with
	// changeNotifications).
	folderChanges bool
	// dir is the workspace folder the helper runs in ("" when none).
	dir workspace.URI

	// op serialises the operations that change the helper's documents (a
	// check puts a candidate text in, then takes it out again).
	op chan struct{}

	// mu guards the fields below it.
	mu   sync.Mutex
	docs map[workspace.URI]*hdoc
	pubs map[workspace.URI]published
	// pubSeq counts publishDiagnostics notifications; pubWake is closed
	// and replaced at each one.
	pubSeq    uint64
	pubWake   chan struct{}
	versioned bool // a publishDiagnostics carried a version
	warm      bool // a diagnostics wait has succeeded
	// coldMisses counts the first diagnostics waits that timed out.
	coldMisses int
	broken     error
	lastUse    time.Time
	// gen counts the changes to what the helper holds, except a check's
	// trial texts, which the check takes out again.
	gen uint64
	// watched are the disk changes not yet sent (FilesChanged).
	watched []fileEvent
	// folders are the workspace folders the helper knows: those of
	// initialize, then as changed by syncFolders.
	folders []workspace.URI
}

// syncFolders tells a helper that takes folder changes the workspace
// folders added and removed since it last heard of them
// (workspace/didChangeWorkspaceFolders); a helper that does not is left
// alone (the Verifier starts it again, see Verifier.stale). After an
// addition the next diagnostics wait has ColdTimeout again: the helper
// loads the new folder. Precondition: the op slot is held.
func (h *helper) syncFolders(live []workspace.URI) error {
	if !h.folderChanges {
		return nil
	}
	h.mu.Lock()
	added, removed := []workspaceFolder{}, []workspaceFolder{}
	for _, f := range live {
		if !slices.Contains(h.folders, f) {
			added = append(added, folderOf(f))
		}
	}
	for _, f := range h.folders {
		if !slices.Contains(live, f) {
			removed = append(removed, folderOf(f))
		}
	}
	if len(added) == 0 && len(removed) == 0 {
		h.mu.Unlock()
		return nil
	}
	h.folders = slices.Clone(live)
	h.gen++
	if len(added) > 0 {
		h.warm, h.coldMisses = false, 0
	}
	h.mu.Unlock()
	h.log.Debug("workspace folders changed", "added", len(added), "removed", len(removed))
	return h.conn.notify("workspace/didChangeWorkspaceFolders", map[string]any{
		"event": map[string]any{"added": added, "removed": removed},
	})
}

// knows reports whether the helper knows exactly the folders live.
func (h *helper) knows(live []workspace.URI) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.folders) == len(live) && !slices.ContainsFunc(live, func(f workspace.URI) bool { return !slices.Contains(h.folders, f) })
}

func folderOf(f workspace.URI) workspaceFolder {
	return workspaceFolder{URI: string(f), Name: filepath.Base(f.AnyPath())}
}

// maxWatched bounds the disk changes kept for a helper between two
// operations (a checkout of another branch); past it the oldest go.
const maxWatched = 10000

// queueWatched keeps disk changes for the next operation.
func (h *helper) queueWatched(changes []FileChange) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range changes {
		h.watched = append(h.watched, fileEvent{URI: string(c.URI), Type: int(c.Type)})
	}
	if n := len(h.watched); n > maxWatched {
		h.watched = append(h.watched[:0:0], h.watched[n-maxWatched:]...)
	}
}

// flushWatched sends the disk changes queued since the last operation
// (workspace/didChangeWatchedFiles: the helper watches nothing itself,
// gopls reads a file not open only when told it changed). Precondition:
// the op slot is held.
func (h *helper) flushWatched() error {
	h.mu.Lock()
	events := h.watched
	h.watched = nil
	if len(events) > 0 {
		h.gen++
	}
	h.mu.Unlock()
	if len(events) == 0 {
		return nil
	}
	return h.conn.notify("workspace/didChangeWatchedFiles", map[string]any{"changes": events})
}

// hdoc is a document as the helper has it.
type hdoc struct {
	version int32  // our version counter for this document
	text    string // the text the helper has
	// editor is the editor's version when the text is the editor's
	// buffer, -1 when we opened the document for a check only.
	editor int32
	// changedSeq is pubSeq when the last change was sent.
	changedSeq uint64
	// cache holds the last diagnostics computed for a non-trial text.
	cache *diagCache
}

// diagCache is a document's diagnostics, valid while the helper holds
// text for it and gen has not moved.
type diagCache struct {
	gen   uint64
	text  string
	diags []wireDiagnostic
}

// published is the last publishDiagnostics for a document.
type published struct {
	version int32 // -1 when the helper sent none
	seq     uint64
	diags   []wireDiagnostic
}

// Wire types: the shared leaf types of assist/lspwire, under the names
// this package reads them by.
type (
	wirePosition     = lspwire.Position
	wireRange        = lspwire.Range
	wireDiagnostic   = lspwire.Diagnostic
	textDocumentItem = lspwire.TextDocumentItem
	versionedDoc     = lspwire.VersionedTextDocumentIdentifier
	docID            = lspwire.TextDocumentIdentifier
	workspaceFolder  = lspwire.WorkspaceFolder
	fileEvent        = lspwire.FileEvent
)

type fullChange struct {
	Text string `json:"text"`
}

// helperName is the name a command is shown by: its program's base name,
// without a "-langserver" suffix ("pyright-langserver" → "pyright").
func helperName(argv []string) string {
	base := filepath.Base(argv[0])
	base = strings.TrimSuffix(base, ".exe")
	return strings.TrimSuffix(base, "-langserver")
}

// startHelper starts the configured command argv as l says (path is its
// resolved program) with the environment env and initializes it with the
// folders, all within ctx.
func startHelper(ctx context.Context, path string, argv []string, l launch, restricted bool, folders []workspace.URI, env []string, log *slog.Logger) (*helper, error) {
	h := &helper{
		name:       helperName(argv),
		argv:       argv,
		restricted: restricted,
		launch:     l,
		exited:     make(chan struct{}),
		op:         make(chan struct{}, 1),
		docs:       map[workspace.URI]*hdoc{},
		pubs:       map[workspace.URI]published{},
		pubWake:    make(chan struct{}),
		lastUse:    time.Now(),
		folders:    slices.Clone(folders),
	}
	h.log = log.With("helper", h.name)
	cmd := exec.Command(path, l.argv[1:]...)
	if len(folders) > 0 {
		if dir, err := folders[0].Path(); err == nil {
			cmd.Dir, h.dir = dir, folders[0]
		}
	}
	cmd.Env = env
	// A temporary directory of the helper's own, removed when it exits: a
	// helper killed mid-check (or its go list children) leaves no work
	// directories in the user's temporary directory.
	tmp, err := os.MkdirTemp(envValue(cmd.Env, "TMPDIR"), "kimi-lsp-helper-")
	if err != nil {
		return nil, err
	}
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	ownGroup(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	h.cmd = cmd
	h.wg.Go(func() { h.logStderr(errR) })
	h.wg.Go(func() {
		err := cmd.Wait()
		h.log.Debug("helper exited", "err", err)
		// What it started may hold the pipes: end them too.
		killGroup(cmd)
		os.RemoveAll(tmp)
		close(h.exited)
	})
	h.conn = newConn(outR, inW, h.onNotify, h.onRequest)
	h.wg.Go(func() {
		<-h.conn.done // the read loop has ended
		outR.Close()
	})
	if err := h.initialize(ctx, folders); err != nil {
		h.kill()
		h.wait(shutdownWait)
		return nil, err
	}
	return h, nil
}

// logStderr passes the helper's stderr to our log, line by line.
func (h *helper) logStderr(r *os.File) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		h.log.Debug("helper stderr", "line", clip(sc.Text(), 2000))
	}
	// A line longer than the buffer ends the scan: drain the rest.
	_, _ = io.Copy(io.Discard, r)
}

func (h *helper) initialize(ctx context.Context, folders []workspace.URI) error {
	wf := make([]workspaceFolder, 0, len(folders))
	for _, f := range folders {
		wf = append(wf, folderOf(f))
	}
	var root any
	if len(folders) > 0 {
		root = string(folders[0])
	}
	params := map[string]any{
		"processId":             os.Getpid(),
		"clientInfo":            map[string]string{"name": "kimi-lsp"},
		"rootUri":               root,
		"workspaceFolders":      wf,
		"initializationOptions": h.launch.init,
		"capabilities": map[string]any{
			"general": map[string]any{"positionEncodings": []string{"utf-16"}},
			"textDocument": map[string]any{
				"synchronization":    map[string]any{"dynamicRegistration": false},
				"publishDiagnostics": map[string]any{"versionSupport": true},
				"diagnostic":         map[string]any{"dynamicRegistration": false},
			},
			"workspace": map[string]any{"configuration": true, "workspaceFolders": true},
		},
	}
	var result struct {
		Capabilities struct {
			DiagnosticProvider json.RawMessage `json:"diagnosticProvider"`
			PositionEncoding   string          `json:"positionEncoding"`
			Workspace          struct {
				WorkspaceFolders struct {
					Supported bool `json:"supported"`
					// true, or the registration id (gopls sends the
					// method's name).
					ChangeNotifications json.RawMessage `json:"changeNotifications"`
				} `json:"workspaceFolders"`
			} `json:"workspace"`
		} `json:"capabilities"`
	}
	if err := h.conn.call(ctx, "initialize", params, &result); err != nil {
		return err
	}
	dp := strings.TrimSpace(string(result.Capabilities.DiagnosticProvider))
	h.pull = dp != "" && dp != "null" && dp != "false"
	switch result.Capabilities.PositionEncoding {
	case "utf-8":
		h.enc = workspace.UTF8
	case "utf-32":
		h.enc = workspace.UTF32
	default:
		h.enc = workspace.UTF16
	}
	wf2 := result.Capabilities.Workspace.WorkspaceFolders
	cn := strings.TrimSpace(string(wf2.ChangeNotifications))
	h.folderChanges = wf2.Supported && cn != "" && cn != "null" && cn != "false" && cn != `""`
	h.log.Debug("helper initialized", "pullDiagnostics", h.pull, "folderChanges", h.folderChanges)
	return h.conn.notify("initialized", struct{}{})
}

func (h *helper) onNotify(method string, params json.RawMessage) {
	switch method {
	case "textDocument/publishDiagnostics":
		var p struct {
			URI         string           `json:"uri"`
			Version     *int32           `json:"version"`
			Diagnostics []wireDiagnostic `json:"diagnostics"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		uri, err := workspace.ParseURI(p.URI)
		if err != nil {
			return
		}
		h.mu.Lock()
		h.pubSeq++
		pub := published{version: -1, seq: h.pubSeq, diags: p.Diagnostics}
		if p.Version != nil {
			pub.version = *p.Version
			h.versioned = true
		}
		h.pubs[uri] = pub
		close(h.pubWake)
		h.pubWake = make(chan struct{})
		h.mu.Unlock()
	case "window/logMessage", "window/showMessage":
		var p struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(params, &p) == nil {
			h.log.Debug("helper message", "message", clip(p.Message, 2000))
		}
	}
}

func (h *helper) onRequest(method string, params json.RawMessage) (any, *rpcError) {
	switch method {
	case "workspace/configuration":
		// The profile's settings (an untrusted folder's pyright its
		// interpreter), null for the rest: the helper's defaults.
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		out := make([]any, len(p.Items))
		for i, it := range p.Items {
			if c, ok := h.launch.config[it.Section]; ok {
				out[i] = c
			}
		}
		return out, nil
	case "client/registerCapability", "client/unregisterCapability",
		"window/workDoneProgress/create", "window/showMessageRequest",
		"window/showDocument":
		return nil, nil
	case "workspace/applyEdit":
		return map[string]any{"applied": false, "failureReason": "kimi-lsp's verification helper applies no edits"}, nil
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "method not found: " + method}
}

// alive reports why the helper can no longer be used, or nil.
func (h *helper) alive() error {
	// Why it was made unusable first: a helper killed for a timeout has
	// exited too, and the timeout is what keeps it from being started
	// again at once.
	h.mu.Lock()
	broken := h.broken
	h.mu.Unlock()
	if broken != nil {
		return broken
	}
	select {
	case <-h.exited:
		return fmt.Errorf("%s exited", h.name)
	default:
	}
	return h.conn.closedErr()
}

// acquire takes the helper's operation slot.
func (h *helper) acquire(ctx context.Context) error {
	select {
	case h.op <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-h.exited:
		return fmt.Errorf("%s exited", h.name)
	}
}

func (h *helper) release() {
	h.mu.Lock()
	h.lastUse = time.Now()
	h.mu.Unlock()
	<-h.op
}

// setText makes the helper hold text for uri: didOpen when it has not the
// document, didChange when its text differs. editor is the editor's
// version of that text, or -1. A trial change (a candidate, or taking it
// out again) leaves gen alone: the check puts back what was there.
// Precondition: the op slot is held.
func (h *helper) setText(uri workspace.URI, lang, text string, editor int32, trial bool) error {
	h.mu.Lock()
	d := h.docs[uri]
	if d != nil && d.text == text {
		d.editor = editor
		h.mu.Unlock()
		return nil
	}
	if !trial {
		h.gen++
	}
	if d == nil {
		d = &hdoc{version: 1, text: text, editor: editor, changedSeq: h.pubSeq}
		h.docs[uri] = d
		h.mu.Unlock()
		return h.conn.notify("textDocument/didOpen", map[string]any{
			"textDocument": textDocumentItem{URI: string(uri), LanguageID: lang, Version: 1, Text: text},
		})
	}
	d.version++
	d.text, d.editor, d.changedSeq = text, editor, h.pubSeq
	v := d.version
	h.mu.Unlock()
	return h.conn.notify("textDocument/didChange", map[string]any{
		"textDocument":   versionedDoc{URI: string(uri), Version: v},
		"contentChanges": []fullChange{{Text: text}},
	})
}

// closeDoc closes uri in the helper, which then reads it from the disk
// again. Precondition: the op slot is held.
func (h *helper) closeDoc(uri workspace.URI) error {
	h.mu.Lock()
	_, ok := h.docs[uri]
	delete(h.docs, uri)
	delete(h.pubs, canonical(uri))
	if ok {
		h.gen++
	}
	h.mu.Unlock()
	if !ok {
		return nil
	}
	return h.conn.notify("textDocument/didClose", map[string]any{"textDocument": docID{URI: string(uri)}})
}

// syncEditor sends the disk changes queued since the last operation,
// then makes the helper's documents of its languages the editor's
// buffers: opens and changes what differs, closes what the editor closed
// and what an earlier check opened, except keep (the files of this
// operation). Precondition: the op slot is held.
func (h *helper) syncEditor(bufs []*workspace.Snapshot, keep []workspace.URI) error {
	if err := h.flushWatched(); err != nil {
		return err
	}
	seen := map[workspace.URI]bool{}
	for _, s := range bufs {
		seen[s.URI] = true
		h.mu.Lock()
		d := h.docs[s.URI]
		// The version alone does not tell: an editor that closes a buffer
		// and opens it again may count from 1 again, with another text.
		// When nothing changed the helper holds the snapshot's own string,
		// and comparing it is a pointer comparison.
		same := d != nil && d.editor == s.Version && d.text == s.Text()
		h.mu.Unlock()
		if same {
			continue
		}
		// The language by the file's extension, as the helper was chosen:
		// editors' identifiers vary ("golang", "python3").
		if err := h.setText(s.URI, cmp.Or(languageOf(s.URI), s.LanguageID), s.Text(), s.Version, false); err != nil {
			return err
		}
	}
	h.mu.Lock()
	var gone []workspace.URI
	for uri := range h.docs {
		if !seen[uri] && !slices.Contains(keep, uri) {
			gone = append(gone, uri)
		}
	}
	h.mu.Unlock()
	for _, uri := range gone {
		if err := h.closeDoc(uri); err != nil {
			return err
		}
	}
	return nil
}

// cached returns the diagnostics last computed for uri when nothing the
// helper holds has changed since (the same text, the same gen).
func (h *helper) cached(uri workspace.URI) ([]wireDiagnostic, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.docs[uri]
	if d == nil || d.cache == nil || d.cache.gen != h.gen || d.cache.text != d.text {
		return nil, false
	}
	return d.cache.diags, true
}

// remember keeps diags as uri's diagnostics of what the helper holds now.
func (h *helper) remember(uri workspace.URI, diags []wireDiagnostic) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d := h.docs[uri]; d != nil {
		d.cache = &diagCache{gen: h.gen, text: d.text, diags: diags}
	}
}

// errTimeout reports a diagnostics wait that ran out; its text names the
// bound.
type errTimeout struct{ bound time.Duration }

func (e errTimeout) Error() string { return fmt.Sprintf("did not answer within %v", e.bound) }

// diagnostics returns the helper's diagnostics of uri as it holds it now,
// waiting at most bound. Precondition: the op slot is held.
func (h *helper) diagnostics(ctx context.Context, uri workspace.URI, bound time.Duration) ([]wireDiagnostic, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, bound, errTimeout{bound})
	defer cancel()
	var diags []wireDiagnostic
	var err error
	if h.pull {
		diags, err = h.pullDiagnostics(ctx, uri)
	} else {
		diags, err = h.pushedDiagnostics(ctx, uri)
	}
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && errors.As(cause, new(errTimeout)) {
			return nil, cause
		}
		if e := h.alive(); e != nil {
			return nil, e
		}
		return nil, err
	}
	h.mu.Lock()
	h.warm = true
	h.mu.Unlock()
	return diags, nil
}

// retryPause is the pause before asking again after a helper cancelled a
// pull (its content changed, or it was not ready).
const retryPause = 50 * time.Millisecond

func (h *helper) pullDiagnostics(ctx context.Context, uri workspace.URI) ([]wireDiagnostic, error) {
	for {
		var report struct {
			Kind  string           `json:"kind"`
			Items []wireDiagnostic `json:"items"`
		}
		err := h.conn.call(ctx, "textDocument/diagnostic", map[string]any{"textDocument": docID{URI: string(uri)}}, &report)
		var rerr *rpcError
		if errors.As(err, &rerr) && (rerr.Code == codeServerCancelled || rerr.Code == codeContentModified) {
			select {
			case <-time.After(retryPause):
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if err != nil {
			return nil, err
		}
		// "unchanged" cannot come: we never send a previousResultId.
		// gopls sends kind "" for a full report.
		return report.Items, nil
	}
}

// canonical is uri as ParseURI spells it, the key of h.pubs (onNotify
// parses the URIs a helper publishes): a document opened as
// "file:///C:/x" (the CLI's path on Windows; FileURI keeps the drive
// letter's case) is published back as "file:///C:/x" or, by pyright, as
// "file:///c%3A/x", both "file:///c:/x" once parsed.
func canonical(uri workspace.URI) workspace.URI {
	if c, err := workspace.ParseURI(string(uri)); err == nil {
		return c
	}
	return uri
}

// settleWindow is how long a helper that publishes diagnostics without a
// version must stay quiet after a publish of the document before that
// publish is taken as the diagnostics of our last change.
const settleWindow = 300 * time.Millisecond

func (h *helper) pushedDiagnostics(ctx context.Context, uri workspace.URI) ([]wireDiagnostic, error) {
	var quietSince time.Time
	var quietSeq uint64
	for {
		h.mu.Lock()
		d := h.docs[uri]
		pub, ok := h.pubs[canonical(uri)]
		wake := h.pubWake
		versioned := h.versioned
		h.mu.Unlock()
		if d == nil {
			return nil, fmt.Errorf("%s is not open in the helper", uri)
		}
		switch {
		case ok && pub.version >= 0 && pub.version == d.version:
			return pub.diags, nil
		case ok && pub.version < 0 && !versioned && pub.seq > d.changedSeq:
			// The document's publication after our change, once no other
			// of it came for settleWindow. Other documents' publications
			// do not count: a helper that publishes each open file in
			// turn would otherwise never settle.
			if pub.seq != quietSeq {
				quietSeq, quietSince = pub.seq, time.Now()
			}
			wait := settleWindow - time.Since(quietSince)
			if wait <= 0 {
				return pub.diags, nil
			}
			select {
			case <-wake:
			case <-time.After(wait):
			case <-h.exited:
				return nil, fmt.Errorf("%s exited", h.name)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			continue
		}
		select {
		case <-wake:
		case <-h.exited:
			return nil, fmt.Errorf("%s exited", h.name)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// failedWith handles an operation's failure: an error the helper
// answered leaves it running; a timeout or a lost connection makes it
// unusable (it is killed, and started again on a later use; after a
// timeout only once RetryAfter has passed).
func (h *helper) failedWith(err error) {
	if errors.As(err, new(*rpcError)) {
		return
	}
	h.mu.Lock()
	if h.broken == nil {
		h.broken = err
	}
	h.mu.Unlock()
	h.kill()
}

// wait waits, at most bound, for the process to have exited and its
// goroutines (its exit, its stderr, its read loop) to have ended; it
// reports whether they have.
func (h *helper) wait(bound time.Duration) bool {
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// kill ends the process (and its group) at once.
func (h *helper) kill() {
	killGroup(h.cmd)
	h.conn.close()
}

// shutdownWait bounds each step of a polite shutdown: the shutdown
// request, then the exit after the exit notification.
const shutdownWait = time.Second

// shutdown asks the helper to exit, then kills it; it returns within
// about 2 × shutdownWait.
func (h *helper) shutdown() {
	select {
	case <-h.exited:
		h.conn.close()
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
	err := h.conn.call(ctx, "shutdown", nil, nil)
	cancel()
	if err == nil {
		_ = h.conn.notify("exit", nil)
		select {
		case <-h.exited:
		case <-time.After(shutdownWait):
		}
	}
	h.kill()
	select {
	case <-h.exited:
	case <-time.After(shutdownWait):
		h.log.Warn("helper did not exit after being killed")
	}
}

// envValue is the value env (KEY=VALUE entries, the last one winning, as
// exec uses them) gives key, or "".
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
