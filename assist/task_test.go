package assist_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/jobs"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// request is a TaskRequest on file name of the fixture, the selection from
// the start of from to the end of to.
func (f *fixture) request(action, name, from, to string) assist.TaskRequest {
	f.t.Helper()
	p := filepath.Join(f.dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		f.t.Fatal(err)
	}
	text := string(b)
	snap := workspace.NewSnapshot(workspace.FileURI(p), "", 1, text)
	return assist.TaskRequest{Action: action, Document: snap, Start: strings.Index(text, from), End: strings.Index(text, to) + len(to)}
}

func TestBuildTask(t *testing.T) {
	f := newFixture(t, map[string]string{
		"calc/calc.go": calc,
		"calc/more.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		".env":         "TOKEN=x\n",
	})
	r := f.request(config.ActionFix, "calc/calc.go", "func Sub", "}")
	r.Diagnostics = []cache.Diagnostic{{StartLine: 4, EndLine: 4, Severity: cache.SeverityError, Message: "Sub adds"}}
	task, err := assist.BuildTask(f.cfg, f.folders, r)
	if err != nil {
		t.Fatal(err)
	}
	if task.Action.Name != config.ActionFix || task.Active.Path != "calc/calc.go" || task.Project.Name != "ws" || task.Active.Language != "go" {
		t.Errorf("task %+v", task)
	}
	if got := task.Active.Text[task.Selection.Start:task.Selection.End]; !strings.HasPrefix(got, "func Sub") || !strings.HasSuffix(got, "}") {
		t.Errorf("selection %q", got)
	}
	if len(task.Diagnostics) != 1 || task.Notice != "" || task.NeedsInstruction {
		t.Errorf("diagnostics %v, notice %q, needs instruction %v", task.Diagnostics, task.Notice, task.NeedsInstruction)
	}
	var ctxPaths []string
	for _, d := range task.Context {
		ctxPaths = append(ctxPaths, d.Path)
	}
	if !strings.Contains(strings.Join(ctxPaths, " "), "calc/more.go") {
		t.Errorf("context %v lacks the same package's file", ctxPaths)
	}

	if _, err := assist.BuildTask(f.cfg, f.folders, f.request("nope", "calc/calc.go", "func", "}")); !errors.Is(err, assist.ErrUnknownAction) {
		t.Errorf("unknown action: %v", err)
	}
	if _, err := assist.BuildTask(f.cfg, f.folders, f.request(config.ActionExplain, ".env", "T", "x")); !errors.Is(err, workspace.ErrSecret) {
		t.Errorf(".env: %v, want ErrSecret", err)
	}
	rw, err := assist.BuildTask(f.cfg, f.folders, f.request(config.ActionRewrite, "calc/calc.go", "func Sub", "}"))
	if err != nil || !rw.NeedsInstruction {
		t.Errorf("rewrite without instruction: needs=%v err=%v", rw != nil && rw.NeedsInstruction, err)
	}
}

// TestLargeActiveFileWindow (#12.13): an active file over
// context.maxFileSize enters the prompt as a window of whole lines around
// the selection; the prompt and the notice say so.
func TestLargeActiveFileWindow(t *testing.T) {
	var b strings.Builder
	b.WriteString("package big\n\n")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "func F%04d() int { return %d }\n", i, i)
	}
	f := newFixture(t, map[string]string{"big.go": b.String()}, modeltest.Rule{Match: `action="explain"`, Content: "F1500 returns 1500."})
	cfg, errs := f.cfg.WithEditor([]byte(`{"context": {"maxFileSize": 4096}}`))
	if config.HasErrors(errs) {
		t.Fatal(errs)
	}
	r := f.request(config.ActionExplain, "big.go", "func F1500", "1500 }")
	task, err := assist.BuildTask(cfg, f.folders, r)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(task.Active.Text); n > 4096+200 || n < 2000 {
		t.Errorf("window of %d bytes for a 4096-byte limit", n)
	}
	if !strings.HasPrefix(task.Active.Text, "func F") || !strings.HasSuffix(task.Active.Text, "}\n") {
		t.Errorf("the window is not whole lines: %q…%q", task.Active.Text[:20], task.Active.Text[len(task.Active.Text)-20:])
	}
	if got := task.Active.Text[task.Selection.Start:task.Selection.End]; got != "func F1500() int { return 1500 }" {
		t.Errorf("selection in the window %q", got)
	}
	if !strings.Contains(task.Notice, "over context.maxFileSize") || !strings.Contains(task.Notice, "of 3003") {
		t.Errorf("notice %q", task.Notice)
	}
	if _, err := f.engine.Run(context.Background(), *task, &recorder{}); err != nil {
		t.Fatal(err)
	}
	body := string(f.srv.Requests()[0].Body)
	if strings.Contains(body, "func F0001()") || strings.Contains(body, "func F2999()") {
		t.Errorf("lines far from the selection reached the prompt")
	}
	if !strings.Contains(body, "too large to show whole") {
		t.Errorf("the prompt does not say the file was cut")
	}

	// A selection over the limit is refused with the way out.
	r = f.request(config.ActionExplain, "big.go", "func F0100", "2900 }")
	if _, err := assist.BuildTask(cfg, f.folders, r); !errors.Is(err, assist.ErrSelectionTooLarge) || !strings.Contains(err.Error(), "maxFileSize") {
		t.Errorf("huge selection: %v", err)
	}
}

// TestDiagnosticsFitThePrompt: a file with thousands of diagnostics
// quotes MaxDiagnostics, those on the selection's lines first, a long
// message cut; a note says how many there were. An active file cut to a
// window renumbers its diagnostics with its lines and leaves out those it
// does not show.
func TestDiagnosticsFitThePrompt(t *testing.T) {
	var b strings.Builder
	b.WriteString("package big\n\n")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "func F%04d() int { return %d }\n", i, i)
	}
	f := newFixture(t, map[string]string{"big.go": b.String()})
	r := f.request(config.ActionFix, "big.go", "func F1500", "1500 }")
	for line := range 3002 {
		sev := cache.SeverityWarning
		if line%500 == 0 {
			sev = cache.SeverityError
		}
		r.Diagnostics = append(r.Diagnostics, cache.Diagnostic{StartLine: line, EndLine: line, Severity: sev, Message: fmt.Sprintf("problem on line %d", line+1)})
	}
	r.Diagnostics[1502].Message = strings.Repeat("long ", 1000) // F1500's line
	given := r.Diagnostics[1502].Message
	task, err := assist.BuildTask(f.cfg, f.folders, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(task.Diagnostics) != assist.MaxDiagnostics {
		t.Fatalf("%d diagnostics quoted, want %d", len(task.Diagnostics), assist.MaxDiagnostics)
	}
	var lines []int
	errorsKept := 0
	for _, d := range task.Diagnostics {
		lines = append(lines, d.StartLine)
		if d.Severity == cache.SeverityError {
			errorsKept++
		}
	}
	if lines[0] > 1502 || !slices.Contains(lines, 1502) || !slices.IsSorted(lines) {
		t.Errorf("lines %v: the selection's first, in line order", lines)
	}
	if errorsKept != 7 {
		t.Errorf("%d errors kept, want all 7 (errors before nearer warnings)", errorsKept)
	}
	for _, d := range task.Diagnostics {
		if d.StartLine == 1502 && (len(d.Message) > 1100 || !strings.HasSuffix(d.Message, "…")) {
			t.Errorf("the long message is %d bytes", len(d.Message))
		}
	}
	if r.Diagnostics[1502].Message != given {
		t.Errorf("the caller's diagnostics were changed")
	}
	if !slices.ContainsFunc(task.Notes, func(n string) bool { return strings.Contains(n, "has 3002 diagnostics") }) {
		t.Errorf("notes %q", task.Notes)
	}

	// Cut to a window: renumbered, the others left out.
	cfg, errs := f.cfg.WithEditor([]byte(`{"context": {"maxFileSize": 4096}}`))
	if config.HasErrors(errs) {
		t.Fatal(errs)
	}
	r.Diagnostics = []cache.Diagnostic{{StartLine: 1502, EndLine: 1502, Severity: cache.SeverityError, Message: "here"},
		{StartLine: 10, EndLine: 10, Severity: cache.SeverityError, Message: "far"}}
	task, err = assist.BuildTask(cfg, f.folders, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(task.Diagnostics) != 1 || task.Diagnostics[0].Message != "here" {
		t.Fatalf("windowed diagnostics %+v, want the one in the window", task.Diagnostics)
	}
	sel := strings.Count(task.Active.Text[:task.Selection.Start], "\n")
	if task.Diagnostics[0].StartLine != sel || task.Diagnostics[0].EndLine != sel {
		t.Errorf("the diagnostic is on line %d of the window, the selection on %d", task.Diagnostics[0].StartLine, sel)
	}
}

// brokenFiles is a patch.Files whose reads panic, standing in for a bug
// that a model reply reaches while the diff is applied.
type brokenFiles struct{ *assist.Files }

func (brokenFiles) Read(string) (string, int32, error) { panic("applier bug") }

// TestRunRecoversPanic: a panic while the model's diff is applied fails
// the task with ErrInternal instead of the program.
func TestRunRecoversPanic(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc}, modeltest.Rule{Match: `action="fix"`, Content: fixDiff})
	task := f.task(config.ActionFix, "calc.go", "func Sub", "}")
	task.Files = brokenFiles{assist.NewFiles(f.folders, nil)}
	out, err := f.engine.Run(context.Background(), task, &recorder{})
	if !errors.Is(err, jobs.ErrInternal) || out != nil {
		t.Fatalf("Run = %v, %v; want ErrInternal", out, err)
	}
	// The engine still works.
	if _, err := f.engine.Run(context.Background(), f.task(config.ActionFix, "calc.go", "func Sub", "}"), &recorder{}); err != nil {
		t.Errorf("next task: %v", err)
	}
}

// TestKeyEchoRedacted (#12.6): the provider echoes the API key, split
// across chunks: neither the stream, the result nor the explanation file
// holds it; an edit writing it is refused.
func TestKeyEchoRedacted(t *testing.T) {
	echo := "Your key is " + modeltest.DefaultKey + " and again " + modeltest.DefaultKey + "."
	f := newFixture(t, map[string]string{"calc.go": calc},
		modeltest.Rule{Match: `action="explain"`, Reasoning: "The key " + modeltest.DefaultKey, Content: echo, Chunks: 23},
		modeltest.Rule{Match: `action="fix"`, Content: strings.Replace(fixDiff, "+\treturn a - b", "+\treturn a - b // "+modeltest.DefaultKey, 1)})
	var r recorder
	out, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &r)
	if err != nil {
		t.Fatal(err)
	}
	streamed := strings.Join(r.content, "") + strings.Join(r.reasoning, "")
	file, _ := os.ReadFile(out.File)
	for what, s := range map[string]string{"stream": streamed, "result": out.Text, "file": string(file)} {
		if strings.Contains(s, modeltest.DefaultKey) || strings.Contains(s, modeltest.DefaultKey[:12]) {
			t.Errorf("the key reached the %s: %q", what, s)
		}
		if !strings.Contains(s, "[REDACTED]") {
			t.Errorf("the %s shows no redaction: %q", what, s)
		}
	}
	if strings.Join(r.content, "") != out.Text {
		t.Errorf("stream %q differs from the result %q", strings.Join(r.content, ""), out.Text)
	}
	_, err = f.engine.Run(context.Background(), f.task(config.ActionFix, "calc.go", "func Sub", "}"), &recorder{})
	if !errors.Is(err, assist.ErrKeyInEdit) || strings.Contains(err.Error(), modeltest.DefaultKey) {
		t.Errorf("edit writing the key: %v", err)
	}
}

// TestGateQueues: with the stream slots taken, a task waits in line and
// says so, and starts when a slot frees.
func TestGateQueues(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc}, modeltest.Rule{Match: `action="explain"`, Content: "ok"})
	gate := jobs.New(jobs.Options{Limit: 1})
	defer gate.Close()
	engine, err := assist.NewEngine(assist.Options{Config: f.cfg, ExplanationDir: t.TempDir(), Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	held, err := gate.Acquire(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	done := make(chan error, 1)
	go func() {
		_, err := engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), r)
		done <- err
	}()
	for {
		if _, queued := gate.Streams(); queued == 1 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the task ran without a slot: %v", err)
		default:
		}
	}
	held()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.stats) == 0 || r.stats[0] != "queued (0 ahead)" {
		t.Errorf("statuses %q, want queued (0 ahead) first", r.stats)
	}
	if active, _ := gate.Streams(); active != 0 {
		t.Errorf("%d slots still held after the task", active)
	}
}

// TestContextReachesPrompt (#17): a selection calling a function and using
// a type declared in files that are not open gets their declarations in the
// prompt the provider receives, while a large file's other declarations and
// a large unrelated open buffer stay out; a large active file is shown by
// its header and the function around the selection.
func TestContextReachesPrompt(t *testing.T) {
	pad := strings.Repeat("// padding that makes the file large enough to enter by snippets only.\n", 200)
	var big strings.Builder
	big.WriteString("package shop\n\nimport \"fmt\"\n\n")
	for i := range 400 {
		fmt.Fprintf(&big, "// Far%03d is far from the selection.\nfunc Far%03d() int { return %d }\n\n", i, i, i)
	}
	big.WriteString("// Checkout totals a cart.\nfunc Checkout(items []Item) Money {\n\tvar sum Money\n\tfor _, it := range items {\n\t\tsum += Price(it)\n\t}\n\treturn sum\n}\n")
	f := newFixture(t, map[string]string{
		"go.mod":           "module example.com/m\n",
		"shop/cart.go":     "package shop\n\nfunc Total(items []Item) Money {\n\tvar sum Money\n\tfor _, it := range items {\n\t\tsum += Price(it)\n\t}\n\treturn sum\n}\n",
		"shop/pricing.go":  "package shop\n\n" + pad + "\n// Price returns what an item costs.\nfunc Price(it Item) Money { return Money(it.Cents) }\n\n// Unused is never called.\nfunc Unused() {}\n",
		"shop/types.go":    "package shop\n\n// Item is a thing for sale.\ntype Item struct{ Cents int }\n\n// Money is an amount in cents.\ntype Money int\n",
		"shop/checkout.go": big.String(),
		"other/huge.go":    "package other\n\n" + strings.Repeat(pad, 10) + "func Huge() {}\n",
	}, modeltest.Rule{Match: `action="explain"`, Content: "It sums prices."})
	huge, _ := os.ReadFile(filepath.Join(f.dir, "other/huge.go"))
	open := []*workspace.Snapshot{workspace.NewSnapshot(workspace.FileURI(filepath.Join(f.dir, "other/huge.go")), "go", 1, string(huge))}

	for i, c := range []struct{ file, from, to string }{
		{"shop/cart.go", "\tfor _, it", "\t}\n"},
		{"shop/checkout.go", "\tfor _, it", "\t}\n"},
	} {
		r := f.request(config.ActionExplain, c.file, c.from, c.to)
		r.Open = open
		task, err := assist.BuildTask(f.cfg, f.folders, r)
		if err != nil {
			t.Fatal(err)
		}
		if task.ContextBudget <= 0 {
			t.Errorf("%s: no context budget", c.file)
		}
		if _, err := f.engine.Run(context.Background(), *task, &recorder{}); err != nil {
			t.Fatal(err)
		}
		body := string(f.srv.Requests()[i].Body)
		for _, want := range []string{"// Price returns what an item costs.", "// Item is a thing for sale.", "// Money is an amount in cents."} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the prompt lacks %q", c.file, want)
			}
		}
		for _, unwanted := range []string{"Unused is never called", "func Huge", "padding that makes"} {
			if strings.Contains(body, unwanted) {
				t.Errorf("%s: the prompt has %q", c.file, unwanted)
			}
		}
		if c.file == "shop/checkout.go" {
			if !task.ExcerptActive || strings.Contains(body, "Far001 is far") || !strings.Contains(body, "// Checkout totals a cart.") || !strings.Contains(body, `import \"fmt\"`) {
				t.Errorf("the large active file is not shown by its header and the function around the selection (excerpt %v)", task.ExcerptActive)
			}
		}
	}
}

// TestToolResultHoldsNoKey (#22.1): a file the model reads with read_file
// that holds the API key (a local config, a script) reaches the provider
// with the key struck out.
func TestToolResultHoldsNoKey(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc, "deploy.sh": "export KIMI_API_KEY=" + modeltest.DefaultKey + "\n"},
		modeltest.Rule{Match: `action="explain"`, Times: 1, Reasoning: "Read the script.", ToolCalls: []modeltest.ScriptToolCall{
			{Name: "read_file", Arguments: `{"path":"deploy.sh"}`},
		}},
		modeltest.Rule{LastRole: "tool", Content: "It exports the key."})
	if _, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &recorder{}); err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "export KIMI_API_KEY=[REDACTED]") {
		t.Fatalf("%d requests; the tool result was not sent struck", len(reqs))
	}
	for _, r := range reqs {
		if strings.Contains(string(r.Body), modeltest.DefaultKey) {
			t.Errorf("the key reached the provider in request %d", r.Seq)
		}
	}
}
