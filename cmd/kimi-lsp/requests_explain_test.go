package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
)

// TestRequestsAfterExplain (#25.2): after an explain whose prompt pulled
// in three files, "kimi-lsp requests --last 1 --json" lists them with their
// byte counts, the request's tokens and cost; the record holds neither the
// files' contents nor the key.
func TestRequestsAfterExplain(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":  "module example.com/shop\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(Total(Cart{Items: []Item{{PriceCents: 250, Qty: 2}}}))\n}\n",
		"cart.go": "package main\n\n// Cart holds the items of one order.\ntype Cart struct {\n\tItems []Item // SECRET-LOOKING-CONTENT-cart\n}\n",
		"item.go": "package main\n\n// Item is one line of a cart.\ntype Item struct {\n\tPriceCents, Qty int // SECRET-LOOKING-CONTENT-item\n}\n\n// Total is what the cart costs, in cents.\nfunc Total(c Cart) int {\n\tn := 0\n\tfor _, it := range c.Items {\n\t\tn += it.PriceCents * it.Qty\n\t}\n\treturn n\n}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: `action="explain"`, Content: "main prints the total of a cart."}}}})
	defer srv.Close()
	home := t.TempDir()
	state := filepath.Join(home, "state")
	env := envFunc(testEnv(t, "HOME="+home, "XDG_STATE_HOME="+state, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL))
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"explain", filepath.Join(dir, "main.go") + ":5-7"}, nil, &out, &errb, env); code != 0 {
		t.Fatalf("explain: exit %d, %s", code, errb.String())
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests at the stand-in, want 1", n)
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"requests", "--last", "1", "--json"}, nil, &out, &errb, env); code != 0 {
		t.Fatalf("requests: exit %d, %s", code, errb.String())
	}
	var recs []spend.Record
	if err := json.Unmarshal(out.Bytes(), &recs); err != nil || len(recs) != 1 {
		t.Fatalf("requests --last 1 --json printed %s (%v)", out.String(), err)
	}
	r := recs[0]
	got := map[string]int{}
	for _, f := range r.Files {
		got[f.Path] = f.Bytes
	}
	for _, name := range []string{"main.go", "cart.go", "item.go"} {
		if got[name] <= 0 || got[name] > len(files[name]) {
			t.Errorf("file %s: %d bytes recorded (of %d); files %v", name, got[name], len(files[name]), r.Files)
		}
	}
	u := srv.Requests()[0].Usage
	if r.Surface != "explain" || r.Outcome != spend.OutcomeOK || r.PromptTokens != u.PromptTokens || r.CachedTokens != u.CachedTokens ||
		r.WrittenTokens != u.CacheWriteTokens || r.OutputTokens != u.CompletionTokens || r.PromptTokens == 0 || r.CostUSD <= 0 {
		t.Errorf("record %+v, stand-in usage %+v", r, u)
	}
	raw, err := os.ReadFile(filepath.Join(state, "kimi-lsp", spend.FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{srv.Key, "SECRET-LOOKING-CONTENT", "func Total", "fmt.Println", "main prints the total"} {
		if bytes.Contains(raw, []byte(leak)) || strings.Contains(out.String(), leak) {
			t.Errorf("the record holds %q", leak)
		}
	}
	t.Logf("record: %s", raw)
}

// TestDoctorRequestsRecorded: doctor's endpoint checks leave the machine
// too, and are recorded as such (surface "doctor"), one per request.
func TestDoctorRequestsRecorded(t *testing.T) {
	state := t.TempDir()
	srv, code, out := doctorAgainstStandIn(t, "XDG_STATE_HOME="+state)
	if code != 0 {
		t.Fatalf("doctor: exit %d\n%s", code, out)
	}
	recs, err := spend.Read(filepath.Join(state, "kimi-lsp"), 0, spend.Options{})
	if err != nil || len(recs) != len(srv.Requests()) || len(recs) == 0 {
		t.Fatalf("%d records (%v) for %d requests", len(recs), err, len(srv.Requests()))
	}
	for _, r := range recs {
		if r.Surface != "doctor" || r.Outcome != spend.OutcomeOK || r.PromptTokens == 0 {
			t.Errorf("record %+v", r)
		}
	}
}

// TestRequestsListFilesReadByTools (#25.2): a file the model read with
// read_file went to the provider with the next request; the record of that
// request lists it with the bytes the tool returned (before, only the
// prompt's files were listed, so what left the machine was understated).
func TestRequestsListFilesReadByTools(t *testing.T) {
	dir := t.TempDir()
	notes := "operational notes: the rollout plan, NOTES-CONTENT-7f3a\n"
	for name, text := range map[string]string{
		"go.mod":    "module example.com/x\n\ngo 1.22\n",
		"main.go":   "package main\n\nfunc main() {\n\tprintln(1)\n}\n",
		"notes.txt": notes,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: `action="explain"`, Times: 1, Reasoning: "Read the notes.", ToolCalls: []modeltest.ScriptToolCall{
			{Name: "read_file", Arguments: `{"path":"notes.txt"}`}}},
		{LastRole: "tool", Content: "main prints 1."}}}})
	defer srv.Close()
	home := t.TempDir()
	state := filepath.Join(home, "state")
	env := envFunc(testEnv(t, "HOME="+home, "XDG_STATE_HOME="+state, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL))
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"explain", filepath.Join(dir, "main.go") + ":3-5"}, nil, &out, &errb, env); code != 0 {
		t.Fatalf("explain: exit %d, %s", code, errb.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "NOTES-CONTENT-7f3a") {
		t.Fatalf("%d requests at the stand-in, want 2, the second with notes.txt's text", len(reqs))
	}
	if strings.Contains(string(reqs[0].Body), "NOTES-CONTENT-7f3a") {
		t.Fatal("notes.txt was in the first prompt: the test shows nothing")
	}
	recs, err := spend.Read(filepath.Join(state, "kimi-lsp"), 0, spend.Options{})
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records (%v), want 2", len(recs), err)
	}
	files := func(r spend.Record) map[string]int {
		m := map[string]int{}
		for _, f := range r.Files {
			m[f.Path] = f.Bytes
		}
		return m
	}
	if _, ok := files(recs[0])["notes.txt"]; ok {
		t.Errorf("the first request lists notes.txt, which it did not hold: %v", recs[0].Files)
	}
	if got := files(recs[1]); got["notes.txt"] != len(notes) || got["main.go"] == 0 {
		t.Errorf("the request after read_file lists %v, want main.go and notes.txt (%d bytes)", recs[1].Files, len(notes))
	}
}

// TestUnkeptRecordSaidOnce (#30.7): a requests.jsonl that is a FIFO keeps
// no request, so the budgets count this run's spend only: the command line
// says so on stderr, once, naming the file and what it is — before, only a
// "request not recorded" line said anything, and nothing about the budgets.
func TestUnkeptRecordSaidOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(1 + 2)\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: `action="explain"`, Content: "It prints 3."}}}})
	defer srv.Close()
	home := t.TempDir()
	state := filepath.Join(home, "state")
	if err := os.MkdirAll(filepath.Join(state, "kimi-lsp"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(state, "kimi-lsp", spend.FileName), 0o600); err != nil {
		t.Fatal(err)
	}
	env := envFunc(testEnv(t, "HOME="+home, "XDG_STATE_HOME="+state, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL))
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"explain", filepath.Join(dir, "main.go") + ":3-5"}, nil, &out, &errb, env); code != 0 {
		t.Fatalf("explain: exit %d, %s", code, errb.String())
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests at the stand-in, want 1", n)
	}
	said := strings.Count(errb.String(), "count this session's spend only")
	if said != 1 || !strings.Contains(errb.String(), "is a FIFO") {
		t.Errorf("stderr says it %d times, want once naming the FIFO:\n%s", said, errb.String())
	}
}
