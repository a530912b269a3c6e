// Command patchbench compares edit appliers on the corpus of package
// corpus: this repository's applier, GNU patch (fuzz 0 and 2) and git apply
// (plain and --recount), all on the same cases in the same run. It prints
// Markdown tables per perturbation and per language: correct / wrong /
// refused.
//
//	go run ./bench/patchbench [-seed N] [-v] [-only kimi-lsp]
//	go run ./bench/patchbench -crosscheck [-seed N] [-v]
//
// The default seed is corpus.FreshSeed, a corpus the applier was not tuned
// on; corpus.DefaultSeed is the one it was tuned on.
//
// GNU patch and git must be on PATH (Debian: apt-get install -y patch git).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/tools"
	"github.com/kimi-lsp/kimi-lsp/bench/patchbench/corpus"
)

type tool struct {
	name string
	run  func(c corpus.Case, tmp string) (corpus.Verdict, error)
}

// external runs a command in a fresh copy of the case's files, with the
// model's reply in a file outside that directory.
func external(name string, args func(c corpus.Case, diffFile string) []string) tool {
	return tool{name: name, run: func(c corpus.Case, tmp string) (corpus.Verdict, error) {
		dir, err := os.MkdirTemp(tmp, "ext")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(dir)
		work := filepath.Join(dir, "w")
		if err := os.Mkdir(work, 0o755); err != nil {
			return "", err
		}
		if err := corpus.Materialize(c, work); err != nil {
			return "", err
		}
		df := filepath.Join(dir, "reply.diff")
		if err := os.WriteFile(df, []byte(c.Diff), 0o644); err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		a := args(c, df)
		cmd := exec.CommandContext(ctx, a[0], a[1:]...)
		cmd.Dir = work
		cmd.Stdin = nil
		_ = cmd.Run() // the verdict comes from the files, not the exit code
		got, err := corpus.Snapshot(work)
		if err != nil {
			return "", err
		}
		return corpus.Judge(c, got), nil
	}}
}

func main() {
	seed := flag.Uint64("seed", corpus.FreshSeed, "corpus seed")
	verbose := flag.Bool("v", false, "list every case that is not correct")
	only := flag.String("only", "", "run only the tool of this name (e.g. kimi-lsp)")
	repair := flag.Bool("repair", false, "measure the correction round instead: scripted second answers, diff against forced replace_text")
	cross := flag.Bool("crosscheck", false, "measure the go-diff cross-check instead: read the diff kimi-lsp edit would print for every applied case")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	for _, bin := range []string{"patch", "git"} {
		if _, err := exec.LookPath(bin); err != nil {
			log.Error("missing tool; on Debian: apt-get install -y patch git", "tool", bin)
			os.Exit(1)
		}
	}
	root, err := corpus.GOROOT()
	if err != nil {
		log.Error("go env GOROOT", "err", err)
		os.Exit(1)
	}
	cases, err := corpus.Generate(root, *seed)
	if err != nil {
		log.Error("generate corpus", "err", err)
		os.Exit(1)
	}
	if *cross {
		if err := crossCheck(cases, *seed, *verbose); err != nil {
			log.Error("crosscheck", "err", err)
			os.Exit(1)
		}
		return
	}
	if *repair {
		if err := repairTable(cases, *seed); err != nil {
			log.Error("repair", "err", err)
			os.Exit(1)
		}
		return
	}
	strip := func(c corpus.Case) string { return fmt.Sprintf("-p%d", c.Strip) }
	tools := []tool{
		{name: "kimi-lsp", run: func(c corpus.Case, tmp string) (corpus.Verdict, error) {
			v, _, err := corpus.RunOurs(c, tmp)
			return v, err
		}},
		external("patch --fuzz=0", func(c corpus.Case, f string) []string {
			return []string{"patch", "-f", strip(c), "--fuzz=0", "--no-backup-if-mismatch", "-r", "-", "-s", "-i", f}
		}),
		external("patch --fuzz=2", func(c corpus.Case, f string) []string {
			return []string{"patch", "-f", strip(c), "--fuzz=2", "--no-backup-if-mismatch", "-r", "-", "-s", "-i", f}
		}),
		external("git apply", func(c corpus.Case, f string) []string {
			return []string{"git", "apply", strip(c), "--whitespace=nowarn", f}
		}),
		external("git apply --recount", func(c corpus.Case, f string) []string {
			return []string{"git", "apply", strip(c), "--recount", "--whitespace=nowarn", f}
		}),
	}
	if *only != "" {
		var keep []tool
		for _, t := range tools {
			if t.name == *only {
				keep = append(keep, t)
			}
		}
		tools = keep
	}
	tmp, err := os.MkdirTemp("", "patchbench")
	if err != nil {
		log.Error("temp dir", "err", err)
		os.Exit(1)
	}
	defer os.RemoveAll(tmp)

	type tally struct{ correct, wrong, refused int }
	per := map[string][]tally{}     // perturbation -> per tool
	perLang := map[string][]tally{} // language and outcome -> per tool
	var langs []string
	total := make([]tally, len(tools))
	applyTotal := make([]tally, len(tools))
	refuseTotal := make([]tally, len(tools))
	start := time.Now()
	for _, c := range cases {
		if per[c.Perturbation] == nil {
			per[c.Perturbation] = make([]tally, len(tools))
		}
		lk := c.Lang + " " + string(c.Expect)
		if perLang[lk] == nil {
			perLang[lk] = make([]tally, len(tools))
			if perLang[c.Lang+" "+string(corpus.Apply)] == nil || perLang[c.Lang+" "+string(corpus.Refuse)] == nil {
				langs = append(langs, c.Lang)
			}
		}
		for i, t := range tools {
			v, err := t.run(c, tmp)
			if err != nil {
				log.Error("run", "tool", t.name, "case", c.Name, "err", err)
				os.Exit(1)
			}
			row := &per[c.Perturbation][i]
			for _, tl := range []*tally{row, &total[i], &perLang[lk][i], map[corpus.Outcome]*tally{corpus.Apply: &applyTotal[i], corpus.Refuse: &refuseTotal[i]}[c.Expect]} {
				switch v {
				case corpus.Correct:
					tl.correct++
				case corpus.Wrong:
					tl.wrong++
				default:
					tl.refused++
				}
			}
			if *verbose && v != corpus.Correct {
				fmt.Fprintf(os.Stderr, "%-20s %-45s %s\n", t.name, c.Name, v)
			}
		}
	}
	fmt.Printf("Corpus: %d cases (seed %d, GOROOT %s), %d per perturbation. Cells: correct / wrong / refused.\n\n",
		len(cases), *seed, root, corpus.PerPerturbation)
	head := func(first string) {
		fmt.Printf("| %s | expect |", first)
		for _, t := range tools {
			fmt.Printf(" %s |", t.name)
		}
		fmt.Print("\n|---|---|" + strings.Repeat("---|", len(tools)) + "\n")
	}
	head("perturbation")
	for _, p := range corpus.Perturbations {
		fmt.Printf("| %s | %s |", p.Name, p.Expect)
		for _, tl := range per[p.Name] {
			fmt.Printf(" %d / %d / %d |", tl.correct, tl.wrong, tl.refused)
		}
		fmt.Println()
	}
	fmt.Print("| **all** | |")
	for _, tl := range total {
		fmt.Printf(" **%d / %d / %d** |", tl.correct, tl.wrong, tl.refused)
	}
	fmt.Println()
	fmt.Print("| APPLY cases correct | |")
	for _, tl := range applyTotal {
		n := tl.correct + tl.wrong + tl.refused
		fmt.Printf(" %.1f %% |", 100*float64(tl.correct)/float64(n))
	}
	fmt.Println()
	fmt.Print("| REFUSE cases refused | |")
	for _, tl := range refuseTotal {
		fmt.Printf(" %d of %d |", tl.correct, tl.correct+tl.wrong+tl.refused)
	}
	fmt.Println()
	fmt.Print("\nBy language. Cells: correct / wrong / refused.\n\n")
	head("language")
	seen := map[string]bool{}
	for _, l := range langs {
		if seen[l] {
			continue
		}
		seen[l] = true
		for _, e := range []corpus.Outcome{corpus.Apply, corpus.Refuse} {
			fmt.Printf("| %s | %s |", l, e)
			for _, tl := range perLang[l+" "+string(e)] {
				fmt.Printf(" %d / %d / %d |", tl.correct, tl.wrong, tl.refused)
			}
			fmt.Println()
		}
	}
	fmt.Fprintf(os.Stderr, "ran %d cases × %d tools in %s\n", len(cases), len(tools), time.Since(start).Round(time.Second))
}

// repairTable runs every repairable case our applier refuses through the
// tool loop twice, once per correction mode, with the same scripted model,
// and prints a Markdown table: repaired / wrong / still refused.
func repairTable(cases []corpus.Case, seed uint64) error {
	tmp, err := os.MkdirTemp("", "patchrepair")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	modes := []struct {
		name string
		mode tools.CorrectionMode
	}{{"ask for another diff", tools.CorrectWithDiff}, {"force replace_text", tools.CorrectWithTool}}
	type tally struct{ ok, wrong, refused int }
	rows := map[string][]tally{}
	var order []string
	total := make([]tally, len(modes))
	for i, c := range cases {
		if !corpus.Repairable(c) {
			continue
		}
		first, _, err := corpus.RunOurs(c, tmp)
		if err != nil {
			return err
		}
		if first != corpus.Refused && !(c.Expect == corpus.Refuse && first == corpus.Correct) {
			continue // applied in round one
		}
		if rows[c.Perturbation] == nil {
			rows[c.Perturbation] = make([]tally, len(modes))
			order = append(order, c.Perturbation)
		}
		for j, m := range modes {
			v, _, err := corpus.Repair(c, tmp, m.mode, seed+uint64(i))
			if err != nil {
				return err
			}
			for _, t := range []*tally{&rows[c.Perturbation][j], &total[j]} {
				switch v {
				case corpus.Correct:
					t.ok++
				case corpus.Wrong:
					t.wrong++
				default:
					t.refused++
				}
			}
		}
	}
	fmt.Printf("Correction round, seed %d: cases refused in round one with one right result. Cells: repaired / wrong / still refused.\n\n", seed)
	fmt.Print("| first answer | cases |")
	for _, m := range modes {
		fmt.Printf(" %s |", m.name)
	}
	fmt.Print("\n|---|---|" + strings.Repeat("---|", len(modes)) + "\n")
	for _, p := range order {
		t := rows[p]
		fmt.Printf("| %s | %d |", p, t[0].ok+t[0].wrong+t[0].refused)
		for _, x := range t {
			fmt.Printf(" %d / %d / %d |", x.ok, x.wrong, x.refused)
		}
		fmt.Println()
	}
	n := total[0].ok + total[0].wrong + total[0].refused
	fmt.Printf("| **all** | %d |", n)
	for _, x := range total {
		fmt.Printf(" **%d / %d / %d** |", x.ok, x.wrong, x.refused)
	}
	fmt.Println()
	fmt.Print("| repair rate | |")
	for _, x := range total {
		fmt.Printf(" %.1f %% |", 100*float64(x.ok)/float64(max(n, 1)))
	}
	fmt.Println()
	return nil
}
