package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/spend"
)

func TestRequestsCommand(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(home, "state")
	getenv := envFunc(testEnv(t, "HOME="+home, "XDG_STATE_HOME="+state))
	run1 := func(args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, nil, &stdout, &stderr, getenv)
		return stdout.String(), stderr.String(), code
	}

	// Nothing recorded yet: said plainly, nothing created.
	out, errOut, code := run1("requests")
	if code != 0 || !strings.Contains(out, "No requests recorded") {
		t.Fatalf("empty record: exit %d, %q, %q", code, out, errOut)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("requests created the state directory: %v", err)
	}
	if out, _, _ := run1("requests", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("--json of an empty record: %q", out)
	}

	l, err := spend.Open(filepath.Join(state, "kimi-lsp"), spend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 17, 10, 0, 0, time.Local)
	l.Add(spend.Record{Time: at, Surface: "completion", Model: "kimi-k3.1-pro", Files: []spend.File{{Path: "a.go", Bytes: 10}},
		PromptTokens: 900, CachedTokens: 800, OutputTokens: 12, CostUSD: 0.0004, Outcome: spend.OutcomeOK})
	l.Add(spend.Record{Time: at.Add(time.Minute), Surface: "explain", Model: "kimi-k3.1-pro",
		Files:        []spend.File{{Path: "main.go", Bytes: 1234}, {Path: "util/strings.go", Bytes: 56789}},
		PromptTokens: 12345, CachedTokens: 10000, WrittenTokens: 2345, OutputTokens: 321, CostUSD: 0.0067, Outcome: spend.OutcomeOK})
	l.Close()

	out, errOut, code = run1("requests", "--last", "1", "--json")
	if code != 0 {
		t.Fatalf("requests --last 1 --json: exit %d, %s", code, errOut)
	}
	var recs []spend.Record
	if err := json.Unmarshal([]byte(out), &recs); err != nil || len(recs) != 1 {
		t.Fatalf("--json printed %q (%v)", out, err)
	}
	if r := recs[0]; r.Surface != "explain" || len(r.Files) != 2 || r.Files[1] != (spend.File{Path: "util/strings.go", Bytes: 56789}) ||
		r.PromptTokens != 12345 || r.CostUSD != 0.0067 {
		t.Errorf("record %+v", r)
	}

	out, _, code = run1("requests")
	if code != 0 {
		t.Fatal(code)
	}
	for _, want := range []string{"The newest 2 requests recorded in", "SURFACE", "completion", "explain", "12,345", "$0.0067",
		"files: main.go (1,234 B), util/strings.go (56,789 B)", "Total: $0.0071 for 2 requests"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if _, errOut, code := run1("requests", "--last", "-1"); code != 2 || !strings.Contains(errOut, "want 0 or more") {
		t.Errorf("--last -1: exit %d, %q", code, errOut)
	}
}
