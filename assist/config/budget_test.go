package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBudgetWorkspaceLowersOnly (#25.1): a workspace file may lower a
// budget (or set one where there was none), never raise it, nor raise
// budget.confirmAbove (0 there means never asking: the highest).
func TestBudgetWorkspaceLowersOnly(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "config.toml")
	os.WriteFile(user, []byte("[budget]\ndaily = 5\nconfirmAbove = 0.2\n"), 0o600)
	base, errs := Default().WithUserFile(user)
	mustNoErrors(t, errs)
	if base.Budget != (Budget{Daily: 5, ConfirmAbove: 0.2}) {
		t.Fatalf("user file: %+v", base.Budget)
	}
	if d := Default().Budget; d != (Budget{ConfirmAbove: DefaultConfirmAbove}) {
		t.Errorf("default budget %+v", d)
	}

	for _, tc := range []struct {
		toml    string
		want    Budget
		ignored []string
	}{
		{"[budget]\nhourly = 1\ndaily = 2\nconfirmAbove = 0.05\n", Budget{Hourly: 1, Daily: 2, ConfirmAbove: 0.05}, nil},
		{"[budget]\ndaily = 10\nconfirmAbove = 0.5\n", Budget{Daily: 5, ConfirmAbove: 0.2}, []string{"budget.daily", "budget.confirmAbove"}},
		{"[budget]\ndaily = 0\nconfirmAbove = 0\n", Budget{Daily: 5, ConfirmAbove: 0.2}, []string{"budget.daily", "budget.confirmAbove"}},
		{"budget = { daily = 5, hourly = 0 }\n", Budget{Daily: 5, ConfirmAbove: 0.2}, nil},
	} {
		ws := filepath.Join(t.TempDir(), WorkspaceFileName)
		os.WriteFile(ws, []byte(tc.toml), 0o600)
		c, errs := base.WithWorkspaceFiles(ws)
		if c.Budget != tc.want {
			t.Errorf("%q: budget %+v, want %+v", tc.toml, c.Budget, tc.want)
		}
		var got []string
		for _, err := range errs {
			p, ok := err.(*Problem)
			if !ok || !p.Warning || !strings.Contains(p.Message, "may lower") {
				t.Errorf("%q: unexpected problem %v", tc.toml, err)
				continue
			}
			got = append(got, p.Key)
		}
		if strings.Join(got, " ") != strings.Join(tc.ignored, " ") {
			t.Errorf("%q: warned about %v, want %v", tc.toml, got, tc.ignored)
		}
	}

	// The user's own sources set anything; bad values are refused.
	c, errs := base.WithEditor(json.RawMessage(`{"kimi": {"budget": {"daily": 50, "confirmAbove": 0}}}`))
	mustNoErrors(t, errs)
	if c.Budget != (Budget{Daily: 50}) {
		t.Errorf("editor settings: %+v", c.Budget)
	}
	_, errs = base.WithEditor(json.RawMessage(`{"kimi": {"budget": {"hourly": -1, "daily": "ten"}}}`))
	if len(errs) != 2 || !strings.Contains(errs[0].Error()+errs[1].Error(), "out of range") {
		t.Errorf("bad budgets: %v", errs)
	}
}
