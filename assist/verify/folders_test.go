package verify

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// liveFolders is a workspace's folder list that a test changes while the
// helpers run, as the editor's workspace/didChangeWorkspaceFolders does.
type liveFolders struct {
	mu   sync.Mutex
	list []workspace.URI
}

func (l *liveFolders) get() []workspace.URI {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.list)
}

func (l *liveFolders) set(dirs ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = l.list[:0]
	for _, d := range dirs {
		l.list = append(l.list, workspace.FileURI(d))
	}
}

// foldersVerifier returns a Verifier whose folders are l's.
func foldersVerifier(t *testing.T, l *liveFolders, opts Options) *Verifier {
	t.Helper()
	opts.Folders = l.get
	opts.Env = append(opts.Env, helperEnv...)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	v := New(opts)
	t.Cleanup(func() { v.Close() })
	return v
}

// A second module: n.go uses what helper.go and the package sub of the
// module declare, which gopls finds only with a view of the module.
const (
	secondGoMod  = "module example.com/n\n\ngo 1.22\n"
	secondHelper = "package n\n\nfunc Helper() int { return 2 }\n"
	secondSub    = "package sub\n\nconst K = 3\n"
	secondUse    = "package n\n\nimport \"example.com/n/sub\"\n\nfunc G() int {\n\treturn Helper() + sub.K\n}\n"
)

func secondModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "go.mod", secondGoMod)
	write(t, dir, "helper.go", secondHelper)
	write(t, dir, "sub/sub.go", secondSub)
	write(t, dir, "n.go", secondUse)
	return dir
}

// TestFolderAddedAfterStart: a workspace folder added after gopls started
// (another Go module) is told to gopls: an edit there is checked with the
// module's view (its one new error, not the module's own names as
// undefined), Diagnostics and Definitions work there.
func TestFolderAddedAfterStart(t *testing.T) {
	needGopls(t)
	first := goModule(t, map[string]string{"a.go": goValid})
	second := secondModule(t)
	l := &liveFolders{}
	l.set(first)
	v := foldersVerifier(t, l, Options{})
	a := uriOf(first, "a.go")
	if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid + "\n"}}); !r.Verified || len(r.NewErrors) != 0 {
		t.Fatalf("first folder: got %+v, want verified, no new errors", r)
	}
	pid := helperPid(t, v, "gopls")

	l.set(first, second)
	n := uriOf(second, "n.go")
	candidate := strings.Replace(secondUse, "sub.K", "sub.K + y", 1) + "\nfunc H() int { return Helper() + sub.K }\n"
	r := v.Check(context.Background(), []File{{n, secondUse}}, []File{{n, candidate}})
	if !r.Verified || len(r.NewErrors) != 1 || r.NewErrors[0].Message != "undefined: y" || r.NewErrors[0].Line != 5 {
		t.Fatalf("added folder: got %+v, want verified with one new error, undefined: y on line 5", r)
	}
	broken := strings.Replace(secondUse, "sub.K", "sub.K + z", 1)
	at := strings.Index(broken, "z\n")
	diags, dr := v.Diagnostics(context.Background(), File{n, broken}, at, at)
	if !dr.Verified || len(diags) != 1 || diags[0].Message != "undefined: z" {
		t.Errorf("added folder: Diagnostics got %+v (%+v), want undefined: z alone", diags, dr)
	}
	out, dres := definitionsOnce(t, v, File{n, secondUse}, []int{strings.Index(secondUse, "Helper()"), strings.Index(secondUse, "K\n")})
	if !dres.Verified || len(out) != 2 || len(out[0]) != 1 || out[0][0].URI != uriOf(second, "helper.go") ||
		len(out[1]) != 1 || out[1][0].URI != uriOf(second, "sub/sub.go") {
		t.Errorf("added folder: Definitions got %+v (%+v), want helper.go and sub/sub.go", out, dres)
	}
	if got := helperPid(t, v, "gopls"); got != pid {
		t.Errorf("gopls was started again (pid %d, then %d): it takes folder changes", pid, got)
	}
}

// noFoldersProxy, set in the environment, makes the test binary a real
// gopls whose initialize result does not declare workspace folder
// support (as a helper without it): runNoFoldersProxy.
const noFoldersProxy = "VERIFY_TEST_NO_FOLDERS_PROXY"

// runNoFoldersProxy runs gopls between its stdin and stdout, with
// capabilities.workspace.workspaceFolders taken out of its initialize
// result, and returns gopls's exit code.
func runNoFoldersProxy() int {
	cmd := exec.Command("gopls")
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 2
	}
	if err := cmd.Start(); err != nil {
		return 2
	}
	r := bufio.NewReader(out)
	for {
		body, err := readFrame(r)
		if err != nil {
			break
		}
		var msg map[string]any
		if json.Unmarshal(body, &msg) == nil {
			if res, ok := msg["result"].(map[string]any); ok {
				if caps, ok := res["capabilities"].(map[string]any); ok {
					if ws, ok := caps["workspace"].(map[string]any); ok {
						delete(ws, "workspaceFolders")
						body, _ = json.Marshal(msg)
					}
				}
			}
		}
		fmt.Fprintf(os.Stdout, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	if err := cmd.Wait(); err != nil {
		return 1
	}
	return 0
}

// TestFolderChangeRestartsHelperWithout: a helper that does not declare
// workspace folder support is started again, with the folders, at its
// next operation after they changed; it gives the added folder's edit its
// one new error.
func TestFolderChangeRestartsHelperWithout(t *testing.T) {
	needGopls(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	first := goModule(t, map[string]string{"a.go": goValid})
	second := secondModule(t)
	l := &liveFolders{}
	l.set(first)
	v := foldersVerifier(t, l, Options{Servers: map[string]Command{"go": {self}}, Env: []string{noFoldersProxy + "=1"}})
	a := uriOf(first, "a.go")
	if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid + "\n"}}); !r.Verified || len(r.NewErrors) != 0 {
		t.Fatalf("first folder: got %+v, want verified, no new errors", r)
	}
	pid := helperPid(t, v, self)
	v.mu.Lock()
	h := v.helpers[slotKey(Command{self}, true)].h
	v.mu.Unlock()
	if h.folderChanges {
		t.Fatal("the proxy declares workspace folder support")
	}

	l.set(first, second)
	n := uriOf(second, "n.go")
	candidate := strings.Replace(secondUse, "sub.K", "sub.K + y", 1) + "\nfunc H() int { return Helper() + sub.K }\n"
	r := v.Check(context.Background(), []File{{n, secondUse}}, []File{{n, candidate}})
	if !r.Verified || len(r.NewErrors) != 1 || r.NewErrors[0].Message != "undefined: y" {
		t.Fatalf("added folder: got %+v, want verified with one new error, undefined: y", r)
	}
	if got := helperPid(t, v, self); got == pid {
		t.Errorf("the helper was not started again after the folders changed")
	}
	select {
	case <-h.exited:
	case <-time.After(5 * time.Second):
		t.Errorf("the helper that gave way did not exit")
	}
}

// TestFolderRemoved: a folder removed from the workspace is told to gopls
// (its files are no longer checked); removing the folder gopls runs in
// stops it at once, and the next check starts one in the folder left;
// with no folder left every helper stops.
func TestFolderRemoved(t *testing.T) {
	needGopls(t)
	first := goModule(t, map[string]string{"a.go": goValid})
	second := secondModule(t)
	l := &liveFolders{}
	l.set(first, second)
	v := foldersVerifier(t, l, Options{})
	n := uriOf(second, "n.go")
	check := func(what string) {
		t.Helper()
		candidate := strings.Replace(secondUse, "sub.K", "sub.K + y", 1) + "\nfunc H() int { return Helper() + sub.K }\n"
		r := v.Check(context.Background(), []File{{n, secondUse}}, []File{{n, candidate}})
		if !r.Verified || len(r.NewErrors) != 1 || r.NewErrors[0].Message != "undefined: y" {
			t.Fatalf("%s: got %+v, want verified with one new error, undefined: y", what, r)
		}
	}
	check("two folders")
	pid := helperPid(t, v, "gopls")

	// The first folder goes: gopls runs in it, so it stops now.
	l.set(second)
	v.FoldersChanged()
	v.mu.Lock()
	s := v.helpers[slotKey(Command{"gopls"}, true)]
	v.mu.Unlock()
	s.start.Lock()
	stopped := s.h == nil
	s.start.Unlock()
	if !stopped {
		t.Fatal("gopls runs on in the folder removed")
	}
	check("the second folder alone")
	pid2 := helperPid(t, v, "gopls")
	if pid2 == pid {
		t.Fatal("the same gopls checked after its folder was removed")
	}
	v.mu.Lock()
	h := v.helpers[slotKey(Command{"gopls"}, true)].h
	v.mu.Unlock()
	if want := workspace.FileURI(second); h.dir != want {
		t.Errorf("gopls runs in %s, want %s", h.dir, want)
	}

	// The first folder comes back, then goes again: gopls is told both.
	l.set(second, first)
	a := uriOf(first, "a.go")
	if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, strings.Replace(goValid, "return 1", "return x", 1)}}); !r.Verified || len(r.NewErrors) != 1 {
		t.Fatalf("first folder again: got %+v, want one new error", r)
	}
	l.set(second)
	v.FoldersChanged()
	if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid + "x"}}); !r.None {
		t.Errorf("a file of the removed folder: got %+v, want None", r)
	}
	check("the first folder removed again")
	if got := helperPid(t, v, "gopls"); got != pid2 {
		t.Errorf("gopls was started again (pid %d, then %d) for folders it is told of", pid2, got)
	}
	if !h.knows([]workspace.URI{workspace.FileURI(second)}) {
		t.Errorf("gopls knows %v, want the second folder alone", h.folders)
	}

	l.set()
	v.FoldersChanged()
	select {
	case <-h.exited:
	case <-time.After(5 * time.Second):
		t.Errorf("gopls runs on with no workspace folder")
	}
}

// TestFolderAddedAfterStartPyright: the same with pyright, whose added
// folder's pyrightconfig.json puts lib on the import path: the edit's type
// error against lib's helper is found (with the folder unknown the import
// does not resolve and the error goes unseen).
func TestFolderAddedAfterStartPyright(t *testing.T) {
	needPyright(t)
	first := t.TempDir()
	write(t, first, "a.py", "x = 1\n")
	second := t.TempDir()
	write(t, second, "pyrightconfig.json", `{"extraPaths": ["lib"]}`+"\n")
	write(t, second, "lib/helpers.py", "def h(n: int) -> int:\n    return n\n")
	before := "from helpers import h\n\nx: int = h(1)\n"
	write(t, second, "main.py", before)
	l := &liveFolders{}
	l.set(first)
	v := foldersVerifier(t, l, Options{})
	a := uriOf(first, "a.py")
	if r := v.Check(context.Background(), []File{{a, "x = 1\n"}}, []File{{a, "x = 2\n"}}); !r.Verified || len(r.NewErrors) != 0 {
		t.Fatalf("first folder: got %+v, want verified, no new errors", r)
	}
	pid := helperPid(t, v, "pyright-langserver", "--stdio")

	l.set(first, second)
	m := uriOf(second, "main.py")
	after := before + "y: int = h(\"one\")\n"
	r := v.Check(context.Background(), []File{{m, before}}, []File{{m, after}})
	if !r.Verified || len(r.NewErrors) != 1 || !strings.Contains(r.NewErrors[0].Message, `"Literal['one']"`) || r.NewErrors[0].Line != 3 {
		t.Fatalf("added folder: got %+v, want verified with pyright's argument type error on line 3", r)
	}
	if got := helperPid(t, v, "pyright-langserver", "--stdio"); got != pid {
		t.Errorf("pyright was started again (pid %d, then %d): it takes folder changes", pid, got)
	}
}
