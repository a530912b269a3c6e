package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestCommittedSet: every case of the committed set applies, every
// module it quotes has a license the set may quote, and there are quiet
// cases beside the others.
func TestCommittedSet(t *testing.T) {
	set, err := loadCases("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	licensed := map[string]bool{}
	for _, m := range set.Modules {
		if spdx(m.LicenseText) == "" || spdx(m.LicenseText) != m.License {
			t.Errorf("%s@%s: license %q, text read as %q", m.Path, m.Version, m.License, spdx(m.LicenseText))
		}
		licensed[m.Path+"@"+m.Version] = true
	}
	for _, f := range set.Files {
		if !licensed[f.Module+"@"+f.From] {
			t.Errorf("%s@%s %s: no license of its module version in the set", f.Module, f.From, f.Path)
		}
	}
	if q := countQuiet(set.Cases); q == 0 || q == len(set.Cases) {
		t.Errorf("%d quiet cases of %d", q, len(set.Cases))
	}
}

// TestPipelineOnCommittedCases runs a handful of committed cases through
// complete.NextEdits against the stand-in: the oracle's answer is shown
// exactly and re-placed when the user types above it (while it is asked
// or once it is shown),
// a quiet case stays quiet, a request after a first one shows the user's
// edit, an answer undoing the user's edit is never
// shown, and one typed inside is dropped.
func TestPipelineOnCommittedCases(t *testing.T) {
	set, err := loadCases("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := pick(set, 3)
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{Content: ""}}})
	t.Cleanup(srv.Close)
	r, err := newRunner(set, srv, map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}, settings, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	quiet := countQuietOf(set, cases)
	pos := len(cases) - quiet
	run := func(a answerer, follow string) *tally {
		t.Helper()
		tl, err := r.tally(ctx, io.Discard, cases, a, follow, false)
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	if tl := run(oracle, ""); tl.exact != pos || tl.shown != pos || tl.f1 != float64(pos) || tl.reversed != 0 {
		t.Errorf("oracle: %+v, want %d exact and nothing on the %d quiet cases", tl, pos, quiet)
	}
	// A request after one asked at the same place shows the user's edit
	// (the prompt's edit log) to the model.
	r.warm = "near"
	if tl := run(oracle, ""); tl.showsEdit != len(cases) || tl.exact != pos {
		t.Errorf("after a first request: %d of %d prompts show the user's edit, %d exact", tl.showsEdit, tl.asked, tl.exact)
	}
	r.warm = ""
	if tl := run(answerers["reverse"], ""); tl.shown != 0 || tl.refused != len(cases) {
		t.Errorf("reversing answers: %+v, want every one refused", tl)
	}
	if tl := run(oracle, typedWhileAsked); tl.follow["re-placed"] != pos {
		t.Errorf("typed above while asked: %v, want %d re-placed", tl.follow, pos)
	}
	if tl := run(oracle, "edit above"); tl.follow["re-placed"] != pos {
		t.Errorf("typed above once shown: %v, want %d re-placed", tl.follow, pos)
	}
	if tl := run(oracle, "edit inside"); tl.follow["dropped"] != pos {
		t.Errorf("typed inside: %v, want %d dropped", tl.follow, pos)
	}
}
