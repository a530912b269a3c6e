package verify

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// helperEnv keeps the real helpers' caches and settings in one temporary
// directory for the whole package (gopls's file cache makes the later
// tests warm), removed at the end.
var helperEnv []string

func TestMain(m *testing.M) {
	if os.Getenv(noFoldersProxy) != "" {
		os.Exit(runNoFoldersProxy())
	}
	if os.Getenv(deafHelper) != "" {
		os.Exit(runDeafHelper())
	}
	dir, err := os.MkdirTemp("", "verify-helpers-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	helperEnv = []string{
		"HOME=" + dir,
		"TMPDIR=" + filepath.Join(dir, "tmp"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"GOPLSCACHE=" + filepath.Join(dir, "gopls"),
		"GOCACHE=" + filepath.Join(dir, "gocache"),
		"GOPATH=" + filepath.Join(dir, "gopath"),
		"GOFLAGS=-modcacherw",
		"GOTOOLCHAIN=local",
		"GOTELEMETRY=off",
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needTool fails the test when a real helper is not installed: the tests
// of this package run against the real servers, which .ci/run installs.
func needTool(t *testing.T, name, install string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s not found on PATH: install it with %s (.ci/run does)", name, install)
	}
}

func needGopls(t *testing.T) {
	needTool(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
}

func needPyright(t *testing.T) {
	needTool(t, "pyright-langserver", "npm install -g pyright@1.1.414")
}

// goModule writes a module with files (name → text) into a new directory.
func goModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "go.mod", "module example.com/m\n\ngo 1.22\n")
	for name, text := range files {
		write(t, dir, name, text)
	}
	return dir
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func uriOf(dir, name string) workspace.URI {
	return workspace.FileURI(filepath.Join(dir, name))
}

// newVerifier returns a Verifier on dir, closed at the test's end.
func newVerifier(t *testing.T, dir string, opts Options) *Verifier {
	t.Helper()
	opts.Folders = func() []workspace.URI { return []workspace.URI{workspace.FileURI(dir)} }
	opts.Env = append(opts.Env, helperEnv...)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	v := New(opts)
	t.Cleanup(func() { v.Close() })
	return v
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

const goValid = `package m

func F() int {
	return 1
}
`

func TestCheckUndefinedName(t *testing.T) {
	needGopls(t)
	dir := goModule(t, map[string]string{"a.go": goValid})
	v := newVerifier(t, dir, Options{})
	a := uriOf(dir, "a.go")
	candidate := strings.Replace(goValid, "return 1", "return x", 1)
	r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, candidate}})
	if !r.Verified || len(r.NewErrors) != 1 {
		t.Fatalf("got %+v, want one new error", r)
	}
	e := r.NewErrors[0]
	if e.Message != "undefined: x" || e.Line != 3 || e.URI != a {
		t.Errorf("got %+v, want undefined: x on line 3 (zero-based) of a.go", e)
	}
	if got, want := r.Line(), "verified by gopls: 1 new error: undefined: x"; got != want {
		t.Errorf("got line %q, want %q", got, want)
	}
	// The candidate went to gopls only: the disk is as it was, and gopls
	// holds the original text again.
	if b, _ := os.ReadFile(filepath.Join(dir, "a.go")); string(b) != goValid {
		t.Errorf("a.go on disk changed: %q", b)
	}
	diags, dr := v.Diagnostics(context.Background(), File{a, goValid}, 0, len(goValid))
	if !dr.Verified || len(diags) != 0 {
		t.Errorf("after the check, got diagnostics %+v (%+v), want none", diags, dr)
	}
}

func TestCheckFixIntroducesNone(t *testing.T) {
	needGopls(t)
	// Two errors before: y (fixed by the edit) and z (kept, but moved
	// three lines down by the lines the edit inserts above it).
	before := `package m

func F() int {
	return y
}

func G() int {
	return z
}
`
	after := `package m

// F returns one.
// It used to return y.
func F() int {
	v := 1
	return v
}

func G() int {
	return z
}
`
	dir := goModule(t, map[string]string{"a.go": before})
	v := newVerifier(t, dir, Options{})
	a := uriOf(dir, "a.go")
	r := v.Check(context.Background(), []File{{a, before}}, []File{{a, after}})
	if !r.Verified || len(r.NewErrors) != 0 {
		t.Fatalf("got %+v, want verified with no new errors", r)
	}
	if got, want := r.Line(), "verified by gopls: no new errors"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// The same edit that also breaks G: z stays old, w is new.
	worse := strings.Replace(after, "return z", "return z + w", 1)
	r = v.Check(context.Background(), []File{{a, before}}, []File{{a, worse}})
	if len(r.NewErrors) != 1 || r.NewErrors[0].Message != "undefined: w" {
		t.Fatalf("got %+v, want only undefined: w new", r)
	}
}

func TestCheckSeesEditorBuffers(t *testing.T) {
	needGopls(t)
	// b.go on disk has no helper(); the editor's unsaved buffer has it.
	dir := goModule(t, map[string]string{"a.go": goValid, "b.go": "package m\n"})
	b := uriOf(dir, "b.go")
	var mu sync.Mutex
	bufs := []*workspace.Snapshot{workspace.NewSnapshot(b, "go", 7, "package m\n\nfunc helper() int { return 2 }\n")}
	v := newVerifier(t, dir, Options{Buffers: func() []*workspace.Snapshot {
		mu.Lock()
		defer mu.Unlock()
		return bufs
	}})
	a := uriOf(dir, "a.go")
	candidate := strings.Replace(goValid, "return 1", "return helper()", 1)
	if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, candidate}}); !r.Verified || len(r.NewErrors) != 0 {
		t.Fatalf("with the buffer open: got %+v, want no new errors", r)
	}
	// The editor closes b.go without saving: helper() is gone.
	mu.Lock()
	bufs = nil
	mu.Unlock()
	r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, candidate}})
	if len(r.NewErrors) != 1 || r.NewErrors[0].Message != "undefined: helper" {
		t.Fatalf("after the buffer closed: got %+v, want undefined: helper", r)
	}
}

// TestCheckSeesReopenedBuffer: an editor that closes a buffer and opens it
// again, with another text (changed on disk meanwhile), may give it the
// version it had before (versions count from 1 for each opening, as in VS
// Code); with no check in between, the helper still holds the old text at
// that version, and must take the new one.
func TestCheckSeesReopenedBuffer(t *testing.T) {
	needGopls(t)
	dir := goModule(t, map[string]string{"a.go": goValid, "b.go": "package m\n"})
	b := uriOf(dir, "b.go")
	var mu sync.Mutex
	bufs := []*workspace.Snapshot{workspace.NewSnapshot(b, "go", 1, "package m\n\nfunc helper() int { return 2 }\n")}
	v := newVerifier(t, dir, Options{Buffers: func() []*workspace.Snapshot {
		mu.Lock()
		defer mu.Unlock()
		return bufs
	}})
	a := uriOf(dir, "a.go")
	candidate := strings.Replace(goValid, "return 1", "return helper()", 1)
	if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, candidate}}); !r.Verified || len(r.NewErrors) != 0 {
		t.Fatalf("with the buffer open: got %+v, want no new errors", r)
	}
	// Closed and opened again at version 1, helper() renamed.
	mu.Lock()
	bufs = []*workspace.Snapshot{workspace.NewSnapshot(b, "go", 1, "package m\n\nfunc helper2() int { return 2 }\n")}
	mu.Unlock()
	r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, candidate}})
	if len(r.NewErrors) != 1 || r.NewErrors[0].Message != "undefined: helper" {
		t.Fatalf("after the buffer was opened again: got %+v, want undefined: helper", r)
	}
}

func TestCheckPythonTypeError(t *testing.T) {
	needPyright(t)
	dir := t.TempDir()
	before := "def f(n: int) -> int:\n    return n\n\n\nx: int = f(1)\n"
	write(t, dir, "a.py", before)
	v := newVerifier(t, dir, Options{})
	a := uriOf(dir, "a.py")
	after := strings.Replace(before, "x: int = f(1)", `x: int = f("one")`, 1)
	r := v.Check(context.Background(), []File{{a, before}}, []File{{a, after}})
	if !r.Verified || len(r.NewErrors) != 1 {
		t.Fatalf("got %+v, want one new error", r)
	}
	e := r.NewErrors[0]
	if !strings.Contains(e.Message, `Argument of type "Literal['one']" cannot be assigned to parameter "n" of type "int"`) || e.Line != 4 {
		t.Errorf("got %+v, want pyright's argument type error on line 4", e)
	}
	if !strings.HasPrefix(r.Line(), "verified by pyright (untrusted folder: without the workspace's environment): 1 new error: Argument of type") {
		t.Errorf("got %q", r.Line())
	}
}

func TestCheckNoHelperOnPath(t *testing.T) {
	dir := goModule(t, map[string]string{"a.go": goValid})
	t.Setenv("PATH", t.TempDir()) // an empty directory: no gopls
	v := newVerifier(t, dir, Options{})
	a := uriOf(dir, "a.go")
	r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid + "\n"}})
	if r.Verified || r.None {
		t.Fatalf("got %+v, want not verified", r)
	}
	if got, want := r.Line(), "not verified (no gopls found)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Python has two candidates; both are named.
	p := uriOf(dir, "a.py")
	if got, want := v.Check(context.Background(), nil, []File{{p, "x = 1\n"}}).Line(), "not verified (no pyright-langserver or basedpyright-langserver found)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// A language without a helper says nothing.
	md := uriOf(dir, "README.md")
	if r := v.Check(context.Background(), nil, []File{{md, "# x\n"}}); !r.None || r.Line() != "" {
		t.Errorf("got %+v, want None", r)
	}
}

// hangingServer writes a real program that reads its input and never
// answers, after a line on stderr.
func hangingServer(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "hanging-server")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho hanging-server is up >&2\nwhile IFS= read -r line; do :; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// syncBuffer is a log sink the test reads while the helpers write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestCheckHelperHangs(t *testing.T) {
	dir := goModule(t, map[string]string{"a.go": goValid})
	var logs syncBuffer
	bounds := Bounds{Start: 2 * time.Second}
	v := newVerifier(t, dir, Options{
		Servers: map[string]Command{"go": {hangingServer(t)}},
		Bounds:  bounds,
		Logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	a := uriOf(dir, "a.go")
	start := time.Now()
	r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid + "\n"}})
	took := time.Since(start)
	if got, want := r.Line(), "not verified (hanging-server did not answer within 2s)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if took > bounds.Start+5*time.Second {
		t.Errorf("the check took %v, bound %v", took, bounds.Start)
	}
	// Within RetryAfter the next check does not start it again: it ends
	// at once with the same reason.
	if got := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid + "\n"}}).Line(); got != "not verified (hanging-server did not answer within 2s)" {
		t.Errorf("second check: got %q", got)
	}
	if n := strings.Count(logs.String(), "hanging-server is up"); n != 1 {
		t.Errorf("the helper's stderr reached the log %d times, want once (started once):\n%s", n, logs.String())
	}
}

// helperPid returns the pid of the running helper of argv.
func helperPid(t *testing.T, v *Verifier, argv ...string) int {
	t.Helper()
	v.mu.Lock()
	s := v.helpers[slotKey(argv, true)]
	v.mu.Unlock()
	if s != nil {
		s.start.Lock()
		defer s.start.Unlock()
	}
	if s == nil || s.h == nil {
		t.Fatalf("no helper %v running", argv)
	}
	return s.h.cmd.Process.Pid
}

func TestCheckHelperKilledMidCheck(t *testing.T) {
	needGopls(t)
	dir := goModule(t, map[string]string{"a.go": goValid})
	v := newVerifier(t, dir, Options{})
	v.testHook = func(h *helper) {
		_ = h.cmd.Process.Signal(syscall.SIGKILL)
		<-h.exited
	}
	a := uriOf(dir, "a.go")
	candidate := strings.Replace(goValid, "return 1", "return x", 1)
	r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, candidate}})
	if r.Verified || !strings.HasPrefix(r.Line(), "not verified (gopls ") {
		t.Fatalf("got %+v, want not verified by gopls", r)
	}
	// A crashed helper is started again at the next check.
	v.testHook = nil
	r = v.Check(context.Background(), []File{{a, goValid}}, []File{{a, candidate}})
	if !r.Verified || len(r.NewErrors) != 1 {
		t.Fatalf("after the crash: got %+v, want verified with one new error", r)
	}
}

func TestCheckHelperStopsAnswering(t *testing.T) {
	needGopls(t)
	dir := goModule(t, map[string]string{"a.go": goValid})
	bounds := Bounds{Diag: 2 * time.Second}
	v := newVerifier(t, dir, Options{Bounds: bounds})
	a := uriOf(dir, "a.go")
	// Warm it up: the bound is Diag from then on.
	if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid}}); !r.Verified {
		t.Fatalf("warm-up: %+v", r)
	}
	pid := helperPid(t, v, "gopls")
	v.testHook = func(h *helper) { _ = syscall.Kill(pid, syscall.SIGSTOP) }
	candidate := strings.Replace(goValid, "return 1", "return x", 1)
	start := time.Now()
	r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, candidate}})
	took := time.Since(start)
	if got, want := r.Line(), "not verified (gopls did not answer within 2s)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if took > bounds.Diag+5*time.Second {
		t.Errorf("the check took %v, bound %v", took, bounds.Diag)
	}
	// Within RetryAfter, the next check does not start it again: it ends
	// at once with the same reason (it started a new gopls before: the
	// killed one's exit hid the timeout).
	if got := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, candidate}}).Line(); got != "not verified (gopls did not answer within 2s)" {
		t.Errorf("the next check: got %q", got)
	}
	// The stopped helper was killed.
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("the hung gopls is still running")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestDiagnosticsUnderRange(t *testing.T) {
	needGopls(t)
	text := "package m\n\nfunc F() int {\n\treturn x\n}\n\nfunc G() {}\n"
	dir := goModule(t, map[string]string{"a.go": goValid})
	v := newVerifier(t, dir, Options{})
	a := uriOf(dir, "a.go")
	at := strings.Index(text, "return x")
	diags, r := v.Diagnostics(context.Background(), File{a, text}, at, at)
	if !r.Verified || len(diags) != 1 {
		t.Fatalf("got %+v (%+v), want one diagnostic", diags, r)
	}
	d := diags[0]
	x := strings.Index(text, "x\n")
	if d.Message != "undefined: x" || d.Line != 3 || d.Start != x || d.End != x+1 || d.Severity != 1 {
		t.Errorf("got %+v, want undefined: x at [%d,%d) line 3", d, x, x+1)
	}
	g := strings.Index(text, "func G")
	if diags, r := v.Diagnostics(context.Background(), File{a, text}, g, g+len("func G() {}")); !r.Verified || len(diags) != 0 {
		t.Errorf("on G: got %+v (%+v), want none", diags, r)
	}
}

func TestIdleHelperStops(t *testing.T) {
	needGopls(t)
	dir := goModule(t, map[string]string{"a.go": goValid})
	v := newVerifier(t, dir, Options{Idle: time.Second})
	a := uriOf(dir, "a.go")
	if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid}}); !r.Verified {
		t.Fatalf("%+v", r)
	}
	pid := helperPid(t, v, "gopls")
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the idle gopls is still running")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The next check starts it again.
	if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid}}); !r.Verified {
		t.Fatalf("after the idle stop: %+v", r)
	}
}

func TestCloseStopsHelpers(t *testing.T) {
	needGopls(t)
	dir := goModule(t, map[string]string{"a.go": goValid})
	v := newVerifier(t, dir, Options{})
	a := uriOf(dir, "a.go")
	if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid}}); !r.Verified {
		t.Fatalf("%+v", r)
	}
	pid := helperPid(t, v, "gopls")
	v.Close()
	// Close waited for the exit: the process is gone (reaped) now.
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("gopls (pid %d) still runs after Close", pid)
	}
	if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid}}); r.Verified {
		t.Errorf("a check after Close: got %+v, want not verified", r)
	}
}

func TestFirstDiagnosticsTimeoutKeepsLoadingHelper(t *testing.T) {
	needGopls(t)
	dir := goModule(t, map[string]string{"a.go": goValid})
	// A bound no helper meets: every diagnostics wait times out.
	v := newVerifier(t, dir, Options{Bounds: Bounds{Cold: time.Nanosecond}})
	a := uriOf(dir, "a.go")
	r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid}})
	if got, want := r.Line(), "not verified (gopls did not answer within 1ns (still loading))"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	pid := helperPid(t, v, "gopls")
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the loading gopls was stopped: %v", err)
	}
	// The second miss stops it.
	r = v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid}})
	if got, want := r.Line(), "not verified (gopls did not answer within 1ns)"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatal("gopls still runs after its second timeout")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestFilesOutsideTheFoldersAreNotChecked(t *testing.T) {
	dir := goModule(t, map[string]string{"a.go": goValid})
	other := t.TempDir()
	v := newVerifier(t, dir, Options{})
	b := uriOf(other, "b.go")
	if r := v.Check(context.Background(), []File{{b, goValid}}, []File{{b, goValid + "x"}}); !r.None {
		t.Errorf("a file outside the folders: got %+v, want None", r)
	}
	none := New(Options{Env: helperEnv})
	defer none.Close()
	a := uriOf(dir, "a.go")
	if r := none.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid + "x"}}); !r.None {
		t.Errorf("no folders: got %+v, want None", r)
	}
}

// TestCheckPartlyVerified: an edit of a Go and a Python file, with gopls
// and without a Python helper: the error gopls finds is kept, and the
// line says both what gopls found and what was not verified.
func TestCheckPartlyVerified(t *testing.T) {
	needGopls(t)
	dir := goModule(t, map[string]string{"a.go": goValid, "a.py": "x = 1\n"})
	v := newVerifier(t, dir, Options{Servers: map[string]Command{"python": {"no-such-pyright", "--stdio"}}})
	a, p := uriOf(dir, "a.go"), uriOf(dir, "a.py")
	candidate := strings.Replace(goValid, "return 1", "return x", 1)
	r := v.Check(context.Background(), []File{{a, goValid}, {p, "x = 1\n"}}, []File{{a, candidate}, {p, "x = 2\n"}})
	if r.Verified || len(r.NewErrors) != 1 || r.NewErrors[0].Message != "undefined: x" {
		t.Fatalf("got %+v, want not verified with gopls's undefined: x", r)
	}
	if got, want := r.Line(), "verified by gopls: 1 new error: undefined: x; not verified (no no-such-pyright found)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	r = v.Check(context.Background(), []File{{a, goValid}, {p, "x = 1\n"}}, []File{{a, goValid + "\n"}, {p, "x = 2\n"}})
	if got, want := r.Line(), "verified by gopls: no new errors; not verified (no no-such-pyright found)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestCheckSeesDiskChanges: a file written on disk after the helper
// started, not open in the editor (a checkout, a generator), is seen by
// the next check once FilesChanged reports it; so is its removal.
func TestCheckSeesDiskChanges(t *testing.T) {
	for _, tc := range []struct {
		name, file, defines, uses, before string
		need                              func(*testing.T)
	}{
		{"gopls", "a.go", "package m\n\nfunc helper() int { return 2 }\n", "return helper()", goValid, needGopls},
		{"pyright", "a.py", "def helper() -> int:\n    return 2\n", "from b import helper\nx: int = helper()\n", "x: int = 1\n", needPyright},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.need(t)
			dir := goModule(t, map[string]string{tc.file: tc.before})
			v := newVerifier(t, dir, Options{})
			a := uriOf(dir, tc.file)
			candidate := strings.Replace(tc.before, "return 1", tc.uses, 1)
			if tc.name == "pyright" {
				candidate = tc.uses
			}
			if r := v.Check(context.Background(), []File{{a, tc.before}}, []File{{a, candidate}}); len(r.NewErrors) == 0 {
				t.Fatalf("before b was written: got %+v, want an error", r)
			}
			other := "b" + filepath.Ext(tc.file)
			write(t, dir, other, tc.defines)
			v.FilesChanged([]FileChange{{URI: uriOf(dir, other), Type: FileCreated}})
			if r := v.Check(context.Background(), []File{{a, tc.before}}, []File{{a, candidate}}); !r.Verified || len(r.NewErrors) != 0 {
				t.Fatalf("after %s was written: got %+v, want no new errors", other, r)
			}
			if err := os.Remove(filepath.Join(dir, other)); err != nil {
				t.Fatal(err)
			}
			v.FilesChanged([]FileChange{{URI: uriOf(dir, other), Type: FileDeleted}})
			if r := v.Check(context.Background(), []File{{a, tc.before}}, []File{{a, candidate}}); len(r.NewErrors) == 0 {
				t.Fatalf("after %s was removed: got %+v, want an error", other, r)
			}
		})
	}
}

// TestReconfiguredHelpersStop: a helper that no language names any more
// (its language now names no command) is stopped at once, and so is
// every helper by Stop (verify.enable turned off); a later check starts
// one again.
func TestReconfiguredHelpersStop(t *testing.T) {
	needGopls(t)
	dir := goModule(t, map[string]string{"a.go": goValid})
	v := newVerifier(t, dir, Options{})
	a := uriOf(dir, "a.go")
	check := func() Result { return v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid + "\n"}}) }
	gone := func(pid int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("gopls %d still runs", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if r := check(); !r.Verified {
		t.Fatalf("got %+v", r)
	}
	pid := helperPid(t, v, "gopls")
	// Another language's change leaves it running.
	v.SetServers(map[string]Command{"python": {}}, 0)
	if syscall.Kill(pid, 0) != nil || helperPid(t, v, "gopls") != pid {
		t.Fatal("gopls was stopped by a change of python's helper")
	}
	v.SetServers(map[string]Command{"go": {}}, 0)
	gone(pid)
	if r := check(); !r.None {
		t.Fatalf("with go = \"\": got %+v, want no verification", r)
	}
	v.SetServers(nil, 0)
	if r := check(); !r.Verified {
		t.Fatalf("with the defaults again: got %+v", r)
	}
	pid = helperPid(t, v, "gopls")
	v.Stop()
	gone(pid)
	if r := check(); !r.Verified {
		t.Fatalf("after Stop: got %+v, want a new helper to verify", r)
	}
}

// TestCheckEditOfTwoFiles: an edit that declares a function in one file
// and calls it from another, the caller listed first, brings no new
// error: the whole candidate is in the helper before any file of it is
// diagnosed. A call of a name neither declares is still new.
func TestCheckEditOfTwoFiles(t *testing.T) {
	for _, tc := range []struct {
		name, a, aAfter, aBroken, b, bAfter string
		need                                func(*testing.T)
	}{
		{"gopls", goValid, strings.Replace(goValid, "return 1", "return helper()", 1), strings.Replace(goValid, "return 1", "return helpr()", 1),
			"package m\n", "package m\n\nfunc helper() int { return 2 }\n", needGopls},
		{"pyright", "from b import one\n\nx: int = one()\n", "from b import one, two\n\nx: int = two()\n", "from b import one, tw\n\nx: int = tw()\n",
			"def one() -> int:\n    return 1\n", "def one() -> int:\n    return 1\n\n\ndef two() -> int:\n    return 2\n", needPyright},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.need(t)
			ext := ".go"
			if tc.name == "pyright" {
				ext = ".py"
			}
			dir := goModule(t, map[string]string{"a" + ext: tc.a, "b" + ext: tc.b})
			v := newVerifier(t, dir, Options{})
			a, b := uriOf(dir, "a"+ext), uriOf(dir, "b"+ext)
			r := v.Check(context.Background(), []File{{a, tc.a}, {b, tc.b}}, []File{{a, tc.aAfter}, {b, tc.bAfter}})
			if !r.Verified || len(r.NewErrors) != 0 {
				t.Fatalf("got %+v, want no new errors", r)
			}
			r = v.Check(context.Background(), []File{{a, tc.a}, {b, tc.b}}, []File{{a, tc.aBroken}, {b, tc.bAfter}})
			if !r.Verified || len(r.NewErrors) == 0 || r.NewErrors[0].URI != a {
				t.Fatalf("with a misspelt name: got %+v, want a new error in a", r)
			}
		})
	}
}

// TestCheckRenameAndDelete: a file the edit renames is not in the helper
// twice (its declarations are not redeclared), and a file it deletes is
// gone for the check: a touched file that still uses it has a new error.
func TestCheckRenameAndDelete(t *testing.T) {
	t.Run("gopls", func(t *testing.T) {
		needGopls(t)
		const user = "package m\n\nfunc G() int { return F() }\n"
		dir := goModule(t, map[string]string{"a.go": goValid, "b.go": user})
		v := newVerifier(t, dir, Options{})
		a, b, c := uriOf(dir, "a.go"), uriOf(dir, "b.go"), uriOf(dir, "c.go")
		if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{c, goValid}}); !r.Verified || len(r.NewErrors) != 0 {
			t.Errorf("rename a.go → c.go: got %+v, want no new errors", r)
		}
		r := v.Check(context.Background(), []File{{a, goValid}, {b, user}}, []File{{b, user + "\n"}})
		if len(r.NewErrors) != 1 || r.NewErrors[0].Message != "undefined: F" {
			t.Errorf("delete a.go: got %+v, want undefined: F in b.go", r)
		}
		if d, _ := v.Diagnostics(context.Background(), File{a, goValid}, 0, len(goValid)); len(d) != 0 {
			t.Errorf("after the checks a.go has %+v, want its text back", d)
		}
	})
	t.Run("pyright", func(t *testing.T) {
		needPyright(t)
		dir := t.TempDir()
		const lib, user = "def one() -> int:\n    return 1\n", "from a import one\n\nx: int = one()\n"
		write(t, dir, "a.py", lib)
		write(t, dir, "b.py", user)
		v := newVerifier(t, dir, Options{})
		a, b := uriOf(dir, "a.py"), uriOf(dir, "b.py")
		r := v.Check(context.Background(), []File{{a, lib}, {b, user}}, []File{{b, user + "\n"}})
		if len(r.NewErrors) == 0 || r.NewErrors[0].URI != b {
			t.Errorf("delete a.py: got %+v, want a new error in b.py, which imports from it", r)
		}
	})
}

// TestIdleShortenedAtRuntime: verify.idleMinutes made shorter while a
// helper runs applies to it: it stops after the new idle time, not the
// one it started with.
func TestIdleShortenedAtRuntime(t *testing.T) {
	needGopls(t)
	dir := goModule(t, map[string]string{"a.go": goValid})
	v := newVerifier(t, dir, Options{Idle: time.Hour})
	a := uriOf(dir, "a.go")
	if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid}}); !r.Verified {
		t.Fatalf("%+v", r)
	}
	pid := helperPid(t, v, "gopls")
	v.SetServers(nil, time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatal("gopls still runs 20 s after the idle time became 1 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
