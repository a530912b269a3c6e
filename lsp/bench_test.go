package lsp

// Benchmarks of the protocol layer (issue 5 (a) and the cost of opening
// buffers behind issue 2 (b)); figures and commands are in bench/README.md.
//
//	go test ./lsp -run '^$' -bench . -benchmem

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// benchSession is an in-process server on io.Pipes driven by the fake
// editor, for benchmarks.
type benchSession struct {
	srv  *Server
	ed   *lsptest.Editor
	dir  string
	uris []string
}

// newBenchSession starts a server rooted at a temporary folder, initialises
// it as a capable client would, and opens one buffer per text (written to
// disk too, as an editor's files would be).
func newBenchSession(b *testing.B, texts []string) *benchSession {
	b.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	srv, err := NewServer(inR, outW, inR, Options{
		Version:        "bench",
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
		ExplanationDir: b.TempDir(),
	})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		srv.Run(context.Background())
		outW.Close()
		close(done)
	}()
	bs := &benchSession{srv: srv, ed: lsptest.New(outR, inW), dir: dir}
	b.Cleanup(func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			b.Errorf("server did not stop after its input closed")
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := bs.ed.Initialize(ctx, lsptest.DefaultInitializeParams(string(workspace.FileURI(dir)))); err != nil {
		b.Fatal(err)
	}
	for i, text := range texts {
		p := filepath.Join(dir, fmt.Sprintf("buf%03d.go", i))
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
		uri := string(workspace.FileURI(p))
		bs.uris = append(bs.uris, uri)
		if err := bs.ed.Notify("textDocument/didOpen", map[string]any{
			"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": text},
		}); err != nil {
			b.Fatal(err)
		}
	}
	bs.sync(b)
	return bs
}

// sync returns once the server has read everything sent before: a request
// is read after every earlier notification, and one it does not know is
// answered at once.
func (bs *benchSession) sync(b *testing.B) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := bs.ed.Call(ctx, "kimiBench/sync", nil, nil)
	if re, ok := err.(*lsptest.ResponseError); !ok || re.Code != -32601 {
		b.Fatalf("sync request: got %v, want method not found", err)
	}
}

// benchTexts returns n buffers of real Go source from GOROOT, each at most
// size bytes cut at a line end, the same on every run of one Go release.
func benchTexts(b *testing.B, n, size int) []string {
	b.Helper()
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	var out []string
	var cur bytes.Buffer
	errEnough := fmt.Errorf("enough")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || d.Name() == "vendor" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range strings.SplitAfter(string(data), "\n") {
			if cur.Len()+len(line) > size && cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
				if len(out) == n {
					return errEnough
				}
			}
			if len(line) <= size {
				cur.WriteString(line)
			}
		}
		return nil
	})
	if err != nil && err != errEnough {
		b.Fatal(err)
	}
	if len(out) < n {
		b.Skipf("GOROOT/src gives only %d buffers of %d bytes", len(out), size)
	}
	return out
}

// diagnosticsJSON is what an editor passes in a codeAction context.
var diagnosticsJSON = []any{
	map[string]any{"range": map[string]any{"start": map[string]any{"line": 10, "character": 1}, "end": map[string]any{"line": 10, "character": 9}},
		"severity": 1, "source": "compiler", "message": "undefined: fooBar"},
	map[string]any{"range": map[string]any{"start": map[string]any{"line": 12, "character": 4}, "end": map[string]any{"line": 12, "character": 7}},
		"severity": 2, "source": "vet", "message": "result of fmt.Sprintf call not used"},
}

func codeActionParamsFor(uri string, diags []any) map[string]any {
	return map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range":        map[string]any{"start": map[string]any{"line": 10, "character": 0}, "end": map[string]any{"line": 14, "character": 0}},
		"context":      map[string]any{"diagnostics": diags},
	}
}

// BenchmarkCodeAction is issue 5 (a): one textDocument/codeAction round
// trip through the pipes (the editor's encoding and decoding included)
// with 50 open buffers of 50 KB, cycling over the buffers.
func BenchmarkCodeAction(b *testing.B) {
	bs := newBenchSession(b, benchTexts(b, 50, 50*1024))
	for _, c := range []struct {
		name  string
		diags []any
	}{
		{"plain", []any{}},
		{"2diagnostics", diagnosticsJSON},
	} {
		b.Run(c.name, func(b *testing.B) {
			params := make([]map[string]any, len(bs.uris))
			for i, u := range bs.uris {
				params[i] = codeActionParamsFor(u, c.diags)
			}
			ctx := context.Background()
			var actions []json.RawMessage
			if err := bs.ed.Call(ctx, "textDocument/codeAction", params[0], &actions); err != nil || len(actions) < 5 {
				b.Fatalf("codeAction: %d actions, %v", len(actions), err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				actions = actions[:0]
				if err := bs.ed.Call(ctx, "textDocument/codeAction", params[i%len(params)], &actions); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCodeActionHandler is the server's share of a codeAction: the
// handler alone on already-decoded params (50 open buffers), without the
// transport.
func BenchmarkCodeActionHandler(b *testing.B) {
	bs := newBenchSession(b, benchTexts(b, 50, 50*1024))
	for _, c := range []struct {
		name  string
		diags []any
	}{
		{"plain", []any{}},
		{"2diagnostics", diagnosticsJSON},
	} {
		b.Run(c.name, func(b *testing.B) {
			raws := make([]json.RawMessage, len(bs.uris))
			for i, u := range bs.uris {
				raws[i], _ = json.Marshal(codeActionParamsFor(u, c.diags))
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := handleCodeAction(bs.srv, ctx, &request{params: raws[i%len(raws)], view: bs.srv.takeView()})
				if err != nil {
					b.Fatal(err)
				}
				if acts, ok := res.([]codeAction); !ok || len(acts) < 5 {
					b.Fatalf("handleCodeAction returned %T %v", res, res)
				}
			}
		})
	}
}

// BenchmarkDidOpen50KB measures the server's cost of one didOpen of a 50 KB
// buffer, frames pre-encoded (so the editor's JSON encoding is not
// counted): each op closes one of 100 buffers and opens it again; one sync
// request at the end makes sure all were read and applied.
func BenchmarkDidOpen50KB(b *testing.B) {
	texts := benchTexts(b, 100, 50*1024)
	bs := newBenchSession(b, texts)
	frame := func(method string, params any) []byte {
		body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
		if err != nil {
			b.Fatal(err)
		}
		return append([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))), body...)
	}
	opens := make([][]byte, len(texts))
	closes := make([][]byte, len(texts))
	size := 0
	for i, t := range texts {
		opens[i] = frame("textDocument/didOpen", map[string]any{
			"textDocument": map[string]any{"uri": bs.uris[i], "languageId": "go", "version": 2, "text": t},
		})
		closes[i] = frame("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": bs.uris[i]}})
		size += len(t)
	}
	b.SetBytes(int64(size / len(texts)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(texts)
		if err := bs.ed.WriteRaw(closes[k]); err != nil {
			b.Fatal(err)
		}
		if err := bs.ed.WriteRaw(opens[k]); err != nil {
			b.Fatal(err)
		}
	}
	bs.sync(b)
}

// BenchmarkJob is the server's cost per job: executeCommand answered with
// a job id, the job started in the engine, its progress begun and ended,
// its result shown with window/showDocument — for an explanation served
// from the earlier answer, so no model call is timed. Jobs overlap as they
// would when a user fires them quickly; the figure is wall time per job.
func BenchmarkJob(b *testing.B) {
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{{Match: `action="explain"`, Content: "ok"}}}})
	defer srv.Close()
	env := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
	cfg, _ := config.Default().WithEnv(func(k string) string { return env[k] })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	dir, _ := filepath.EvalSymlinks(b.TempDir())
	s, err := NewServer(inR, outW, inR, Options{Version: "bench", Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), ExplanationDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		s.Run(context.Background())
		outW.Close()
	}()
	defer inW.Close()
	ed := lsptest.New(outR, inW)
	ed.Handle("window/showDocument", func(json.RawMessage) (any, *lsptest.ResponseError) { return map[string]bool{"success": true}, nil })
	ctx := context.Background()
	if _, err := ed.Initialize(ctx, lsptest.DefaultInitializeParams(string(workspace.FileURI(dir)))); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "a.go")
	text := "package a\n\nfunc A() int { return 1 }\n"
	os.WriteFile(path, []byte(text), 0o644)
	uri := string(workspace.FileURI(path))
	ed.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": text}})
	run := func(i int) {
		err := ed.Call(ctx, "workspace/executeCommand", map[string]any{
			"command": "kimi.explain", "workDoneToken": i,
			"arguments": []any{map[string]any{"uri": uri, "range": map[string]any{"start": map[string]int{"line": 2, "character": 0}, "end": map[string]int{"line": 2, "character": 26}}}},
		}, nil)
		if err != nil {
			b.Fatal(err)
		}
	}
	ends := func(n int) {
		seen := 0
		if _, err := ed.Wait(ctx, func(m *lsptest.Message) bool {
			if m.Method == "$/progress" && bytes.Contains(m.Params, []byte(`"kind":"end"`)) {
				seen++
			}
			return seen == n
		}); err != nil {
			b.Fatal(err)
		}
	}
	run(-1) // the model call that fills the explanation store
	ends(1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run(i)
	}
	ends(b.N + 1)
}
