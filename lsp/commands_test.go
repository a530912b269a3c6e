package lsp

import (
	"slices"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
)

// TestCommandTable holds the command table to what derives from it: every
// built-in action has its row, every row's kind is advertised, every row
// is listed in executeCommandProvider and dispatched.
func TestCommandTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commands {
		if seen[c.name] || !strings.HasPrefix(c.name, "kimi.") {
			t.Errorf("command %q: repeated or not under kimi.", c.name)
		}
		seen[c.name] = true
		if c.kind != "" && !slices.ContainsFunc(codeActionKinds(), func(k string) bool {
			return c.kind == k || strings.HasPrefix(c.kind, k+".")
		}) {
			t.Errorf("%s: kind %q is under no advertised kind %q", c.name, c.kind, codeActionKinds())
		}
		if (c.action == "") != (c.kind == "") {
			t.Errorf("%s: an action's row has a kind, and only an action's", c.name)
		}
	}
	for _, a := range config.Default().Actions() {
		if !a.Builtin {
			continue
		}
		name, kind := actionCommand(a)
		c, ok := lookupCommand(name)
		if !ok || c.action != a.Name || kind != c.kind || name == cmdAction {
			t.Errorf("built-in action %q has no row of its own (got %q %q)", a.Name, name, kind)
		}
	}
	user := config.Action{Name: "review"}
	if name, kind := actionCommand(user); name != cmdAction || kind != "refactor.kimi.review" {
		t.Errorf("user action without a kind: %q %q", name, kind)
	}
	user.Kind = "refactor.review"
	if _, kind := actionCommand(user); kind != "refactor.review" {
		t.Errorf("user action with kind refactor.review got %q", kind)
	}
	if got := commandNames(); len(got) != len(commands) {
		t.Errorf("commandNames %q", got)
	}

	// Every row is executed: none is an unknown command.
	s := newSession(t, nil)
	caps := s.initialize(nil)["capabilities"].(map[string]any)
	listed := caps["executeCommandProvider"].(map[string]any)["commands"].([]any)
	if len(listed) != len(commands) {
		t.Fatalf("executeCommandProvider lists %v", listed)
	}
	for i, c := range commands {
		if listed[i] != c.name {
			t.Errorf("executeCommandProvider[%d] = %v, want %s", i, listed[i], c.name)
		}
		err := s.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": c.name, "arguments": []any{map[string]any{}}}, nil)
		if err != nil && strings.Contains(err.Error(), "unknown command") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if err := s.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.nope"}, nil); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Errorf("kimi.nope: %v, want unknown command", err)
	}
}

// TestCommandNamesReserved (#30.7): no user action may take the name of
// a command of the table (kimi.NAME): "review" was free, and an action so
// named gave the menu two Kimi: Review entries.
func TestCommandNamesReserved(t *testing.T) {
	for _, c := range commands {
		if name := strings.TrimPrefix(c.name, "kimi."); !config.Reserved(name) {
			t.Errorf("%s: a user action may be named %q", c.name, name)
		}
	}
}
