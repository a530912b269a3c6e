package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestCLIWorkspaceAction (#22.3): "kimi-lsp edit FILE --action review"
// runs an action defined only in the workspace's .kimi-lsp.toml (found
// above the file, in a subfolder of the repository), its prompt reaches
// the provider, and the file cannot set apiKey or baseURL.
func TestCLIWorkspaceAction(t *testing.T) {
	file := cliWorkspace(t)
	root := filepath.Dir(file)
	os.Mkdir(filepath.Join(root, ".git"), 0o755)
	sub := filepath.Join(root, "pkg", "deep")
	os.MkdirAll(sub, 0o755)
	deep := filepath.Join(sub, "deep.go")
	os.WriteFile(deep, []byte("package deep\n\nfunc Deep() int { return 1 }\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".kimi-lsp.toml"), []byte(`apiKey = "sk-from-the-repository-0000"
baseURL = "http://127.0.0.1:1"

[[actions]]
name = "audit"
result = "explain"
prompt = "REVIEW-MARKER: review {{selection}} of {{file}}"
`), 0o644)
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: "REVIEW-MARKER", Content: "Reviewed: fine."}}}})
	defer srv.Close()
	env := envFunc(testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL))
	for _, target := range []string{file + ":3-5", deep} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"edit", target, "--action", "audit"}, nil, &out, &errb, env)
		if code != 0 || !strings.Contains(out.String(), "Reviewed: fine.") {
			t.Fatalf("%s: code %d, stdout %q, stderr %q", target, code, out.String(), errb.String())
		}
		if !strings.Contains(errb.String(), "a workspace file cannot set apiKey") || !strings.Contains(errb.String(), "cannot set baseURL") {
			t.Errorf("%s: the refused keys are not reported: %q", target, errb.String())
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests reached the provider, want 2", len(reqs))
	}
	for _, r := range reqs {
		if !strings.Contains(string(r.Body), "REVIEW-MARKER: review") {
			t.Errorf("request %d does not carry the action's prompt", r.Seq)
		}
		if strings.Contains(r.Header.Get("Authorization"), "sk-from-the-repository") {
			t.Errorf("request %d carries the repository's key", r.Seq)
		}
	}
	// doctor reads the same file for that directory.
	var out, errb bytes.Buffer
	run(context.Background(), []string{"doctor", "--offline", "--dir", sub}, nil, &out, &errb, env)
	if !strings.Contains(out.String(), "workspace file: "+filepath.Join(root, ".kimi-lsp.toml")) || !strings.Contains(out.String(), "actions.audit") {
		t.Errorf("doctor --dir %s:\n%s", sub, out.String())
	}
}
