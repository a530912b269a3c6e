// Command nexteval evaluates next-edit suggestions on cases built from
// real code history: consecutive releases of Go modules from the module
// proxy, where the user makes one hunk of a release's change to a file
// and a neighbouring hunk that shares a changed identifier with it is
// what should be suggested next; and quiet cases, a file whose change was
// one hunk, where nothing should be.
//
// Every case runs through the real pipeline, complete.NextEdits (the
// user's edit, the pause, the prompt, the request, the answer's checks,
// placing), and is scored as edit-prediction evaluations are: exact match
// of the suggested hunk, whether it is at the right place, F1 of the
// changed lines, how often a suggestion reverses the user's edit, how
// often a quiet case stays quiet. The stand-in's run also says whether
// each request's prompt showed the user's edit.
//
// Against the stand-in (assist/model/modeltest on loopback, the default)
// the answers are scripted: the true next hunk (the oracle) and
// perturbations of it (no file header, hunks shifted, miscounted, spaces
// for tabs, no context lines, a diff of the text before the user's edit,
// one that undoes the user's edit), and a one-rule rename baseline. Then
// the user, while the oracle is asked or once its suggestion is shown,
// types a line above it, accepts it, or types inside it: the figures say
// how the pipeline places, re-places or drops each. An oracle case lost
// is a pipeline bug.
//
// Against a real model (-real, with the user's own KIMI_API_KEY and
// endpoint; never run by the tests) the model answers, and the same
// scores are its quality.
//
//	go run ./bench/nexteval -build            # fetch from GOPROXY, write testdata/cases.json
//	go run ./bench/nexteval [-warm near|end]  # the stand-in: oracle, perturbations, follow-ups
//	KIMI_API_KEY=… go run ./bench/nexteval -real -base-url URL [-model NAME] [-n 20] [-warm near]
//
// See bench/README.md ("Evaluation on real code history") for the
// figures and D76 in docs/decisions.md for how cases are chosen.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/bench/internal/benchkit"
)

func main() {
	var (
		doBuild = flag.Bool("build", false, "fetch the modules' releases from the module proxy (GOPROXY) and write the case set to -cases")
		casesF  = flag.String("cases", "bench/nexteval/testdata/cases.json", "the case set")
		answers = flag.String("answers", "oracle,bare,shift+4,shift-4,shift+40,shift-40,miscounted,spaces for tabs,no context,pre-edit base,reverse,rename baseline", "the stand-in's answers to run")
		real    = flag.Bool("real", false, "ask the real model (KIMI_API_KEY from the environment, -base-url) instead of the stand-in")
		baseURL = flag.String("base-url", "", "with -real: the endpoint (default: KIMI_BASE_URL; one of them is required)")
		model   = flag.String("model", "", "with -real: nextEdit.model (default: kimi-lsp's)")
		limit   = flag.Int("n", 0, "run the first n cases where something follows and the first n quiet ones (0: all)")
		verbose = flag.Bool("v", false, "print every case's outcome")
		warm    = flag.String("warm", "", "ask once before each case's edit, after deleting a blank line \"near\" it or at the file's \"end\", so that its request is the document's second (the first shows no edit log)")
	)
	flag.Parse()
	log.SetFlags(0)
	if *warm != "" && *warm != "near" && *warm != "end" {
		log.Fatalf("-warm %q: near, end, or not given", *warm)
	}
	if *doBuild {
		set, err := build(defaultLimits, os.Stderr)
		if err != nil {
			log.Fatal(err)
		}
		if err := set.save(*casesF); err != nil {
			log.Fatal(err)
		}
		st, _ := os.Stat(*casesF)
		fmt.Printf("%s: %d cases (%d quiet) from %d files of %d versions of %d modules, %d bytes\n",
			*casesF, len(set.Cases), countQuiet(set.Cases), len(set.Files), len(set.Modules), set.modules(), st.Size())
		return
	}
	set, err := loadCases(*casesF)
	if err != nil {
		log.Fatal(err)
	}
	cases := pick(set, *limit)
	ctx := context.Background()
	if *real {
		if err := runReal(ctx, os.Stdout, set, cases, *baseURL, *model, *warm, *verbose); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := runStandIn(ctx, os.Stdout, set, cases, strings.Split(*answers, ","), *warm, *verbose); err != nil {
		log.Fatal(err)
	}
}

func countQuiet(cs []Case) int {
	n := 0
	for _, c := range cs {
		n += boolInt(c.Quiet())
	}
	return n
}

// pick returns the indexes of the cases to run: the first n of each kind
// (all for 0).
func pick(set *CaseSet, n int) []int {
	var out []int
	pos, quiet := 0, 0
	for i, c := range set.Cases {
		k := &pos
		if c.Quiet() {
			k = &quiet
		}
		if n == 0 || *k < n {
			out = append(out, i)
			*k++
		}
	}
	return out
}

// settings are the editor settings of every run: no pause (the case's
// edit is its whole burst), no inline completion.
const settings = `{"nextEdit": {"debounceMs": 0}, "completion": {"enable": false}}`

// runStandIn runs the cases against the stand-in for each answer, then
// the oracle with each follow-up, and writes the tables.
func runStandIn(ctx context.Context, w io.Writer, set *CaseSet, cases []int, names []string, warm string, verbose bool) error {
	for _, name := range names {
		if answererOf(name) == nil {
			return fmt.Errorf("no answer %q (have oracle, bare, shift+N, shift-N, miscounted, spaces for tabs, no context, pre-edit base, reverse, rename baseline)", name)
		}
	}
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{Content: ""}}})
	defer srv.Close()
	r, err := newRunner(set, srv, map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}, settings, 30*time.Second)
	if err != nil {
		return err
	}
	r.warm = warm
	fmt.Fprintf(w, "%d cases where an edit follows, %d quiet, from %d modules; stand-in answers; warm-up %q; load average %s\n\n",
		len(cases)-countQuietOf(set, cases), countQuietOf(set, cases), set.modules(), warm, benchkit.LoadAvg())
	fmt.Fprintln(w, tallyHeader)
	var edits string
	for _, name := range names {
		t, err := r.tally(ctx, w, cases, answererOf(name), "", verbose)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, t.row(name))
		if name == names[0] {
			when := "the document's first request"
			if warm != "" {
				when = "after a warm-up request " + warm
			}
			edits = fmt.Sprintf("requests whose prompt shows the user's edit as diff lines (%s): %s %d of %d", name, when, t.showsEdit, t.asked)
		}
	}
	fmt.Fprintf(w, "\n%s", edits)
	if warm == "" {
		// The same oracle, its request the document's second: after one
		// asked at the user's edit, and after one at the file's end.
		for _, wu := range []string{"near", "end"} {
			r.warm = wu
			t, err := r.tally(ctx, io.Discard, cases, oracle, "", false)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "; after a request %s: %d of %d", map[string]string{"near": "at the edit", "end": "at the file's end"}[wu], t.showsEdit, t.asked)
		}
		r.warm = ""
	}
	fmt.Fprint(w, "\n\n")
	fmt.Fprintln(w, "| the user, while the oracle is asked or once its suggestion is shown | shown | accepted | re-placed | dropped | kept | lost |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, follow := range followUps {
		t, err := r.tally(ctx, w, cases, oracle, follow, verbose)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d |\n", follow, t.shown, t.follow["accepted"], t.follow["re-placed"], t.follow["dropped"], t.follow["kept"], t.follow["lost"]+t.follow["not hung up"])
	}
	return nil
}

func countQuietOf(set *CaseSet, cases []int) int {
	n := 0
	for _, i := range cases {
		n += boolInt(set.Cases[i].Quiet())
	}
	return n
}

// runReal runs the cases against the user's endpoint and model.
func runReal(ctx context.Context, w io.Writer, set *CaseSet, cases []int, baseURL, model, warm string, verbose bool) error {
	env := map[string]string{"KIMI_API_KEY": os.Getenv(config.APIKeyEnv), "KIMI_BASE_URL": os.Getenv("KIMI_BASE_URL")}
	if env["KIMI_API_KEY"] == "" {
		return fmt.Errorf("-real asks the model with your own key: set %s", config.APIKeyEnv)
	}
	if baseURL != "" {
		env["KIMI_BASE_URL"] = baseURL
	}
	if env["KIMI_BASE_URL"] == "" {
		// The endpoint is the user's say, never a default: a run costs.
		return fmt.Errorf("-real asks your own endpoint: give -base-url or set KIMI_BASE_URL")
	}
	s := settings
	if model != "" {
		s = fmt.Sprintf(`{"nextEdit": {"debounceMs": 0, "model": %q}, "completion": {"enable": false}}`, model)
	}
	r, err := newRunner(set, nil, env, s, 3*time.Minute)
	if err != nil {
		return err
	}
	r.warm = warm
	fmt.Fprintf(w, "%d cases where an edit follows, %d quiet; model %s at %s; warm-up %q\n\n", len(cases)-countQuietOf(set, cases), countQuietOf(set, cases), r.config().NextEditModel(), r.config().BaseURL, warm)
	fmt.Fprintln(w, tallyHeader)
	t, err := r.tally(ctx, w, cases, nil, "", verbose)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, t.row(r.config().NextEditModel()))
	st := r.next.Stats()
	fmt.Fprintf(w, "\n%d requests, %d prompt tokens (hit ratio %.2f), $%.4f\n", st.Requested, st.PromptTokens, st.HitRatio, st.CostUSD)
	return nil
}

// tally is one answer's figures over the cases.
type tally struct {
	cases, quiet              int
	shown, exact, shownQuiet  int
	placed                    int
	f1                        float64
	reversed, failed, refused int
	empty                     int
	asked, showsEdit          int // requests the stand-in received, and those whose prompt showed the edit
	why                       map[string]int
	follow                    map[string]int
}

const tallyHeader = "| answer | shown (of cases where an edit follows) | at the right place | exact | changed-lines F1 | quiet cases kept quiet | reverses the user's edit (of all shown) | not shown: refused / empty / failed | why not shown |\n|---|---:|---:|---:|---:|---:|---:|---|---|"

func (t *tally) row(name string) string {
	pos := t.cases - t.quiet
	var whys []string
	for k, n := range t.why {
		whys = append(whys, fmt.Sprintf("%s ×%d", k, n))
	}
	slices.Sort(whys)
	return fmt.Sprintf("| %s | %d / %d | %d | %d | %.3f | %d / %d | %d / %d | %d / %d / %d | %s |",
		name, t.shown-t.shownQuiet, pos, t.placed, t.exact, t.f1/float64(max(pos, 1)), t.quiet-t.shownQuiet, t.quiet,
		t.reversed, t.shown, t.refused, t.empty, t.failed, strings.Join(whys, "; "))
}

// tally runs the cases with one answer (and follow-up) and adds them up.
func (r *runner) tally(ctx context.Context, w io.Writer, cases []int, a answerer, follow string, verbose bool) (*tally, error) {
	t := &tally{why: map[string]int{}, follow: map[string]int{}}
	failedInARow := 0
	for _, i := range cases {
		o, err := r.one(ctx, i, a, follow)
		if err != nil {
			return nil, err
		}
		if failedInARow = (failedInARow + 1) * boolInt(o.fail); failedInARow == 3 {
			// A refused key, a pause or a spent budget fails every case
			// after: say why rather than wait on each.
			return nil, fmt.Errorf("%s: 3 cases in a row failed, the last: %s", r.set.name(r.set.Cases[i]), o.why)
		}
		c := r.set.Cases[i]
		t.cases++
		if c.Quiet() {
			t.quiet++
			t.shownQuiet += boolInt(o.shown)
		}
		t.shown += boolInt(o.shown)
		t.exact += boolInt(o.exact)
		t.placed += boolInt(o.placed)
		t.f1 += o.f1
		t.reversed += boolInt(o.reversed)
		switch {
		case o.shown:
		case o.fail:
			t.failed++
			t.why[reason(o.why)]++
		case o.why != "":
			t.refused++
			t.why[reason(o.why)]++
		default:
			t.empty++
		}
		if o.follow != "" {
			t.follow[o.follow]++
		}
		t.asked += boolInt(o.asked)
		t.showsEdit += boolInt(o.showsEdit)
		if verbose {
			fmt.Fprintf(w, "  %s (%d lines): shown %v placed %v exact %v f1 %.2f reversed %v prompt shows the edit %v %s %s\n",
				r.set.name(c), strings.Count(r.set.Files[c.File].Text, "\n"), o.shown, o.placed, o.exact, o.f1, o.reversed, o.showsEdit, o.follow, o.why)
		}
	}
	return t, nil
}

// reason shortens a why to its kind: the words before its first number or
// colon.
func reason(why string) string {
	if i := strings.IndexAny(why, ":0123456789"); i > 0 {
		why = why[:i]
	}
	return strings.TrimSpace(why)
}
