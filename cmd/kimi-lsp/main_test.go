package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// binary is the kimi-lsp built once for the tests that run the real
// process.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kimi-lsp-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "kimi-lsp")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building kimi-lsp: %v\n%s", err, out)
		os.Exit(1)
	}
	// The tests that call run in-process pass their own getenv, but the
	// engine finds its explanation directory with os.UserCacheDir: point
	// HOME and the XDG directories of the whole test binary into dir so
	// that nothing reaches the user's real ones. (After the build: go
	// build keeps its cache under the user's cache directory.)
	if err := sandboxUserDirs(filepath.Join(dir, "home")); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// sandboxUserDirs sets HOME and the XDG base directories of this process
// to directories under home, created empty.
func sandboxUserDirs(home string) error {
	for _, kv := range [][2]string{
		{"HOME", home},
		{"XDG_CONFIG_HOME", filepath.Join(home, ".config")},
		{"XDG_CACHE_HOME", filepath.Join(home, ".cache")},
		{"XDG_STATE_HOME", filepath.Join(home, ".local", "state")},
		{"XDG_DATA_HOME", filepath.Join(home, ".local", "share")},
	} {
		if err := os.MkdirAll(kv[1], 0o700); err != nil {
			return err
		}
		if err := os.Setenv(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// testEnv is a clean environment: HOME and the XDG directories in a
// temporary directory, plus extra.
func testEnv(t *testing.T, extra ...string) []string {
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "PATH=" + os.Getenv("PATH"),
		// The helper language servers (gopls) keep their temporary files
		// here, and use the Go toolchain at hand.
		"TMPDIR=" + t.TempDir(), "GOTOOLCHAIN=local", "GOFLAGS=-modcacherw", "GOTELEMETRY=off"}
	return append(env, extra...)
}

func envFunc(env []string) func(string) string {
	return func(k string) string {
		for _, kv := range env {
			if name, v, ok := strings.Cut(kv, "="); ok && name == k {
				return v
			}
		}
		return ""
	}
}

// process is the real binary serving LSP on pipes.
type process struct {
	cmd    *exec.Cmd
	ed     *lsptest.Editor
	stdin  io.WriteCloser
	stdout *bytes.Buffer // a copy of everything written to stdout
	stderr *bytes.Buffer
	done   chan error
}

type teeReader struct {
	r io.Reader
	w *bytes.Buffer
}

func (t teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.w.Write(p[:n])
	return n, err
}

func start(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	p := &process{cmd: cmd, stdin: stdin, stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.ed = lsptest.New(teeReader{out, p.stdout}, stdin)
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Errorf("kimi-lsp did not exit after stdin closed")
		}
	})
	return p
}

// wait returns the exit code.
func (p *process) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
		p.done <- nil // for the cleanup
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(30 * time.Second):
		t.Fatalf("kimi-lsp did not exit; stderr:\n%s", p.stderr)
		return -1
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestVersion(t *testing.T) {
	out, err := exec.Command(binary, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "kimi-lsp ") {
		t.Errorf("kimi-lsp version: %q, %v", out, err)
	}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(*process)
		want int
	}{
		{"shutdown+exit", func(p *process) {
			p.ed.Call(context.Background(), "shutdown", nil, nil)
			p.ed.Notify("exit", nil)
		}, 0},
		{"exit alone", func(p *process) { p.ed.Notify("exit", nil) }, 1},
		{"EOF", func(p *process) { p.stdin.Close() }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, testEnv(t), "--stdio")
			if _, err := p.ed.Initialize(ctxT(t), nil); err != nil {
				t.Fatal(err)
			}
			tc.run(p)
			if got := p.wait(t); got != tc.want {
				t.Errorf("exit code %d, want %d; stderr:\n%s", got, tc.want, p.stderr)
			}
		})
	}
}

// TestParentProcessDeath: the server exits when the editor process named in
// initialize's processId dies.
func TestParentProcessDeath(t *testing.T) {
	parent := exec.Command("sleep", "60")
	if err := parent.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	p := start(t, testEnv(t))
	params := lsptest.DefaultInitializeParams("")
	params["processId"] = parent.Process.Pid
	if _, err := p.ed.Initialize(ctxT(t), params); err != nil {
		t.Fatal(err)
	}
	parent.Process.Kill()
	parent.Wait()
	if got := p.wait(t); got != 1 {
		t.Errorf("exit code %d after the editor died, want 1", got)
	}
}

// TestStdoutOnlyFramesAndKeyRedacted runs a session that logs at debug
// level, makes a model request that fails with the key echoed back, and
// checks that stdout holds nothing but well-formed frames and that the key
// appears nowhere: not in the log, not in any message to the editor.
func TestStdoutOnlyFramesAndKeyRedacted(t *testing.T) {
	const key = "sk-test-SECRETKEY-0123456789abcdef"
	srv := modeltest.NewServer(modeltest.Config{Key: key, Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Fault: "400", Message: "invalid request for key " + key},
	}}})
	defer srv.Close()
	dir := t.TempDir()
	logFile := filepath.Join(dir, "server.log")
	p := start(t, testEnv(t, "KIMI_API_KEY="+key, "KIMI_BASE_URL="+srv.URL), "--log-level", "debug", "--log-file", logFile)
	if _, err := p.ed.Initialize(ctxT(t), lsptest.DefaultInitializeParams(string(workspace.FileURI(dir)))); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "a.go")
	os.WriteFile(file, []byte("package a\n"), 0o644)
	uri := string(workspace.FileURI(file))
	p.ed.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": "package a\n"}})
	var reply map[string]any
	if err := p.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{
		"command": "kimi.explain", "arguments": []any{map[string]any{"uri": uri, "range": map[string]any{
			"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 9}}}},
		"workDoneToken": "t",
	}, &reply); err != nil {
		t.Fatal(err)
	}
	end, err := p.ed.WaitMethod(ctxT(t), "$/progress", func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"end"`) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(end.Params), "failed") {
		t.Errorf("progress end %s, want a failure", end.Params)
	}
	p.ed.Call(ctxT(t), "shutdown", nil, nil)
	p.ed.Notify("exit", nil)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
	// stdout: frames only.
	<-p.ed.Done()
	r := bufio.NewReader(bytes.NewReader(p.stdout.Bytes()))
	frames := 0
	for {
		body, err := lsptest.ReadFrame(r)
		if err == io.EOF {
			break
		}
		if err != nil || !json.Valid(body) {
			t.Fatalf("stdout holds something other than JSON-RPC frames after %d frames: %v", frames, err)
		}
		frames++
	}
	logText, _ := os.ReadFile(logFile)
	if len(logText) == 0 || !strings.Contains(string(logText), "level=DEBUG") {
		t.Errorf("the debug log is empty")
	}
	for name, text := range map[string]string{"stdout": p.stdout.String(), "stderr": p.stderr.String(), "log file": string(logText)} {
		if strings.Contains(text, key) || strings.Contains(text, "SECRETKEY") {
			t.Errorf("the API key appears in %s", name)
		}
	}
	if len(srv.Requests()) == 0 {
		t.Errorf("no request reached the provider")
	}
}

func TestDoctor(t *testing.T) {
	t.Run("no key", func(t *testing.T) {
		// Without a key doctor says so, from the endpoint's own 401: the
		// endpoint is a stand-in, never the real default one (the test
		// used to reach for it, and timed how long that took).
		srv := modeltest.NewServer(modeltest.Config{})
		defer srv.Close()
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"doctor"}, nil, &out, &errb, envFunc(testEnv(t, "KIMI_BASE_URL="+srv.URL)))
		if code != 1 || !strings.Contains(out.String(), "KIMI_API_KEY") {
			t.Errorf("doctor without a key: code %d, output:\n%s", code, out.String())
		}
		if !strings.Contains(out.String(), "requires one (HTTP 401): set KIMI_API_KEY") || len(srv.Requests()) == 0 {
			t.Errorf("doctor without a key did not ask the stand-in endpoint:\n%s", out.String())
		}
	})
	t.Run("endpoint", func(t *testing.T) {
		srv := modeltest.NewServer(modeltest.Config{})
		defer srv.Close()
		var out, errb bytes.Buffer
		env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
		code := run(context.Background(), []string{"doctor", "--stats"}, nil, &out, &errb, envFunc(env))
		text := out.String()
		if code != 0 || !strings.Contains(text, "OK: kimi-k3.1-pro-highspeed (reasoning_effort low, for explain, completion) answered") ||
			!strings.Contains(text, "OK: kimi-k3.1-pro (reasoning_effort high, for fix, rewrite, document, tests) answered") {
			t.Errorf("doctor: code %d, output:\n%s\n%s", code, text, errb.String())
		}
		if strings.Contains(text, srv.Key) || !strings.Contains(text, "(from KIMI_API_KEY)") {
			t.Errorf("doctor shows the key or not its source:\n%s", text)
		}
		if !strings.Contains(text, `baseURL = "`+srv.URL+`" (from KIMI_BASE_URL)`) {
			t.Errorf("doctor does not show where baseURL came from:\n%s", text)
		}
		if !strings.Contains(text, "Prompt cache") {
			t.Errorf("doctor --stats printed no statistics section:\n%s", text)
		}
	})
	// Issue 13 item 9: both models are checked, each with the effort its
	// actions send; a model the provider refuses fails doctor.
	t.Run("edit model refused", func(t *testing.T) {
		_, code, text := doctorAgainstStandIn(t, "KIMI_MODEL=nope")
		if code != 1 || !strings.Contains(text, "OK: kimi-k3.1-pro-highspeed") ||
			!strings.Contains(text, `failed: nope (reasoning_effort high, for fix, rewrite, document, tests): the provider rejected the request`) ||
			!strings.Contains(text, `model "nope" is not supported`) {
			t.Errorf("doctor with KIMI_MODEL=nope: code %d, output:\n%s", code, text)
		}
	})
	// kimi-k3 accepts max only (seed 003): doctor sends max and says why.
	t.Run("kimi-k3", func(t *testing.T) {
		srv, code, text := doctorAgainstStandIn(t, "KIMI_MODEL=kimi-k3")
		if code != 0 || !strings.Contains(text, "OK: kimi-k3 (reasoning_effort max, for fix, rewrite, document, tests); kimi-k3 accepts reasoning_effort max only") ||
			!strings.Contains(text, `reasoningEffort.fix = "max" (from the model kimi-k3, which accepts reasoning_effort max only)`) {
			t.Errorf("doctor with KIMI_MODEL=kimi-k3: code %d, output:\n%s", code, text)
		}
		for _, r := range srv.Requests() {
			if r.Parsed != nil && r.Parsed.Model == "kimi-k3" && (r.Parsed.ReasoningEffort == nil || *r.Parsed.ReasoningEffort != "max") {
				t.Errorf("kimi-k3 checked with %s", r.Body)
			}
		}
	})
	// Issue 15 item 4: one reason per message.
	t.Run("no key, own endpoint", func(t *testing.T) {
		_, code, text := doctorAgainstStandIn(t, "KIMI_API_KEY=")
		if code != 1 || !strings.Contains(text, "no API key is configured") || strings.Contains(text, "refused the API key") {
			t.Errorf("doctor without a key against an endpoint that wants one: code %d, output:\n%s", code, text)
		}
	})
	// Issue 21 item 22: a doctor that lists problems does not pass, with
	// the endpoint check or without it.
	t.Run("problems exit 1", func(t *testing.T) {
		srv := modeltest.NewServer(modeltest.Config{})
		defer srv.Close()
		env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
		home := envFunc(env)("XDG_CONFIG_HOME")
		os.MkdirAll(filepath.Join(home, "kimi-lsp"), 0o755)
		if err := os.WriteFile(filepath.Join(home, "kimi-lsp", "config.toml"), []byte("cacheTTL = \"7m\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"doctor"}, {"doctor", "--offline"}} {
			var out, errb bytes.Buffer
			code := run(context.Background(), args, nil, &out, &errb, envFunc(env))
			if code != 1 || !strings.Contains(out.String(), "Problems:") || !strings.Contains(out.String(), "cacheTTL") {
				t.Errorf("%v with a bad user file: code %d, output:\n%s%s", args, code, out.String(), errb.String())
			}
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		var out, errb bytes.Buffer
		env := testEnv(t, "KIMI_API_KEY=k", "KIMI_BASE_URL=http://127.0.0.1:1")
		code := run(context.Background(), []string{"doctor", "--timeout", "3s"}, nil, &out, &errb, envFunc(env))
		if code != 1 || !strings.Contains(out.String(), "failed") {
			t.Errorf("doctor against a closed port: code %d, output:\n%s", code, out.String())
		}
	})
}

func TestExplainAndEditCommands(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644)
	file := filepath.Join(dir, "calc.go")
	before := "package m\n\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n"
	os.WriteFile(file, []byte(before), 0o644)
	diff := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -3,3 +3,3 @@\n func Sub(a, b int) int {\n-\treturn a + b\n+\treturn a - b\n }\n```"
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: `action="explain"`, Content: "Sub returns the sum, not the difference.", Chunks: 5},
		{Match: `action="rewrite"`, Content: diff},
	}}})
	defer srv.Close()
	env := envFunc(testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL))

	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"explain", file + ":3-5"}, nil, &out, &errb, env); code != 0 {
		t.Fatalf("explain: code %d: %s", code, errb.String())
	}
	if out.String() != "Sub returns the sum, not the difference.\n" {
		t.Errorf("explain printed %q", out.String())
	}
	body := string(srv.Requests()[0].Body)
	if !strings.Contains(body, `selection lines=\"3-5\"`) {
		t.Errorf("the range 3-5 did not reach the prompt")
	}

	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"edit", file + ":3-5", "-m", "make it subtract"}, nil, &out, &errb, env); code != 0 {
		t.Fatalf("edit: code %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "-\treturn a + b\n+\treturn a - b") || !strings.Contains(out.String(), "+++ b/calc.go") {
		t.Errorf("edit printed:\n%s", out.String())
	}
	if b, _ := os.ReadFile(file); string(b) != before {
		t.Errorf("edit without --write changed the file")
	}
	out.Reset()
	if code := run(context.Background(), []string{"edit", file + ":3-5", "-m", "make it subtract", "--write"}, nil, &out, &errb, env); code != 0 {
		t.Fatalf("edit --write: code %d: %s", code, errb.String())
	}
	if b, _ := os.ReadFile(file); string(b) != strings.Replace(before, "a + b", "a - b", 1) {
		t.Errorf("after edit --write:\n%s", b)
	}
}

func TestBadArguments(t *testing.T) {
	for _, args := range [][]string{{"--log-level", "loud"}, {"frobnicate"}, {"explain"}, {"edit", "x.go"}, {"serve", "extra"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, strings.NewReader(""), &out, &errb, envFunc(testEnv(t))); code != 2 {
			t.Errorf("%q: code %d, want 2 (stderr %q)", args, code, errb.String())
		}
		if out.Len() != 0 && args[0] != "frobnicate" {
			t.Errorf("%q wrote to stdout: %q", args, out.String())
		}
	}
}

// TestDoctorStatsAfterSession: an editor session leaves its statistics for
// "kimi-lsp doctor --stats".
func TestDoctorStatsAfterSession(t *testing.T) {
	srv := modeltest.NewServer(modeltest.Config{})
	defer srv.Close()
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	dir := t.TempDir()
	p := start(t, env)
	if _, err := p.ed.Initialize(ctxT(t), lsptest.DefaultInitializeParams(string(workspace.FileURI(dir)))); err != nil {
		t.Fatal(err)
	}
	uri := string(workspace.FileURI(filepath.Join(dir, "a.go")))
	p.ed.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": "package a\n"}})
	if err := p.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{
		"command": "kimi.explain", "arguments": []any{map[string]any{"uri": uri, "range": map[string]any{
			"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 9}}}},
		"workDoneToken": "t",
	}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ed.WaitMethod(ctxT(t), "$/progress", func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"end"`) }); err != nil {
		t.Fatal(err)
	}
	p.ed.Call(ctxT(t), "shutdown", nil, nil)
	p.ed.Notify("exit", nil)
	p.wait(t)
	var out, errb bytes.Buffer
	run(context.Background(), []string{"doctor", "--stats", "--offline"}, nil, &out, &errb, envFunc(env))
	want := fmt.Sprintf("prompt tokens       %d", srv.Requests()[0].Usage.PromptTokens)
	if !strings.Contains(out.String(), "requests            1") || !strings.Contains(out.String(), want) {
		t.Errorf("doctor --stats after one explanation:\n%s\nwant 1 request and %q", out.String(), want)
	}
}

// TestCLISharesTaskBuilder: the command line builds its task with the
// server's builder: an active file over context.maxFileSize is sent as a
// window around the range, and the user is told (#12.13); the key echoed by
// the provider is struck from what is printed (#12.6).
func TestCLISharesTaskBuilder(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644)
	var b strings.Builder
	b.WriteString("package m\n\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "func F%04d() int { return %d }\n", i, i)
	}
	file := filepath.Join(dir, "big.go")
	os.WriteFile(file, []byte(b.String()), 0o644)
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: `action="explain"`, Content: "F1000 returns 1000. Your key is " + modeltest.DefaultKey + ".", Chunks: 9},
	}}})
	defer srv.Close()
	envList := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	env := envFunc(envList)
	cfgDir := filepath.Join(env("XDG_CONFIG_HOME"), "kimi-lsp")
	os.MkdirAll(cfgDir, 0o700)
	os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("[context]\nmaxFileSize = 4096\n"), 0o600)

	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"explain", file + ":1003-1003"}, nil, &out, &errb, env); code != 0 {
		t.Fatalf("explain: code %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "over context.maxFileSize") {
		t.Errorf("stderr does not tell the user the file was cut:\n%s", errb.String())
	}
	body := string(srv.Requests()[0].Body)
	if strings.Contains(body, "func F0003()") || !strings.Contains(body, "func F1000()") {
		t.Errorf("the prompt is not a window around the range")
	}
	if strings.Contains(out.String(), modeltest.DefaultKey) || !strings.Contains(out.String(), "[REDACTED]") {
		t.Errorf("stdout %q", out.String())
	}
}

// TestCLIErrorHasNoInternalPrefix: a provider error reaches the user as
// one sentence, without the tool loop's "round 1:" (issue 15 item 4).
func TestCLIErrorHasNoInternalPrefix(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644)
	file := filepath.Join(dir, "a.go")
	os.WriteFile(file, []byte("package m\n\nfunc A() {}\n"), 0o644)
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{Fault: "400", Message: "quota for this model is exhausted"}}})
	defer srv.Close()
	env := envFunc(testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL))
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"explain", file}, nil, &out, &errb, env)
	if code != 1 || !strings.Contains(errb.String(), "quota for this model is exhausted") || strings.Contains(errb.String(), "round") {
		t.Errorf("code %d, stderr %q", code, errb.String())
	}
}

// TestReadmeTryOut runs the README's stand-in try-out as written: the
// script kimi-standin is started with, the calc.go it writes, then explain,
// edit and edit --write (issue 21 item 22: the try-out could never show a
// diff). Keep it in step with README.md, "Try it without an editor".
func TestReadmeTryOut(t *testing.T) {
	sc, err := modeltest.LoadScript(filepath.Join("..", "..", "assist", "model", "modeltest", "cmd", "kimi-standin", "testdata", "tryout.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := modeltest.NewServer(modeltest.Config{Script: sc})
	defer srv.Close()
	dir := t.TempDir()
	t.Chdir(dir)
	// printf 'package calc\n\n// Sub returns a minus b.\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n' > calc.go
	if err := os.WriteFile("calc.go", []byte("package calc\n\n// Sub returns a minus b.\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := envFunc(testEnv(t, "KIMI_API_KEY="+modeltest.DefaultKey, "KIMI_BASE_URL="+srv.URL))
	step := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, nil, &out, &errb, env); code != 0 {
			t.Fatalf("%q: code %d: %s", args, code, errb.String())
		}
		return out.String() + errb.String()
	}
	if got := step("explain", "calc.go:4-6"); !strings.Contains(got, "it returns a + b") {
		t.Errorf("explain printed %q", got)
	}
	if got := step("edit", "calc.go:4-6", "-m", "fix Sub"); !strings.Contains(got, "-\treturn a + b\n+\treturn a - b") || !strings.Contains(got, "not written") {
		t.Errorf("edit printed %q", got)
	}
	if got := step("edit", "calc.go:4-6", "-m", "fix Sub", "--write"); !strings.Contains(got, "wrote 1 file") {
		t.Errorf("edit --write printed %q", got)
	}
	if b, _ := os.ReadFile("calc.go"); !strings.Contains(string(b), "\treturn a - b\n") {
		t.Errorf("calc.go after --write:\n%s", b)
	}
}
