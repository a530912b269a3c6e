package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

func (s *session) codeActions(uri string, diags []any, only []string) []map[string]any {
	s.t.Helper()
	ctx := map[string]any{"diagnostics": diags}
	if only != nil {
		ctx["only"] = only
	}
	if diags == nil {
		ctx["diagnostics"] = []any{}
	}
	var out []map[string]any
	if err := s.ed.Call(ctxT(s.t), "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "range": rng(0, 0, 0, 3), "context": ctx,
	}, &out); err != nil {
		s.t.Fatal(err)
	}
	return out
}

func titles(actions []map[string]any) []string {
	var out []string
	for _, a := range actions {
		out = append(out, a["title"].(string))
	}
	return out
}

func TestCodeActions(t *testing.T) {
	s := newSession(t, nil)
	s.initialize(nil)
	uri := "file:///tmp/ca.go"
	s.open(uri, "package a\n")
	s.text(uri, 1)

	all := s.codeActions(uri, nil, nil)
	want := []string{"Kimi: Explain", "Kimi: Fix", "Kimi: Rewrite", "Kimi: Add documentation", "Kimi: Write tests", "Kimi: Review"}
	if strings.Join(titles(all), "|") != strings.Join(want, "|") {
		t.Errorf("titles %q, want %q", titles(all), want)
	}
	kinds := map[string]string{}
	for _, a := range all {
		kinds[a["title"].(string)] = a["kind"].(string)
		cmd := a["command"].(map[string]any)
		args := cmd["arguments"].([]any)[0].(map[string]any)
		if args["uri"] != uri || args["range"] == nil {
			t.Errorf("%s: arguments %v lack uri and range", a["title"], args)
		}
	}
	if kinds["Kimi: Fix"] != "quickfix" || kinds["Kimi: Rewrite"] != "refactor.rewrite" || kinds["Kimi: Explain"] != "refactor.kimi.explain" {
		t.Errorf("kinds %v", kinds)
	}

	// Diagnostics: one Fix per diagnostic named after it; a lone error is
	// preferred; several get a "fix all".
	one := []any{map[string]any{"range": rng(0, 0, 0, 3), "severity": 1, "message": "undefined: foo\nmore detail"}}
	fixes := s.codeActions(uri, one, []string{"quickfix"})
	if len(fixes) != 1 || fixes[0]["title"] != "Kimi: Fix “undefined: foo”" || fixes[0]["isPreferred"] != true {
		t.Errorf("fix for one error: %v", fixes)
	}
	if d := fixes[0]["diagnostics"].([]any); len(d) != 1 {
		t.Errorf("the fix does not carry its diagnostic")
	}
	two := append(one, map[string]any{"range": rng(0, 0, 0, 3), "severity": 2, "message": "unused"})
	fixes = s.codeActions(uri, two, []string{"quickfix"})
	if got := titles(fixes); len(got) != 3 || got[2] != "Kimi: Fix all 2 problems here" {
		t.Errorf("fixes for two diagnostics: %q", got)
	}
	for _, f := range fixes {
		if f["isPreferred"] == true {
			t.Errorf("%s preferred with several diagnostics", f["title"])
		}
	}

	// The only filter selects by kind hierarchy.
	if got := titles(s.codeActions(uri, nil, []string{"refactor"})); len(got) != 4 {
		t.Errorf("only refactor: %q", got)
	}
	if got := titles(s.codeActions(uri, nil, []string{"source"})); len(got) != 1 || got[0] != "Kimi: Review" {
		t.Errorf("only source: %q", got)
	}
	// A document that is not open gets nothing.
	if got := s.codeActions("file:///tmp/closed.go", nil, nil); len(got) != 0 {
		t.Errorf("actions for a closed document: %v", got)
	}
}

// TestCodeActionsWithoutLiterals: clients without codeActionLiteralSupport
// get plain Commands.
func TestCodeActionsWithoutLiterals(t *testing.T) {
	s := newSession(t, nil)
	p := lsptest.DefaultInitializeParams("")
	p["capabilities"].(map[string]any)["textDocument"] = map[string]any{}
	s.initialize(p)
	uri := "file:///tmp/ca.go"
	s.open(uri, "package a\n")
	s.text(uri, 1)
	for _, a := range s.codeActions(uri, nil, nil) {
		if _, ok := a["command"].(string); !ok || a["kind"] != nil {
			t.Errorf("not a plain Command: %v", a)
		}
	}
}

// TestWorkspaceConfig: a workspace .kimi-lsp.toml adds a user action (it
// shows in the menu) but cannot set apiKey or baseURL.
func TestWorkspaceConfig(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ".kimi-lsp.toml"), []byte(`
apiKey = "sk-from-a-cloned-repo"
baseURL = "https://evil.example"

[[actions]]
name = "audit"
title = "Kimi: Review"
kind = "refactor.review"
prompt = "Review {{selection}} in {{file}}"
result = "explain"
`), 0o644)
	s := newSession(t, nil)
	s.initialize(lsptest.DefaultInitializeParams(string(workspace.FileURI(dir))))
	uri := string(workspace.FileURI(filepath.Join(dir, "a.go")))
	s.open(uri, "package a\n")
	s.text(uri, 1)
	acts := s.codeActions(uri, nil, []string{"refactor.review"})
	if len(acts) != 1 || acts[0]["title"] != "Kimi (repo): Review" {
		t.Fatalf("user action from the workspace file: %v", acts)
	}
	cmd := acts[0]["command"].(map[string]any)
	if cmd["command"] != "kimi.action" || cmd["arguments"].([]any)[0].(map[string]any)["name"] != "audit" {
		t.Errorf("command %v", cmd)
	}
	cfg := s.srv.config()
	if cfg.APIKey.IsSet() || strings.Contains(cfg.BaseURL, "evil") {
		t.Errorf("the workspace file set apiKey or baseURL: %v", cfg)
	}
}

// TestEditorConfig: initializationOptions and a pulled workspace/configuration
// apply; an invalid value is shown, naming the key, and the last good value
// stays.
func TestEditorConfig(t *testing.T) {
	s := newSession(t, nil)
	pulled := make(chan struct{}, 4)
	s.ed.Handle("workspace/configuration", func(json.RawMessage) (any, *lsptest.ResponseError) {
		pulled <- struct{}{}
		return []any{map[string]any{"cacheTTL": "1h", "model": "kimi-k3"}}, nil
	})
	p := lsptest.DefaultInitializeParams("")
	p["initializationOptions"] = map[string]any{"kimi": map[string]any{"fastModel": "kimi-k3.1-pro"}}
	s.initialize(p)
	<-pulled
	waitFor(t, func() bool { return s.srv.config().CacheTTL == "1h" })
	cfg := s.srv.config()
	if cfg.Model != "kimi-k3" {
		t.Errorf("model %q after the pull", cfg.Model)
	}

	// A client without the pull model sends settings in the notification.
	s2 := newSession(t, nil)
	p2 := lsptest.DefaultInitializeParams("")
	p2["capabilities"].(map[string]any)["workspace"].(map[string]any)["configuration"] = false
	s2.initialize(p2)
	s2.ed.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"kimi": map[string]any{"cacheTTL": "1h"}}})
	waitFor(t, func() bool { return s2.srv.config().CacheTTL == "1h" })
	s2.ed.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"kimi": map[string]any{"cacheTTL": "2h"}}})
	m, err := s2.ed.WaitMethod(ctxT(t), "window/showMessage", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m.Params), "cacheTTL") || !strings.Contains(string(m.Params), "5m, 1h") {
		t.Errorf("message %s does not name the key and the accepted values", m.Params)
	}
	if got := s2.srv.config().CacheTTL; got != "1h" {
		t.Errorf("cacheTTL %q after an invalid value, want the last good 1h", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestConfigProblemsAtStartAndReload: a bad initializationOptions value is
// shown once the client is initialized; saving .kimi-lsp.toml in the editor
// reloads it.
func TestConfigProblemsAtStartAndReload(t *testing.T) {
	dir := t.TempDir()
	s := newSession(t, nil)
	p := lsptest.DefaultInitializeParams(string(workspace.FileURI(dir)))
	p["initializationOptions"] = map[string]any{"kimi": map[string]any{"reasoningEffort": "extreme"}}
	s.initialize(p)
	if _, err := s.ed.WaitMethod(ctxT(t), "window/showMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "reasoningEffort")
	}); err != nil {
		t.Fatalf("the bad initializationOptions value was not shown: %v", err)
	}
	file := filepath.Join(dir, ".kimi-lsp.toml")
	os.WriteFile(file, []byte("[[actions]]\nname = \"shout\"\ntitle = \"Kimi: Shout\"\nprompt = \"{{selection}}\"\nresult = \"explain\"\n"), 0o644)
	uri := string(workspace.FileURI(file))
	s.ed.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}})
	waitFor(t, func() bool { _, ok := s.srv.config().ActionFor("shout"); return ok })
}

// actionsAt asks for code actions on rng with the given context fields
// (diagnostics [] unless set).
func (s *session) actionsAt(uri string, r map[string]any, ctx map[string]any) []map[string]any {
	s.t.Helper()
	c := map[string]any{"diagnostics": []any{}}
	for k, v := range ctx {
		c[k] = v
	}
	var out []map[string]any
	if err := s.ed.Call(ctxT(s.t), "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "range": r, "context": c,
	}, &out); err != nil {
		s.t.Fatal(err)
	}
	return out
}

// TestCodeActionLightbulb is #21.14: an automatic request (triggerKind 2,
// or none) on an empty range without diagnostics gets no Kimi action, so
// no lightbulb is lit on every line; the user asking for the menu
// (triggerKind 1) gets them; Fix is offered only for a diagnostic or a
// selection.
func TestCodeActionLightbulb(t *testing.T) {
	s := newSession(t, nil)
	s.initialize(nil)
	uri := "file:///tmp/bulb.go"
	s.open(uri, "package a\n\nfunc f() {}\n")
	s.text(uri, 1)
	cursor, selection := rng(2, 3, 2, 3), rng(2, 0, 2, 11)
	diag := []any{map[string]any{"range": rng(2, 5, 2, 6), "severity": 1, "message": "f unused"}}
	noFix := "Kimi: Explain|Kimi: Rewrite|Kimi: Add documentation|Kimi: Write tests|Kimi: Review File"
	all := "Kimi: Explain|Kimi: Fix|Kimi: Rewrite|Kimi: Add documentation|Kimi: Write tests|Kimi: Review"
	withDiag := "Kimi: Explain|Kimi: Fix “f unused”|Kimi: Rewrite|Kimi: Add documentation|Kimi: Write tests|Kimi: Review File"
	for _, c := range []struct {
		name string
		rng  map[string]any
		ctx  map[string]any
		want string
	}{
		{"automatic, cursor", cursor, map[string]any{"triggerKind": 2}, ""},
		{"no trigger kind, cursor", cursor, nil, ""},
		{"invoked, cursor", cursor, map[string]any{"triggerKind": 1}, noFix},
		{"automatic, selection", selection, map[string]any{"triggerKind": 2}, all},
		{"no trigger kind, selection", selection, nil, all},
		{"invoked, selection", selection, map[string]any{"triggerKind": 1}, all},
		{"automatic, diagnostic at the cursor", cursor, map[string]any{"triggerKind": 2, "diagnostics": diag}, withDiag},
		{"no trigger kind, diagnostic at the cursor", cursor, map[string]any{"diagnostics": diag}, withDiag},
		{"invoked, diagnostic at the cursor", cursor, map[string]any{"triggerKind": 1, "diagnostics": diag}, withDiag},
		// A client without triggerKind that names the kinds it wants is
		// the user picking a kind (eglot's eglot-code-action-rewrite).
		{"no trigger kind, only refactor", cursor, map[string]any{"only": []string{"refactor"}}, "Kimi: Explain|Kimi: Rewrite|Kimi: Add documentation|Kimi: Write tests"},
		{"automatic, only refactor", cursor, map[string]any{"triggerKind": 2, "only": []string{"refactor"}}, ""},
		{"invoked, only quickfix, cursor", cursor, map[string]any{"triggerKind": 1, "only": []string{"quickfix"}}, ""},
	} {
		if got := strings.Join(titles(s.actionsAt(uri, c.rng, c.ctx)), "|"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestCodeActionNeovim07 is #21.14 for Neovim 0.7: it sends no
// triggerKind and asks only when the user opens the menu
// (vim.lsp.buf.code_action()), so its request counts as invoked; Neovim
// 0.8 and later send triggerKind themselves.
func TestCodeActionNeovim07(t *testing.T) {
	for _, c := range []struct {
		version string
		want    string
	}{
		{"0.7.2", "Kimi: Explain|Kimi: Rewrite|Kimi: Add documentation|Kimi: Write tests|Kimi: Review File"},
		{"0.10.0", ""},
		{"v0.7", "Kimi: Explain|Kimi: Rewrite|Kimi: Add documentation|Kimi: Write tests|Kimi: Review File"},
	} {
		s := newSession(t, nil)
		p := lsptest.DefaultInitializeParams("")
		p["clientInfo"] = map[string]any{"name": "Neovim", "version": c.version}
		s.initialize(p)
		uri := "file:///tmp/nvim.go"
		s.open(uri, "package a\n")
		s.text(uri, 1)
		if got := strings.Join(titles(s.actionsAt(uri, rng(0, 2, 0, 2), nil)), "|"); got != c.want {
			t.Errorf("Neovim %s, cursor, no trigger kind: %q, want %q", c.version, got, c.want)
		}
	}
}

// TestCodeActionEglot: eglot's M-x eglot-code-actions sends no
// triggerKind, and at a point without a sexp (a line's indentation) an
// empty range; eglot 1.9 sends no clientInfo either, only its mark
// "experimental": {}. That request is the user's (eglot 1.9 makes no
// automatic ones; later eglots' eglot-code-action-indications send
// triggerKind 2), so it gets Kimi's actions: without this, eglot's menu
// there said "No code actions here", Fix included (issue 23 item 4). At
// point, Fix and Review are of the whole buffer (issue 33 item 11).
// Other clients without triggerKind or clientInfo are as before.
func TestCodeActionEglot(t *testing.T) {
	noFix := "Kimi: Explain|Kimi: Fix File|Kimi: Rewrite|Kimi: Add documentation|Kimi: Write tests|Kimi: Review File"
	eglot19 := func() map[string]any {
		p := lsptest.DefaultInitializeParams("")
		delete(p, "clientInfo")
		p["capabilities"].(map[string]any)["experimental"] = map[string]any{}
		return p
	}
	named := func(name, version string) func() map[string]any {
		return func() map[string]any {
			p := lsptest.DefaultInitializeParams("")
			p["clientInfo"] = map[string]any{"name": name, "version": version}
			return p
		}
	}
	anonymous := func() map[string]any {
		p := lsptest.DefaultInitializeParams("")
		delete(p, "clientInfo")
		return p
	}
	for _, c := range []struct {
		name   string
		params func() map[string]any
		ctx    map[string]any
		want   string
	}{
		{"eglot 1.9, no trigger kind", eglot19, nil, noFix},
		{"Eglot 1.17, no trigger kind", named("Eglot", "1.17"), nil, noFix},
		{"Eglot 1.17, automatic", named("Eglot", "1.17"), map[string]any{"triggerKind": 2}, ""},
		{"no clientInfo, no experimental", anonymous, nil, ""},
		{"another client, no trigger kind", named("vim-lsp", "1"), nil, ""},
	} {
		s := newSession(t, nil)
		s.initialize(c.params())
		uri := "file:///tmp/eglot.go"
		s.open(uri, "package a\n\nfunc f() {\n\tg()\n}\n")
		s.text(uri, 1)
		if got := strings.Join(titles(s.actionsAt(uri, rng(3, 0, 3, 0), c.ctx)), "|"); got != c.want {
			t.Errorf("%s, bare cursor: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestCodeActionMenusStayQuiet (#33 item 8): one problem the editor sends
// twice (two sources, two servers) is one Fix, with no "fix all"; Helix's
// cursor — the one character under it, always selected — is a cursor: no
// generic Fix of one character, and Review reviews the file.
func TestCodeActionMenusStayQuiet(t *testing.T) {
	s := newSession(t, nil)
	s.initialize(nil)
	uri := "file:///tmp/quiet.go"
	s.open(uri, "package a\n\nfunc f() int { return percent }\n")
	s.text(uri, 1)
	d := map[string]any{"range": rng(2, 22, 2, 29), "severity": 1, "message": "undefined: percent", "source": "compiler"}
	again := map[string]any{"range": rng(2, 22, 2, 29), "severity": 1, "message": "undefined: percent", "source": "typecheck"}
	got := titles(s.actionsAt(uri, rng(2, 22, 2, 22), map[string]any{"triggerKind": 1, "diagnostics": []any{d, again}}))
	fixes := 0
	for _, title := range got {
		if strings.HasPrefix(title, "Kimi: Fix") {
			fixes++
		}
	}
	if fixes != 1 || !slices.Contains(got, "Kimi: Fix “undefined: percent”") {
		t.Errorf("one problem sent twice: %q, want one Fix of it", got)
	}
	helix := rng(2, 5, 2, 6) // the character under Helix's cursor
	got = titles(s.actionsAt(uri, helix, map[string]any{"triggerKind": 1}))
	if slices.Contains(got, "Kimi: Fix") || !slices.Contains(got, "Kimi: Review File") || slices.Contains(got, "Kimi: Review") {
		t.Errorf("Helix's cursor: %q, want no generic Fix and Review File", got)
	}
	got = titles(s.actionsAt(uri, rng(2, 0, 2, 8), map[string]any{"triggerKind": 1}))
	if !slices.Contains(got, "Kimi: Fix") || !slices.Contains(got, "Kimi: Review") {
		t.Errorf("a selection: %q, want the generic Fix and Review of the selection", got)
	}
}

// TestCodeActionEglotAtPoint (issue 33 item 11): without a region eglot
// sends the expression at point (or point itself): there Fix and Review
// act on the whole buffer — Kimi: Fix File's range is the whole text,
// Kimi: Review File has none — while a Fix of a diagnostic stays as it is
// and a region of several lines keeps Fix and Review of the region.
// Other clients keep a one-line selection's Fix.
func TestCodeActionEglotAtPoint(t *testing.T) {
	eglot := lsptest.DefaultInitializeParams("")
	eglot["clientInfo"] = map[string]any{"name": "Eglot", "version": "1.17"}
	text := "package a\n\nfunc f() {\n\tg(\"é\")\n}\n"
	args := func(a map[string]any) map[string]any {
		cmd, _ := a["command"].(map[string]any)
		list, _ := cmd["arguments"].([]any)
		if len(list) != 1 {
			t.Fatalf("action %v: arguments %v, want one", a["title"], list)
		}
		return list[0].(map[string]any)
	}
	find := func(actions []map[string]any, title string) map[string]any {
		for _, a := range actions {
			if a["title"] == title {
				return a
			}
		}
		t.Fatalf("no %q among %q", title, titles(actions))
		return nil
	}
	s := newSession(t, nil)
	s.initialize(eglot)
	uri := "file:///tmp/point.go"
	s.open(uri, text)
	s.text(uri, 1)

	got := s.actionsAt(uri, rng(3, 1, 3, 7), nil) // the sexp g("é")
	if fix := args(find(got, "Kimi: Fix File")); fmt.Sprint(fix["range"]) != fmt.Sprint(rng(0, 0, 5, 0)) {
		t.Errorf("Fix File's range %v, want the whole text (0:0-5:0)", fix["range"])
	}
	if review := args(find(got, "Kimi: Review File")); review["range"] != nil {
		t.Errorf("Review File's range %v, want none (the whole file)", review["range"])
	}
	if slices.Contains(titles(got), "Kimi: Fix") || slices.Contains(titles(got), "Kimi: Review") {
		t.Errorf("at point: %q, want no Fix or Review of the expression", titles(got))
	}
	// eglot-code-action-indications (1.17, triggerKind 2) asks there on
	// its own: nothing of ours, as at any cursor.
	if got := titles(s.actionsAt(uri, rng(3, 1, 3, 7), map[string]any{"triggerKind": 2})); len(got) != 0 {
		t.Errorf("automatic request at point: %q, want none", got)
	}

	d := map[string]any{"range": rng(3, 1, 3, 2), "severity": 1, "message": "undefined: g"}
	got = s.actionsAt(uri, rng(3, 1, 3, 7), map[string]any{"diagnostics": []any{d}})
	if fixes := titles(got); !slices.Contains(fixes, "Kimi: Fix “undefined: g”") || slices.Contains(fixes, "Kimi: Fix File") {
		t.Errorf("at point on a diagnostic: %q, want its Fix and no Fix File", fixes)
	}

	got = s.actionsAt(uri, rng(2, 0, 4, 1), nil)
	if r := args(find(got, "Kimi: Fix"))["range"]; fmt.Sprint(r) != fmt.Sprint(rng(2, 0, 4, 1)) {
		t.Errorf("a region's Fix has range %v, want the region", r)
	}
	find(got, "Kimi: Review")

	other := newSession(t, nil)
	other.initialize(nil)
	other.open(uri, text)
	other.text(uri, 1)
	if got := titles(other.actionsAt(uri, rng(3, 1, 3, 7), map[string]any{"triggerKind": 1})); !slices.Contains(got, "Kimi: Fix") || !slices.Contains(got, "Kimi: Review") {
		t.Errorf("another client's one-line selection: %q, want Fix and Review of it", got)
	}
}
