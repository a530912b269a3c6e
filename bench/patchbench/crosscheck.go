package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/patch/patchtest"
	"github.com/kimi-lsp/kimi-lsp/bench/patchbench/corpus"
)

// crossCheck measures what an independent reader of our own diffs would
// catch: for every case our applier applies, it writes the diff kimi-lsp
// edit prints (patch.Unified of each change, named as cli.go names them)
// and reads it with github.com/sourcegraph/go-diff, recounting every
// hunk's body against its header (patchtest.WellFormed: the check it ran in
// production until issue 31). It prints the cases applied and how many of
// them the check refuses.
func crossCheck(cases []corpus.Case, seed uint64, verbose bool) error {
	tmp, err := os.MkdirTemp("", "patchcross")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	applied, refused, files, hunks := 0, 0, 0, 0
	for _, c := range cases {
		dir, err := os.MkdirTemp(tmp, "case")
		if err != nil {
			return err
		}
		if err := corpus.Materialize(c, dir); err != nil {
			return err
		}
		d, err := patchtest.NewDir(dir)
		if err != nil {
			return err
		}
		changes, aerr := patch.Apply(d, c.Diff, patch.Options{})
		os.RemoveAll(dir)
		if aerr != nil {
			continue
		}
		applied++
		var text bytes.Buffer
		for _, ch := range changes {
			text.WriteString(ch.Diff(dir))
		}
		n, h, err := patchtest.WellFormed(text.String())
		files += n
		hunks += h
		if err != nil {
			refused++
			if verbose {
				fmt.Fprintf(os.Stderr, "%-45s %v\n", c.Name, err)
			}
		}
	}
	fmt.Printf("Cross-check (go-diff), seed %d: %d cases, %d applied by kimi-lsp, their diffs %d files and %d hunks; refused by the cross-check: %d.\n",
		seed, len(cases), applied, files, hunks, refused)
	return nil
}
