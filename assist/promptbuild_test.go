package assist_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// repeatedNames is a workspace whose files define the same names as
// per-platform and copied files do: F in four files (two of them copies),
// init and a method F on several types in one large file.
func repeatedNames() map[string]string {
	fn := func(name, body string) string {
		return "// " + name + " does its part.\nfunc " + name + "(n int) int {\n" + body + "\treturn n\n}\n\n"
	}
	filler := strings.Repeat("\tn = n*3 + 1 // a line that makes the file large\n", 12)
	f := "package p\n\n" + fn("F", filler) + fn("G", filler)
	big := "package p\n\nimport \"fmt\"\n\n"
	for i := range 40 {
		big += fmt.Sprintf("type T%d struct{ n int }\n\nfunc (t T%d) F() int {\n%s\treturn t.n\n}\n\nfunc init() {\n\tfmt.Sprint(%d)\n}\n\n", i, i, strings.ReplaceAll(filler, "n =", "t.n ="), i)
		big += fn(fmt.Sprintf("H%d", i), filler)
	}
	return map[string]string{
		"p/f.go":           f,
		"p/f_linux.go":     "//go:build linux\n\n" + f,
		"p/f_darwin.go":    "//go:build darwin\n\n" + f,
		"p/big.go":         big,
		"copy/p/f.go":      f,
		"copy/p/big.go":    big,
		"q/q.go":           "package q\n\nimport \"p\"\n\n" + fn("Q", "\tn = p.F(n) + p.G(n)\n"),
		"q/q_test.go":      "package q\n\n" + fn("F", "\tn++\n"),
		"python/a.py":      "def f(n):\n    return n\n\n\ndef f(n):\n    return n + 1\n\n\nclass A:\n    def f(self):\n        return 1\n",
		"python/copy_a.py": "def f(n):\n    return n\n",
	}
}

// TestRandomSessionsBuildEveryPrompt runs random sessions — opens, edits
// (functions duplicated, renamed, removed), saves, closes and actions over
// random selections — in a workspace that defines the same names many
// times, and checks that every action's prompt builds: what the workspace
// holds must never make prompt building fail.
func TestRandomSessionsBuildEveryPrompt(t *testing.T) {
	files := repeatedNames()
	f := newFixture(t, files)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	actions := []string{config.ActionExplain, config.ActionFix, config.ActionDocument, config.ActionTests, config.ActionRewrite}
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 31))
		open := map[string]*workspace.Snapshot{}
		version := int32(0)
		built := 0
		for step := range 120 {
			name := names[rng.IntN(len(names))]
			p := filepath.Join(f.dir, name)
			uri := workspace.FileURI(p)
			cur, isOpen := open[name]
			switch op := rng.IntN(10); {
			case op < 2 || !isOpen: // open (again: a reload)
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				version++
				open[name] = workspace.NewSnapshot(uri, "", version, string(b))
				continue
			case op < 5: // edit
				version++
				open[name] = workspace.NewSnapshot(uri, "", version, randomEdit(rng, cur.Text()))
				continue
			case op == 5: // save
				if err := os.WriteFile(p, []byte(cur.Text()), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			case op == 6: // close
				delete(open, name)
				continue
			}
			text := cur.Text()
			start := rng.IntN(len(text) + 1)
			end := min(len(text), start+rng.IntN(4000))
			start, end = lineStart(text, start), lineStart(text, end)
			snaps := make([]*workspace.Snapshot, 0, len(open))
			for _, s := range open {
				snaps = append(snaps, s)
			}
			r := assist.TaskRequest{Action: actions[rng.IntN(len(actions))], Instruction: "make it better",
				Document: cur, Start: start, End: end, Open: snaps}
			task, err := f.engine.BuildTask(f.cfg, f.folders, r)
			if err != nil {
				t.Fatalf("seed %d step %d: %s on %s [%d,%d): BuildTask: %v", seed, step, r.Action, name, start, end, err)
			}
			if err := f.engine.BuildPrompt(task); err != nil {
				t.Fatalf("seed %d step %d: %s on %s [%d,%d): %v", seed, step, r.Action, name, start, end, err)
			}
			built++
		}
		if built < 20 {
			t.Fatalf("seed %d: only %d prompts built; the session is too short to tell", seed, built)
		}
	}
}

// lineStart moves off to the start of its line, so that a selection never
// splits a character.
func lineStart(text string, off int) int {
	return strings.LastIndexByte(text[:off], '\n') + 1
}

// randomEdit changes text as a user or a copied file would: a function
// duplicated, a name changed, lines removed or typed.
func randomEdit(rng *rand.Rand, text string) string {
	from := rng.IntN(len(text) + 1)
	i := strings.Index(text[from:], "\nfunc ")
	switch rng.IntN(4) {
	case 0: // duplicate a declaration
		if i < 0 {
			return text + "\nfunc F() {}\n"
		}
		at := from + i + 1
		end := strings.Index(text[at:], "\n}\n")
		if end < 0 {
			return text
		}
		decl := text[at : at+end+3]
		return text[:at] + decl + "\n" + text[at:]
	case 1: // rename
		return strings.Replace(text, "func G(", "func F(", 1)
	case 2: // remove lines
		a := lineStart(text, rng.IntN(len(text)+1))
		b := lineStart(text, min(len(text), a+rng.IntN(600)))
		return text[:a] + text[b:]
	default: // type a line
		a := lineStart(text, rng.IntN(len(text)+1))
		return text[:a] + "\tx := 1 // typed\n" + text[a:]
	}
}
