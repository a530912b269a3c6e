package main

import (
	"math"
	"slices"
	"strings"
	"testing"
)

const sample = `package p

func area(w, h int) int {
	return w * h
}

func use() {
	_ = area(1, 2)
}
`

// TestLineF1: the F1 of changed lines, as multisets.
func TestLineF1(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want map[string]int
		f1        float64
	}{
		{"both empty", nil, nil, 1},
		{"nothing suggested", nil, map[string]int{"+a": 1}, 0},
		{"same", map[string]int{"-a": 1, "+b": 1}, map[string]int{"-a": 1, "+b": 1}, 1},
		{"half right", map[string]int{"-a": 1, "+c": 1}, map[string]int{"-a": 1, "+b": 1}, 0.5},
		// got 1 of the 3 wanted lines: precision 1, recall 1/3.
		{"a third", map[string]int{"+x": 1}, map[string]int{"+x": 3}, 0.5},
		{"disjoint", map[string]int{"+x": 1}, map[string]int{"+y": 1}, 0},
	} {
		if f := lineF1(tc.got, tc.want); math.Abs(f-tc.f1) > 1e-9 {
			t.Errorf("%s: F1 %v, want %v", tc.name, f, tc.f1)
		}
	}
}

// TestChangedLines: a line changed counts as removed and written, each
// time it is.
func TestChangedLines(t *testing.T) {
	after := strings.Replace(sample, "return w * h", "return h * w", 1)
	after = strings.Replace(after, "\t_ = area(1, 2)\n", "", 1)
	got := changedLines(sample, after)
	want := map[string]int{"-\treturn w * h": 1, "+\treturn h * w": 1, "-\t_ = area(1, 2)": 1}
	if len(got) != len(want) {
		t.Fatalf("changed lines %v, want %v", got, want)
	}
	for l, n := range want {
		if got[l] != n {
			t.Errorf("%q: %d, want %d", l, got[l], n)
		}
	}
}

// TestPlacedLines: the same line changed at another place is another
// change.
func TestPlacedLines(t *testing.T) {
	text := "a\nx\nb\nx\nc\n"
	first := placedLines(text, "a\ny\nb\nx\nc\n")
	second := placedLines(text, "a\nx\nb\ny\nc\n")
	if f := lineF1(first, second); f != 0 {
		t.Errorf("x→y on line 2 against line 4: F1 %v, want 0", f)
	}
	if f := lineF1(first, placedLines(text, "a\ny\nb\nx\nc\n")); f != 1 {
		t.Errorf("the same change: F1 %v, want 1", f)
	}
}

// TestScoreCase: exact match, F1, reversal and a quiet case's silence.
func TestScoreCase(t *testing.T) {
	base := sample
	doc := strings.Replace(base, "func area(w, h int) int {", "func area(width, h int) int {", 1)
	want := strings.Replace(doc, "return w * h", "return width * h", 1)
	tx := texts{base: base, doc: doc, want: want, follows: true}

	if s := scoreCase(tx, true, want); !s.exact || s.f1 != 1 || s.reversed || !s.placed {
		t.Errorf("the true next hunk: %+v", s)
	}
	if s := scoreCase(tx, false, ""); s.shown || s.exact || s.f1 != 0 {
		t.Errorf("nothing shown: %+v", s)
	}
	partial := strings.Replace(doc, "return w * h", "return width * height", 1)
	if s := scoreCase(tx, true, partial); s.exact || s.f1 != 0.5 || s.reversed || !s.placed {
		t.Errorf("a near miss: %+v, want F1 0.5 at the right place", s)
	}
	elsewhere := strings.Replace(doc, "_ = area(1, 2)", "_ = area(2, 1)", 1)
	if s := scoreCase(tx, true, elsewhere); s.placed || s.exact || s.f1 != 0 {
		t.Errorf("a change elsewhere: %+v, want it at the wrong place", s)
	}
	if s := scoreCase(tx, true, base); !s.reversed || s.exact {
		t.Errorf("undoing the rename: %+v, want reversed", s)
	}
	// Writing again a line the user deleted is a reversal too.
	del := strings.Replace(base, "\t_ = area(1, 2)\n", "", 1)
	back := strings.Replace(del, "func use() {\n", "func use() {\n\t_ = area(1, 2)\n", 1)
	if !reverses(base, del, back) {
		t.Error("re-adding the deleted line is no reversal")
	}
	quiet := texts{base: base, doc: doc}
	if s := scoreCase(quiet, false, ""); s.shown || s.reversed {
		t.Errorf("a quiet case left quiet: %+v", s)
	}
	if s := scoreCase(quiet, true, want); !s.shown || s.exact {
		t.Errorf("a quiet case with a suggestion: %+v", s)
	}
}

// TestHunksAndCases: a rename's hunks, grouped; the pair they make in
// both orders; a change of one hunk is a quiet case.
func TestHunksAndCases(t *testing.T) {
	var b strings.Builder
	b.WriteString("package p\n\nfunc area(w, h int) int {\n\treturn w * h\n}\n")
	for i := range 90 {
		b.WriteString("\n// filler " + strings.Repeat("x", i%7) + "\n")
	}
	b.WriteString("func use() int {\n\treturn area(1, 2)\n}\n")
	old := b.String()
	cur := strings.Replace(old, "func area(w, h int) int {\n\treturn w * h", "func surface(w, h int) int {\n\treturn w * h", 1)
	cur = strings.Replace(cur, "return area(1, 2)", "return surface(1, 2)", 1)
	hs := hunksOf(old, cur, 3)
	if len(hs) != 2 || hs[0].Line != 2 || hs[0].Del != 1 || !slices.Equal(hs[0].Add, []string{"func surface(w, h int) int {"}) {
		t.Fatalf("hunks %+v", hs)
	}
	if !implies(old, hs[0], hs[1]) {
		t.Error("the rename's uses do not follow from it")
	}
	cases, quiet := casesOfFile("p.go", old, cur, defaultLimits)
	if len(cases) != 2 || len(quiet) != 0 || cases[0].User.Line != 2 || cases[1].Next.Line != 2 {
		t.Fatalf("cases %+v, quiet %+v", cases, quiet)
	}
	set := CaseSet{Files: []File{{Text: old}}}
	for _, c := range cases {
		tx, err := set.textsOf(c)
		if err != nil || tx.want != cur {
			t.Errorf("case %+v: the user's and the next hunk do not make the new version (%v)", c, err)
		}
	}
	one := strings.Replace(old, "return area(1, 2)", "return area(2, 1)", 1)
	if cases, quiet := casesOfFile("p.go", old, one, defaultLimits); len(cases) != 0 || len(quiet) != 1 {
		t.Errorf("a change of one hunk: cases %+v, quiet %+v", cases, quiet)
	}
	// Changes closer than the gap are one hunk.
	near := strings.Replace(old, "func area(w, h int) int {\n\treturn w * h\n}", "func area(x, h int) int {\n\treturn w * h\n}\n// near", 1)
	if hs := hunksOf(old, near, 3); len(hs) != 1 || hs[0].Del != 3 {
		t.Errorf("close changes: %+v, want one hunk of 3 old lines", hs)
	}
}

// TestShift: the shifted answer's hunk headers move, not below line 1.
func TestShift(t *testing.T) {
	d := "--- a/p.go\n+++ b/p.go\n@@ -3,4 +3,5 @@\n x\n@@ -10 +11 @@\n-y\n+z\n"
	if got, want := shift(d, 4), "--- a/p.go\n+++ b/p.go\n@@ -7,4 +7,5 @@\n x\n@@ -14 +15 @@\n-y\n+z\n"; got != want {
		t.Errorf("shift +4:\n%s\nwant\n%s", got, want)
	}
	if got := shift(d, -40); !strings.Contains(got, "@@ -1,4 +1,5 @@") {
		t.Errorf("shift -40: %s", got)
	}
}

// TestVersionsAndLicenses: the proxy's versions in order, its path
// encoding, the licenses the set quotes.
func TestVersionsAndLicenses(t *testing.T) {
	vs := []string{"v1.10.0", "v1.2.0", "v1.9.1"}
	slices.SortFunc(vs, compareVersions)
	if !slices.Equal(vs, []string{"v1.2.0", "v1.9.1", "v1.10.0"}) {
		t.Errorf("sorted %v", vs)
	}
	for _, v := range []string{"v1.2.0-rc.1", "1.2.0", "v1.2"} {
		if _, ok := semver(v); ok {
			t.Errorf("%s read as a release", v)
		}
	}
	if got := escape("github.com/BurntSushi/toml"); got != "github.com/!burnt!sushi/toml" {
		t.Errorf("escape: %s", got)
	}
	for text, id := range map[string]string{
		"Permission is hereby granted, free of charge, to any person":                      "MIT",
		"Redistribution and use in source and binary forms ... Neither the name of Google": "BSD-3-Clause",
		"Redistribution and use in source and binary forms, with or without":               "BSD-2-Clause",
		"Apache License\nVersion 2.0, January 2004":                                        "Apache-2.0",
		"All rights reserved.": "",
	} {
		if got := spdx(text); got != id {
			t.Errorf("%q: %q, want %q", text, got, id)
		}
	}
}

// TestShowsEdit: a prompt shows the edit when each line it writes is a
// "+" line and each it removes a "-" line.
func TestShowsEdit(t *testing.T) {
	doc := strings.Replace(sample, "func area(w, h int) int {", "func area(width, h int) int {", 1)
	log := "<edits>\n@@ -3,1 +3,1 @@\n-func area(w, h int) int {\n+func area(width, h int) int {\n</edits>\n"
	if !showsEdit(sample, doc, log) {
		t.Error("a prompt with the rename's diff does not show it")
	}
	if showsEdit(sample, doc, "<file>\n"+doc+"</file>\n") {
		t.Error("a prompt with the renamed file only shows the edit")
	}
	if showsEdit(sample, doc, "<edits>\n+func area(width, h int) int {\n</edits>\n") {
		t.Error("a prompt without the removed line shows the edit")
	}
}
