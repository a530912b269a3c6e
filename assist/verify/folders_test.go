package verify

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

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
