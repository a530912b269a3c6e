package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/complete"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// nextVerifySession is a next-edit session (a pause of 20 ms) with
// verification on, in a Go module, its helpers' temporary files in the
// test's own directory.
func nextVerifySession(t *testing.T, rules ...modeltest.Rule) *compSession {
	t.Helper()
	cs := newCompProvider(t, rules...)
	dir := cs.dir
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs.session = newSessionKnobs(t, Options{Config: providerConfigFile(t, cs.prov, "[verify]\nenable = \"auto\"\n")}, testKnobs{verifyEnv: helperEnv(t)}, nil)
	cs.initialize(completionInit(string(workspace.FileURI(dir)), true, map[string]any{"nextEdit": map[string]any{"debounceMs": 20}}))
	return cs
}

// warmHelper asks for code actions on line until Fix is offered with the
// helper's message want: gopls runs and has loaded the module.
func (cs *compSession) warmHelper(uri string, line int, want string) {
	cs.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var acts []codeAction
		if err := cs.ed.Call(ctxT(cs.t), "textDocument/codeAction", map[string]any{
			"textDocument": map[string]any{"uri": uri}, "range": rng(line, 1, line, 1),
			"context": map[string]any{"diagnostics": []any{}, "triggerKind": 1},
		}, &acts); err != nil {
			cs.t.Fatal(err)
		}
		for _, a := range acts {
			if strings.Contains(a.Title, want) {
				return
			}
		}
		if time.Now().After(deadline) {
			cs.t.Fatalf("gopls never reported %q on line %d: actions %+v", want, line+1, acts)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestNextEditVerifiedByGopls is issue 32's check "with gopls, a
// suggestion that adds an undefined name is never published; a clean one
// is": each suggestion is checked in the running helper before it is
// shown, as an edit is; the one adding "undefined: x" is dropped (counted
// broken), the clean one is published.
func TestNextEditVerifiedByGopls(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	// The answer that breaks the build: the rename's first use, but to a
	// name nothing declares.
	broken := strings.Replace(strings.Replace(renameDiff, "+\tif k == 0 {", "+\tif x == 0 {", 1), "+\treturn v * k", "+\treturn v * x", 1)
	cs := nextVerifySession(t, modeltest.Rule{Content: broken, Times: 1}, modeltest.Rule{Content: renameDiff})
	// The file as the user left it: the parameter renamed in the
	// signature, its uses not yet (gopls: undefined: factor).
	uri, _ := cs.file("main.go", renamedGo+"|")
	cs.warmHelper(uri, 3, "undefined: factor")

	cs.changeTo(uri, strings.Replace(renamedGo, "package main", "package main // scales", 1))
	st := cs.waitNext("the broken suggestion judged", func(st complete.NextStats) bool { return st.Broken == 1 })
	if st.Shown != 0 || st.Checked != 1 {
		t.Errorf("kimi.stats nextEdit = %+v, want the suggestion checked and dropped, none shown", st)
	}
	cs.changeTo(uri, strings.Replace(renamedGo, "package main", "package main // scales v", 1))
	ds := cs.diagnostics(uri, hasNextEdit)
	if !strings.Contains(ds[0].Data.NewText, "if k == 0") {
		t.Errorf("published %+v, want the clean suggestion", ds[0])
	}
	if st := cs.nextStats(); st.Checked != 2 || st.Broken != 1 || st.Shown != 1 || st.CheckMsPerSuggestion <= 0 {
		t.Errorf("kimi.stats nextEdit = %+v, want 2 checked, 1 broken, 1 shown", st)
	}
	for _, m := range cs.ed.Messages() {
		if m.Method == "textDocument/publishDiagnostics" && strings.Contains(string(m.Params), "x == 0") {
			t.Errorf("the broken suggestion was published: %s", m.Params)
		}
	}
}
