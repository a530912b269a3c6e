package linediff_test

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

func TestSplitLines(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n", []string{"\n"}},
		{"a", []string{"a"}},
		{"a\n", []string{"a\n"}},
		{"a\nb", []string{"a\n", "b"}},
		{"a\r\n\nb\n", []string{"a\r\n", "\n", "b\n"}},
	} {
		got := linediff.SplitLines(tt.in)
		if !slices.Equal(got, tt.want) || (tt.want == nil) != (got == nil) {
			t.Errorf("SplitLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseHunkHeader(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want linediff.HunkHeader
		ok   bool
	}{
		{"@@ -1,3 +1,4 @@", linediff.HunkHeader{OldStart: 1, OldCount: 3, NewStart: 1, NewCount: 4, HasCounts: true}, true},
		{"@@ -120,2 +120,3 @@ func f() {\n", linediff.HunkHeader{OldStart: 120, OldCount: 2, NewStart: 120, NewCount: 3, HasCounts: true}, true},
		{"@@ -0,0 +1 @@", linediff.HunkHeader{OldStart: 0, OldCount: 0, NewStart: 1, NewCount: 1}, true},
		{"@@ -5 +5 @@", linediff.HunkHeader{OldStart: 5, OldCount: 1, NewStart: 5, NewCount: 1}, true},
		{"@@@-7,1\t+8,2@@@", linediff.HunkHeader{OldStart: 7, OldCount: 1, NewStart: 8, NewCount: 2, HasCounts: true}, true},
		{"@@ -3,2 +4,1", linediff.HunkHeader{OldStart: 3, OldCount: 2, NewStart: 4, NewCount: 1, HasCounts: true}, true},
		{"@@", linediff.HunkHeader{}, false},
		{"@@ ... @@", linediff.HunkHeader{}, false},
		{"@@ @@", linediff.HunkHeader{}, false},
		{"@@ -1,2+1,2 @@", linediff.HunkHeader{}, false},
		{"@@ -1, +1,2 @@", linediff.HunkHeader{}, false},
		{"@@ -1,2 +1,2 x", linediff.HunkHeader{}, false},
		{"@ -1,2 +1,2 @@", linediff.HunkHeader{}, false},
	} {
		got, ok := linediff.ParseHunkHeader(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseHunkHeader(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// oldHeaderRE is the expression assist/patch read hunk headers with before
// ParseHunkHeader: the fuzz target holds the two in agreement.
var oldHeaderRE = regexp.MustCompile(`^@@+\s*-(\d+)(,(\d+))?\s+\+(\d+)(,(\d+))?\s*(@@+|$)`)

func FuzzParseHunkHeader(f *testing.F) {
	for _, s := range []string{"@@ -1,3 +1,4 @@", "@@ -0,0 +1 @@\n", "@@@-7,1\t+8,2@@@ x", "@@ ... @@", "@@ -1 +2", "@@ -99999999999999999999,1 +1,1 @@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		h, ok := linediff.ParseHunkHeader(line)
		m := oldHeaderRE.FindStringSubmatch(line)
		if ok != (m != nil) {
			t.Fatalf("ParseHunkHeader(%q) ok = %v, the expression says %v", line, ok, m != nil)
		}
		if !ok {
			return
		}
		atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
		want := linediff.HunkHeader{OldStart: atoi(m[1]), NewStart: atoi(m[4]), OldCount: 1, NewCount: 1, HasCounts: m[2] != "" && m[5] != ""}
		if m[2] != "" {
			want.OldCount = atoi(m[3])
		}
		if m[5] != "" {
			want.NewCount = atoi(m[6])
		}
		if h != want {
			t.Fatalf("ParseHunkHeader(%q) = %+v, the expression says %+v", line, h, want)
		}
	})
}

func FuzzSplitLines(f *testing.F) {
	for _, s := range []string{"", "\n", "a", "a\nb\n", "\r\n\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := linediff.SplitLines(s)
		want := strings.SplitAfter(s, "\n")
		if want[len(want)-1] == "" {
			want = want[:len(want)-1]
		}
		if !slices.Equal(got, want) || strings.Join(got, "") != s {
			t.Fatalf("SplitLines(%q) = %q, want %q", s, got, want)
		}
	})
}
