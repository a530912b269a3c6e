package assist_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

const twoFindings = `{"findings":[{"startLine":5,"endLine":5,"severity":"error","message":"Sub adds instead of subtracting","explanation":"a + b"},` +
	`{"startLine":3,"endLine":3,"severity":"hint","message":"the comment could say what happens on overflow","explanation":""}]}`

func TestReviewSendsStructuredOutputAndReadsFindings(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc},
		modeltest.Rule{Match: "careful senior reviewer", Content: twoFindings})
	task := f.task(config.ActionExplain, "calc.go", "package", "}\n")
	task.Action = f.cfg.ReviewAction()
	out, err := f.engine.Run(context.Background(), task, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Findings) != 2 || out.Findings[0].StartLine != 5 || out.Findings[0].Severity != cache.SeverityError ||
		out.Findings[1].StartLine != 3 || out.Findings[1].Severity != cache.SeverityHint {
		t.Fatalf("findings %+v", out.Findings)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 1 || reqs[0].Parsed == nil {
		t.Fatalf("requests %d (rejected?)", len(reqs))
	}
	var body struct {
		ToolChoice     json.RawMessage `json:"tool_choice"`
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Strict *bool           `json:"strict"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	rf := body.ResponseFormat
	if rf.Type != "json_schema" || rf.JSONSchema.Name != "review" || rf.JSONSchema.Strict == nil || !*rf.JSONSchema.Strict ||
		!strings.Contains(string(rf.JSONSchema.Schema), `"findings"`) || string(body.ToolChoice) != `"none"` {
		t.Fatalf("request: %s", reqs[0].Body)
	}
}

func TestReviewFallbackFencedAndMaxFindings(t *testing.T) {
	// Braces in the prose around the fence: only the fenced block is JSON.
	fenced := "Here is my review of `func Sub(a, b int) int {`:\n```json\n" + twoFindings + "\n```\nThat is all (no `}` left).\n"
	f := newFixture(t, map[string]string{"calc.go": calc}, modeltest.Rule{Match: "careful senior reviewer", Content: fenced})
	f.cfg.Review.MaxFindings = 1
	f.engine.SetConfig(f.cfg)
	task := f.task(config.ActionExplain, "calc.go", "package", "}\n")
	task.Action = f.cfg.ReviewAction()
	out, err := f.engine.Run(context.Background(), task, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Findings) != 1 || out.Findings[0].StartLine != 5 {
		t.Fatalf("findings %+v", out.Findings)
	}
	if out.Dropped != 1 {
		t.Fatalf("dropped %d: the finding over review.maxFindings is not counted as left out", out.Dropped)
	}
}

func TestParseFindingsValidates(t *testing.T) {
	reply := `{"findings":[
		{"startLine":2,"endLine":2,"severity":"warning","message":"ok\nsecond line","explanation":"x"},
		{"startLine":0,"endLine":1,"severity":"error","message":"line 0"},
		{"startLine":3,"endLine":99,"severity":"error","message":"past the end"},
		{"startLine":3,"endLine":2,"severity":"error","message":"backwards"},
		{"startLine":1.5,"endLine":2,"severity":"error","message":"fraction"},
		{"startLine":1,"endLine":1,"severity":"fatal","message":"unknown severity"},
		{"startLine":1,"endLine":1,"severity":"error","message":"   "},
		{"startLine":1,"endLine":1,"severity":"info","message":"evil \u202eright-to-left\u0007 bell"},
		{"startLine":4,"severity":"hint","message":"` + strings.Repeat("long ", 100) + `"}]}`
	got, dropped, err := assist.ParseFindings(reply, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if dropped != 6 || len(got) != 3 {
		t.Fatalf("got %+v, dropped %d", got, dropped)
	}
	if got[0].Message != "ok" || got[1].Message != "evil right-to-left bell" || got[1].Severity != cache.SeverityInformation {
		t.Fatalf("texts %q %q", got[0].Message, got[1].Message)
	}
	if n := utf8.RuneCountInString(got[2].Message); n > assist.MaxFindingMessage+1 || got[2].EndLine != 4 {
		t.Fatalf("long message: %d runes, %+v", n, got[2])
	}
	for _, bad := range []string{"", "no json here", "```json\n{\"other\": 1}\n```", `{"findings": 3}`, `[1,2]`} {
		if _, _, err := assist.ParseFindings(bad, 4, 0); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if got, _, err := assist.ParseFindings(`I found: {"findings": []} and nothing else`, 4, 0); err != nil || len(got) != 0 {
		t.Fatalf("bare object among text: %v %v", got, err)
	}
}

func FuzzParseFindings(f *testing.F) {
	f.Add(twoFindings, 6, 20)
	f.Add("```json\n"+twoFindings+"\n```", 3, 1)
	f.Add(`{"findings":[{"startLine":1e300,"endLine":-1,"severity":"error","message":"\u202e"}]}`, 1, 0)
	f.Fuzz(func(t *testing.T, text string, lines, max int) {
		if lines < 1 || lines > 1<<20 {
			lines = 10
		}
		got, _, err := assist.ParseFindings(text, lines, max)
		if err != nil && len(got) > 0 {
			t.Fatal("findings with an error")
		}
		if max > 0 && len(got) > max {
			t.Fatalf("%d findings, max %d", len(got), max)
		}
		for _, g := range got {
			if g.StartLine < 1 || g.EndLine < g.StartLine || g.EndLine > lines {
				t.Fatalf("lines %d-%d of %d", g.StartLine, g.EndLine, lines)
			}
			if g.Message == "" || strings.ContainsAny(g.Message, "\r\n") || utf8.RuneCountInString(g.Message) > assist.MaxFindingMessage+1 ||
				utf8.RuneCountInString(g.Explanation) > assist.MaxFindingExplanation+1 || !utf8.ValidString(g.Message) {
				t.Fatalf("message %q", g.Message)
			}
			for _, r := range g.Message + g.Explanation {
				if unicode.IsControl(r) && r != '\n' && r != '\t' || r >= '\u202A' && r <= '\u202E' || r >= '\u2066' && r <= '\u2069' {
					t.Fatalf("control %U in %q", r, g.Message)
				}
			}
			if g.Severity < cache.SeverityError || g.Severity > cache.SeverityHint {
				t.Fatalf("severity %d", g.Severity)
			}
		}
	})
}

func TestHunkLines(t *testing.T) {
	// The lines under a malformed header are no hunk's; the old file
	// lacked a final newline ("\ No newline" between the hunk's lines).
	diff := "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -30 +x @@\n+r\n@@ -1,3 +1,4 @@\n a\n+b\n c\n d\n@@ -10,3 +11,1 @@ func\n e\n-x\n-y\n" +
		"@@ -20 +19,2 @@\n-z\n\\ No newline at end of file\n+w\n+v\n@@ bad @@\n+q\n"
	got := assist.HunkLines(diff)
	want := [][2]int{{2, 2}, {12, 12}, {19, 20}}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
}

func FuzzHunkLines(f *testing.F) {
	f.Add("@@ -1,3 +1,4 @@\n a\n+b\n c\n@@ -10,2 +11,0 @@\n-x\n")
	f.Add("@@ -0,0 +1 @@\n+a\n\\ No newline at end of file\n")
	f.Fuzz(func(t *testing.T, diff string) {
		for _, r := range assist.HunkLines(diff) {
			if r[0] < 1 || r[1] < r[0] {
				t.Fatalf("ranges %v", assist.HunkLines(diff))
			}
		}
	})
}

// gitRepo makes a repository in a temporary directory with files committed.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func TestChangedFilesLeavesOutSecretsAndIgnored(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.go": "package a\n\nfunc A() {}\n", "b.go": "package a\n", ".env": "K=1\n",
		".gitignore": "gen.go\n", "gen.go": "package a\n"})
	// gen.go is tracked (added with -f) though .gitignore names it.
	for _, args := range [][]string{{"add", "-f", "gen.go"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "gen"}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc A() { panic(1) }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".env"), []byte("K=2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "gen.go"), []byte("package a\n\nvar G = 1\n"), 0o644)
	folders := workspace.NewFolders(workspace.DefaultOptions(), workspace.Hooks{})
	defer folders.Close()
	folders.Add(workspace.FileURI(dir), "ws")
	files, skipped, err := assist.ChangedFiles(context.Background(), folders, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Path != filepath.Join(dir, "a.go") || !strings.Contains(files[0].Diff, "+func A() { panic(1) }") ||
		len(files[0].Lines) != 1 || files[0].Lines[0] != [2]int{3, 3} {
		t.Fatalf("files %+v", files)
	}
	if len(skipped) != 2 || !strings.Contains(strings.Join(skipped, "\n"), ".env (secret)") || !strings.Contains(strings.Join(skipped, "\n"), "gen.go (ignored)") {
		t.Fatalf("skipped %v", skipped)
	}
	if _, _, err := assist.ChangedFiles(context.Background(), folders, t.TempDir()); err == nil {
		t.Fatal("no error outside a repository")
	}
}

// TestChangedFilesLiteralNames: a changed file whose name holds glob
// characters is diffed alone (git reads "a[1].go" as a pattern matching
// a1.go too unless told to read names literally); names with spaces and
// non-ASCII letters are read as they are.
func TestChangedFilesLiteralNames(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a[1].go": "package a\n", "a1.go": "package a\n\nvar X = 1\n", "é z.go": "package a\n"})
	os.WriteFile(filepath.Join(dir, "a[1].go"), []byte("package a\n\nvar Y = 2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a1.go"), []byte("package a\n\nvar X = 3\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "é z.go"), []byte("package a\n\nvar Z = 4\n"), 0o644)
	files, skipped, err := assist.ChangedFiles(context.Background(), nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || len(skipped) != 0 {
		t.Fatalf("files %+v, skipped %v", files, skipped)
	}
	for _, f := range files {
		if strings.Count(f.Diff, "diff --git") != 1 || len(f.Lines) != 1 {
			t.Errorf("%s: diff\n%s\nlines %v", f.Path, f.Diff, f.Lines)
		}
	}
	if files[2].Path != filepath.Join(dir, "é z.go") {
		t.Fatalf("paths %s, %s, %s", files[0].Path, files[1].Path, files[2].Path)
	}
}

// TestParseFindingsDuplicates: a finding the model repeats (same lines,
// same message) is shown once; the repeat counts as left out.
func TestParseFindingsDuplicates(t *testing.T) {
	one := `{"startLine":2,"endLine":3,"severity":"warning","message":"leaks the file","explanation":""}`
	reply := `{"findings":[` + one + `,` + one + `,{"startLine":2,"endLine":3,"severity":"error","message":"leaks the file ","explanation":"again"},` +
		`{"startLine":2,"endLine":2,"severity":"warning","message":"leaks the file","explanation":""}]}`
	got, dropped, err := assist.ParseFindings(reply, 4, 0)
	if err != nil || len(got) != 2 || dropped != 2 || got[1].EndLine != 2 {
		t.Fatalf("got %+v, dropped %d, %v", got, dropped, err)
	}
}

// TestReviewEndpointRefusesStructuredOutput: an endpoint that refuses
// response_format (a 400 naming it) is asked once more without it, and
// the findings of its plain answer (JSON in a fence) are read.
func TestReviewEndpointRefusesStructuredOutput(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc},
		modeltest.Rule{Match: "careful senior reviewer", Fault: "400", Message: "response_format.type json_schema is not supported", Times: 1},
		modeltest.Rule{Match: "careful senior reviewer", Content: "```json\n" + twoFindings + "\n```"})
	task := f.task(config.ActionExplain, "calc.go", "package", "}\n")
	task.Action = f.cfg.ReviewAction()
	out, err := f.engine.Run(context.Background(), task, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.Requests()
	if len(out.Findings) != 2 || len(reqs) != 2 || strings.Contains(string(reqs[1].Body), "response_format") {
		t.Fatalf("findings %+v, %d requests", out.Findings, len(reqs))
	}
}

// TestReviewAnswerOverOneMiB (#30.7): a review answer over 1 MiB keeps
// the findings that end in its first MiB and counts the rest as not read
// (Outcome.Cut, in ParseFindings's dropped) — it failed the whole review
// as not in the expected shape.
func TestReviewAnswerOverOneMiB(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"findings":[`)
	const n = 1500
	pad := strings.Repeat("x", 1000)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"startLine":5,"endLine":5,"severity":"warning","message":"problem %d","explanation":"%s"}`, i, pad)
	}
	b.WriteString(`]}`)
	reply := b.String()
	if len(reply) <= 1<<20 {
		t.Fatalf("the answer is only %d bytes", len(reply))
	}
	got, dropped, err := assist.ParseFindings(reply, 6, 0)
	if err != nil || len(got) < 900 || len(got)+dropped != n || got[0].Message != "problem 0" {
		t.Fatalf("%d findings, %d dropped, %v", len(got), dropped, err)
	}
	// Through a review: the findings kept are reviewed as usual (here
	// review.maxFindings keeps 20), and the rest is said.
	f := newFixture(t, map[string]string{"calc.go": calc}, modeltest.Rule{Match: "careful senior reviewer", Content: reply})
	task := f.task(config.ActionExplain, "calc.go", "package", "}\n")
	task.Action = f.cfg.ReviewAction()
	out, err := f.engine.Run(context.Background(), task, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Findings) == 0 || out.Cut != n-len(got) || !strings.Contains(assist.CutNote(out.Cut), "not read: the model's answer was over 1 MiB") {
		t.Fatalf("%d findings, %d cut, %d dropped", len(out.Findings), out.Cut, out.Dropped)
	}
}

// TestFindingTextsCleaned (#30.7): a finding's message and explanation
// lose escape sequences whole (no "[31m" left of "\x1b[31m"), zero-width
// characters (U+200B–U+200D, U+2060, U+FEFF), bidi controls and other
// controls; the explanation keeps its lines and indentation.
func TestFindingTextsCleaned(t *testing.T) {
	reply := `{"findings":[{"startLine":2,"endLine":2,"severity":"error","message":"\u001b[31mleaks\u001b[0m the\u200b file\u202e\u2060\ufeff",` +
		`"explanation":"close it:\n\tdefer f.Close()\u200d\u001b]8;;http://evil\u0007here\u001b]8;;\u0007"}]}`
	got, _, err := assist.ParseFindings(reply, 4, 0)
	if err != nil || len(got) != 1 {
		t.Fatalf("%+v, %v", got, err)
	}
	if got[0].Message != "leaks the file" || got[0].Explanation != "close it:\n\tdefer f.Close()here" {
		t.Fatalf("message %q, explanation %q", got[0].Message, got[0].Explanation)
	}
}
