package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/assist/spend"
)

// requestsFlags are the flags of "kimi-lsp requests".
type requestsFlags struct {
	log  logFlags
	last *int
	json *bool
}

// newRequestsFlags returns requests' flag set and the flags it fills.
func newRequestsFlags(stderr io.Writer) (*flag.FlagSet, *requestsFlags) {
	fs := newFlagSet("requests", stderr)
	f := new(requestsFlags)
	f.log.register(fs)
	f.last = fs.Int("last", 20, "print the newest `N` requests (0: every request kept)")
	f.json = fs.Bool("json", false, "print them as a JSON array, oldest first, instead of a table")
	return fs, f
}

// cmdRequests prints the record of what left the machine: the metadata of
// the newest requests every kimi-lsp process sent (never their contents).
func cmdRequests(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs, f := newRequestsFlags(stderr)
	if _, code, ok := parseFlags(fs, args, stdout, 0); !ok {
		return code
	}
	if *f.last < 0 {
		fmt.Fprintf(stderr, "kimi-lsp requests: --last %d: want 0 or more\n", *f.last)
		return 2
	}
	if f.log.level == "" {
		f.log.level = "warn"
	}
	env, err := setup(&f.log, stderr, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 2
	}
	defer env.close()
	dir, err := spend.StateDir(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp requests: %v\n", err)
		return 1
	}
	recs, err := spend.Read(dir, *f.last, spend.Options{Logger: env.log})
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp requests: %v\n", env.redactor.String(err.Error()))
		return 1
	}
	if *f.json {
		if recs == nil {
			recs = []spend.Record{}
		}
		b, err := json.MarshalIndent(recs, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "kimi-lsp requests: %v\n", err)
			return 1
		}
		stdout.Write(append(b, '\n'))
		return 0
	}
	writeRequests(stdout, dir, recs)
	return 0
}

// writeRequests prints recs as a table, each request's files on the line
// below it.
func writeRequests(w io.Writer, dir string, recs []spend.Record) {
	if len(recs) == 0 {
		fmt.Fprintf(w, "No requests recorded (%s).\n", dir)
		return
	}
	fmt.Fprintf(w, "The newest %d requests recorded in %s, oldest first:\n\n", len(recs), dir)
	rows := [][]string{{"TIME", "SURFACE", "MODEL", "PROMPT", "CACHED", "WRITTEN", "OUTPUT", "COST", "OUTCOME"}}
	var files []string
	var total float64
	for _, r := range recs {
		cost := spend.USD(r.CostUSD)
		switch {
		case r.Unpriced:
			cost = "unpriced"
		case r.Estimated:
			cost = "~" + cost
		}
		total += r.CostUSD
		rows = append(rows, []string{r.Time.Local().Format("2006-01-02 15:04:05"), r.Surface, r.Model,
			spend.Count(r.PromptTokens), spend.Count(r.CachedTokens), spend.Count(r.WrittenTokens), spend.Count(r.OutputTokens), cost, r.Outcome})
		var fs []string
		for _, f := range r.Files {
			fs = append(fs, fmt.Sprintf("%s (%s B)", f.Path, spend.Count(f.Bytes)))
		}
		if r.MoreFiles > 0 {
			fs = append(fs, fmt.Sprintf("and %d more", r.MoreFiles))
		}
		files = append(files, strings.Join(fs, ", "))
	}
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for n, row := range rows {
		var b strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i >= 3 && i <= 7 { // the numbers, right-aligned
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
			b.WriteString("  ")
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		if n > 0 && files[n-1] != "" {
			fmt.Fprintf(w, "    files: %s\n", files[n-1])
		}
	}
	fmt.Fprintf(w, "\nTotal: %s for %d requests (costs at the configured prices; ~ an estimate: the reply carried no usage).\n", spend.USD(total), len(recs))
}
