package main

import (
	"archive/zip"
	"bytes"
	"cmp"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// source is one module the set is built from: its consecutive releases up
// to Last (so that a rebuild after a new release gives the same set).
type source struct {
	Module, Last string
}

// sources are the modules the committed set comes from: small, widely
// used, permissively licensed (the license is checked from the module's
// own LICENSE file when it is built) and written by no one here.
var sources = []source{
	{"github.com/spf13/pflag", "v1.0.7"},
	{"github.com/google/uuid", "v1.6.0"},
	{"github.com/BurntSushi/toml", "v1.5.0"},
	{"github.com/fsnotify/fsnotify", "v1.9.0"},
	{"github.com/pkg/errors", "v0.9.1"},
	{"github.com/google/go-cmp", "v0.7.0"},
	{"github.com/sourcegraph/go-diff", "v0.7.0"},
	{"golang.org/x/sync", "v0.16.0"},
	{"github.com/cespare/xxhash/v2", "v2.3.0"},
	{"github.com/gorilla/mux", "v1.8.1"},
	{"github.com/stretchr/testify", "v1.10.0"},
}

// buildLimits bound the set: files of real size, hunks a next edit may
// write (nextEdit.maxLines), a few cases of each module.
type buildLimits struct {
	minLines, maxLines int // of a file
	hunkLines          int // changed lines of one hunk, at most
	pairs              int // release pairs per module, newest first
	perModule, quiet   int // cases per module, quiet cases per module
	gap                int // changes closer than this many unchanged lines are one hunk
}

var defaultLimits = buildLimits{minLines: 80, maxLines: 1000, hunkLines: 20, pairs: 6, perModule: 8, quiet: 2, gap: 3}

// fetcher reads the module proxy (the first entry of GOPROXY).
type fetcher struct {
	proxy  string
	client *http.Client
}

func newFetcher() (*fetcher, error) {
	p := os.Getenv("GOPROXY")
	if p == "" {
		p = "https://proxy.golang.org"
	}
	p = strings.Split(strings.Split(p, ",")[0], "|")[0]
	if p == "off" || p == "direct" || !strings.HasPrefix(p, "http") {
		return nil, fmt.Errorf("GOPROXY's first entry %q is no proxy URL: -build reads the module proxy", p)
	}
	return &fetcher{proxy: strings.TrimSuffix(p, "/"), client: &http.Client{Timeout: 2 * time.Minute}}, nil
}

// escape is the proxy's case encoding of a module path: "!x" for "X".
func escape(mod string) string {
	var b strings.Builder
	for _, r := range mod {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (f *fetcher) get(p string) ([]byte, error) {
	resp, err := f.client.Get(f.proxy + "/" + p)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/%s: %s", f.proxy, p, resp.Status)
	}
	return b, nil
}

// releases returns mod's releases up to last (no pre-releases), oldest
// first.
func (f *fetcher) releases(mod, last string) ([]string, error) {
	b, err := f.get(escape(mod) + "/@v/list")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range strings.Fields(string(b)) {
		if _, ok := semver(v); ok && compareVersions(v, last) <= 0 {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, compareVersions)
	return out, nil
}

// semver parses a release vX.Y.Z (no pre-release or build suffix).
func semver(v string) ([3]int, bool) {
	var n [3]int
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) != 3 || !strings.HasPrefix(v, "v") {
		return n, false
	}
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 {
			return n, false
		}
		n[i] = x
	}
	return n, true
}

func compareVersions(a, b string) int {
	x, _ := semver(a)
	y, _ := semver(b)
	return slices.Compare(x[:], y[:])
}

// moduleFiles are a version's Go files (not tests, vendor or testdata)
// and its license text.
type moduleFiles struct {
	files   map[string]string
	license string
}

func (f *fetcher) version(mod, v string) (moduleFiles, error) {
	b, err := f.get(escape(mod) + "/@v/" + v + ".zip")
	if err != nil {
		return moduleFiles{}, err
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return moduleFiles{}, fmt.Errorf("%s@%s: %w", mod, v, err)
	}
	prefix := mod + "@" + v + "/"
	out := moduleFiles{files: map[string]string{}}
	for _, zf := range zr.File {
		name, ok := strings.CutPrefix(zf.Name, prefix)
		if !ok {
			continue
		}
		isLicense := name == "LICENSE" || name == "LICENSE.txt" || name == "LICENSE.md" || name == "COPYING"
		skip := !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") ||
			strings.Contains("/"+name, "/vendor/") || strings.Contains("/"+name, "/testdata/")
		if !isLicense && skip {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			return moduleFiles{}, err
		}
		text, err := io.ReadAll(io.LimitReader(rc, 4<<20))
		rc.Close()
		if err != nil {
			return moduleFiles{}, err
		}
		if isLicense {
			out.license = string(text)
		} else {
			out.files[name] = string(text)
		}
	}
	return out, nil
}

// spdx names a license text; "" for one the set does not quote.
func spdx(text string) string {
	switch {
	case strings.Contains(text, "Apache License") && strings.Contains(text, "Version 2.0"):
		return "Apache-2.0"
	case strings.Contains(text, "Permission is hereby granted, free of charge"):
		return "MIT"
	case strings.Contains(text, "Redistribution and use in source and binary forms"):
		if strings.Contains(text, "Neither the name") || strings.Contains(text, "may be used to endorse") {
			return "BSD-3-Clause"
		}
		return "BSD-2-Clause"
	}
	return ""
}

// hunksOf returns the change from old to cur as hunks of old: line edits
// closer than gap unchanged lines are one hunk.
func hunksOf(old, cur string, gap int) []Hunk {
	var out []Hunk
	oldLines := strings.SplitAfter(old, "\n")
	for _, e := range patch.LineEdits(old, cur) {
		line := strings.Count(old[:e.Start], "\n")
		h := Hunk{Line: line, Del: strings.Count(old[e.Start:e.End], "\n"), Add: splitAdd(e.NewText)}
		if n := len(out); n > 0 {
			p := &out[n-1]
			if between := line - (p.Line + p.Del); between < gap {
				for _, l := range oldLines[p.Line+p.Del : line] {
					p.Add = append(p.Add, strings.TrimSuffix(l, "\n"))
				}
				p.Add = append(p.Add, h.Add...)
				p.Del += between + h.Del
				continue
			}
		}
		out = append(out, h)
	}
	return out
}

func splitAdd(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// changed is the number of lines a hunk changes (the larger of its old
// and new sides).
func (h Hunk) changed() int { return max(h.Del, len(h.Add)) }

// changedWords are the identifiers a hunk writes or removes: in its new
// lines and not its old ones, or the other way round.
func changedWords(old string, h Hunk) map[string]bool {
	lines := strings.SplitAfter(old, "\n")
	was := words(strings.Join(lines[h.Line:h.Line+h.Del], ""))
	now := words(strings.Join(h.Add, "\n"))
	out := map[string]bool{}
	for w := range was {
		if !now[w] {
			out[w] = true
		}
	}
	for w := range now {
		if !was[w] {
			out[w] = true
		}
	}
	return out
}

// words are the identifiers of s of two letters or more, keywords aside.
func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
		if len(w) > 1 && !unicode.IsDigit(rune(w[0])) && !token.IsKeyword(w) {
			out[w] = true
		}
	}
	return out
}

// implies reports whether the next hunk follows from the user's: one
// identifier the first writes or removes, the second writes or removes
// too (a rename's other uses, a new field's initialisation).
func implies(old string, user, next Hunk) bool {
	a, b := changedWords(old, user), changedWords(old, next)
	for w := range a {
		if b[w] {
			return true
		}
	}
	return false
}

// parses reports whether text is Go that parses.
func parses(name, text string) bool {
	_, err := parser.ParseFile(token.NewFileSet(), name, text, parser.SkipObjectResolution)
	return err == nil
}

// casesOfFile returns the cases one file's change gives: a quiet case for
// a change of one hunk, else a case for each hunk and the next one that
// it implies.
func casesOfFile(name, old, cur string, lim buildLimits) (cases []Case, quiet []Case) {
	n := strings.Count(old, "\n")
	if !strings.HasSuffix(old, "\n") || n < lim.minLines || n > lim.maxLines || !parses(name, old) {
		return nil, nil
	}
	hs := hunksOf(old, cur, lim.gap)
	ok := func(c Case) bool {
		s := CaseSet{Files: []File{{Text: old}}}
		t, err := s.textsOf(c)
		return err == nil && parses(name, t.doc) && (c.Next == nil || parses(name, t.want))
	}
	if len(hs) == 1 {
		if c := (Case{User: hs[0]}); hs[0].changed() <= lim.hunkLines && ok(c) {
			quiet = append(quiet, c)
		}
		return nil, quiet
	}
	// Each pair of neighbouring hunks that share a changed identifier, in
	// both orders: the user may make either first (a new parameter, then
	// the call below it; a call changed, then the signature above it).
	for i := 0; i+1 < len(hs); i++ {
		a, b := hs[i], hs[i+1]
		if a.changed() > lim.hunkLines || b.changed() > lim.hunkLines || !implies(old, a, b) {
			continue
		}
		for _, c := range []Case{{User: a, Next: &b}, {User: b, Next: &a}} {
			if ok(c) {
				cases = append(cases, c)
			}
		}
	}
	return cases, nil
}

// build fetches every source's release pairs from the proxy and makes the
// case set; progress goes to log.
func build(lim buildLimits, log io.Writer) (*CaseSet, error) {
	f, err := newFetcher()
	if err != nil {
		return nil, err
	}
	set := &CaseSet{Built: "go run ./bench/nexteval -build (from " + f.proxy + ")"}
	for _, src := range sources {
		if err := buildModule(f, set, src, lim, log); err != nil {
			return nil, err
		}
	}
	// The cases where something follows first, then the quiet ones.
	slices.SortStableFunc(set.Cases, func(x, y Case) int { return cmp.Compare(boolInt(x.Quiet()), boolInt(y.Quiet())) })
	return set, nil
}

func buildModule(f *fetcher, set *CaseSet, src source, lim buildLimits, log io.Writer) error {
	vs, err := f.releases(src.Module, src.Last)
	if err != nil {
		return err
	}
	if len(vs) < 2 {
		return fmt.Errorf("%s: %d releases up to %s", src.Module, len(vs), src.Last)
	}
	npos, nquiet := 0, 0
	cache := map[string]moduleFiles{}
	load := func(v string) (moduleFiles, error) {
		if m, ok := cache[v]; ok {
			return m, nil
		}
		m, err := f.version(src.Module, v)
		cache[v] = m
		return m, err
	}
	for i := len(vs) - 1; i > 0 && i >= len(vs)-lim.pairs && (npos < lim.perModule || nquiet < lim.quiet); i-- {
		from, to := vs[i-1], vs[i]
		a, err := load(from)
		if err != nil {
			return err
		}
		b, err := load(to)
		if err != nil {
			return err
		}
		// The files quoted are from's: its license is theirs.
		id := spdx(a.license)
		if id == "" {
			fmt.Fprintf(log, "%s@%s: no license the set can quote (MIT, BSD, Apache-2.0), not quoted\n", src.Module, from)
			delete(cache, to)
			continue
		}
		quoted := false
		names := make([]string, 0, len(a.files))
		for name := range a.files {
			if cur, ok := b.files[name]; ok && cur != a.files[name] {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		for _, name := range names {
			pos, quiet := casesOfFile(name, a.files[name], b.files[name], lim)
			pos = pos[:min(len(pos), lim.perModule-npos, 4)] // two pairs of one file at most
			quiet = quiet[:min(len(quiet), lim.quiet-nquiet)]
			if len(pos)+len(quiet) == 0 {
				continue
			}
			if !quoted {
				set.Modules = append(set.Modules, Module{Path: src.Module, Version: from, License: id, LicenseText: a.license})
				quoted = true
			}
			file := len(set.Files)
			set.Files = append(set.Files, File{Module: src.Module, From: from, To: to, Path: name, Text: a.files[name]})
			for _, c := range slices.Concat(pos, quiet) {
				c.File = file
				set.Cases = append(set.Cases, c)
			}
			npos, nquiet = npos+len(pos), nquiet+len(quiet)
		}
		delete(cache, to)
	}
	fmt.Fprintf(log, "%s: %d cases, %d quiet\n", src.Module, npos, nquiet)
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
