package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

// CaseSet is the committed evaluation set (testdata/cases.json): the files
// each case starts from, with the module version they come from and that
// module's license, and the cases.
type CaseSet struct {
	// Built says how the set was made (the command, the proxy).
	Built   string   `json:"built"`
	Modules []Module `json:"modules"`
	Files   []File   `json:"files"`
	Cases   []Case   `json:"cases"`
}

// Module is one module version the set quotes files of, with its
// license: their text is redistributed under it, so the license text (the
// version's own, with its copyright lines) goes with it.
type Module struct {
	Path        string `json:"module"`
	Version     string `json:"version"`
	License     string `json:"license"` // SPDX identifier
	LicenseText string `json:"license_text"`
}

// File is one source file as a module version has it: the text the user
// starts from. Next is the version whose change the cases replay.
type File struct {
	Module string `json:"module"`
	From   string `json:"from"`
	To     string `json:"to"`
	Path   string `json:"path"`
	Text   string `json:"text"`
}

// Hunk is one changed run of lines of a file's text: Del lines from line
// Line (0-based) replaced by Add (lines without their "\n").
type Hunk struct {
	Line int      `json:"line"`
	Del  int      `json:"del"`
	Add  []string `json:"add"`
}

// Case is one evaluation case on Files[File]: the user makes the edit
// User; Next is the hunk of the same change that follows it, nil for a
// quiet case (the change had no other hunk in the file: nothing follows).
// Both are in the coordinates of the file's text.
type Case struct {
	File int   `json:"file"`
	User Hunk  `json:"user"`
	Next *Hunk `json:"next,omitempty"`
}

// modules counts the modules the set quotes (Modules has one entry a
// version).
func (s *CaseSet) modules() int {
	seen := map[string]bool{}
	for _, m := range s.Modules {
		seen[m.Path] = true
	}
	return len(seen)
}

// Quiet reports whether nothing follows the case's edit.
func (c Case) Quiet() bool { return c.Next == nil }

// applyHunks applies sorted, non-overlapping hunks to text (which ends
// with "\n").
func applyHunks(text string, hunks ...Hunk) (string, error) {
	lines := linediff.SplitLines(text)
	var b strings.Builder
	at := 0
	for _, h := range hunks {
		if h.Line < at || h.Del < 0 || h.Line+h.Del > len(lines) {
			return "", fmt.Errorf("hunk at line %d (-%d) is out of order or outside the %d-line text", h.Line+1, h.Del, len(lines))
		}
		b.WriteString(strings.Join(lines[at:h.Line], ""))
		for _, l := range h.Add {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		at = h.Line + h.Del
	}
	b.WriteString(strings.Join(lines[at:], ""))
	return b.String(), nil
}

// texts are a case's three texts: before the user's edit, after it (what
// the pipeline is asked about) and, when follows (the case is not quiet),
// after the next hunk too.
type texts struct {
	base, doc, want string
	follows         bool
}

// textsOf derives c's texts from the set's files.
func (s *CaseSet) textsOf(c Case) (texts, error) {
	if c.File < 0 || c.File >= len(s.Files) {
		return texts{}, fmt.Errorf("case names file %d of %d", c.File, len(s.Files))
	}
	base := s.Files[c.File].Text
	doc, err := applyHunks(base, c.User)
	if err != nil {
		return texts{}, err
	}
	t := texts{base: base, doc: doc}
	if c.Next != nil {
		t.follows = true
		hs := []Hunk{c.User, *c.Next}
		if c.Next.Line < c.User.Line {
			hs = []Hunk{*c.Next, c.User}
		}
		if t.want, err = applyHunks(base, hs...); err != nil {
			return texts{}, err
		}
	}
	return t, nil
}

// name is how reports name c: module@version path:line.
func (s *CaseSet) name(c Case) string {
	f := s.Files[c.File]
	return fmt.Sprintf("%s@%s %s:%d", f.Module, f.To, f.Path, c.User.Line+1)
}

// loadCases reads a case set and checks every case's hunks apply.
func loadCases(path string) (*CaseSet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s CaseSet
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, c := range s.Cases {
		if _, err := s.textsOf(c); err != nil {
			return nil, fmt.Errorf("%s: case %d: %w", path, i+1, err)
		}
	}
	return &s, nil
}

// save writes the set as compact JSON, one module, file or case a line.
func (s *CaseSet) save(path string) error {
	var b strings.Builder
	enc := func(v any) string {
		j, err := json.Marshal(v)
		if err != nil {
			panic(err) // plain structs of strings and ints
		}
		return string(j)
	}
	fmt.Fprintf(&b, "{\"built\": %s,\n\"modules\": [\n", enc(s.Built))
	for i, m := range s.Modules {
		fmt.Fprintf(&b, "%s%s\n", enc(m), comma(i, len(s.Modules)))
	}
	b.WriteString("],\n\"files\": [\n")
	for i, f := range s.Files {
		fmt.Fprintf(&b, "%s%s\n", enc(f), comma(i, len(s.Files)))
	}
	b.WriteString("],\n\"cases\": [\n")
	for i, c := range s.Cases {
		fmt.Fprintf(&b, "%s%s\n", enc(c), comma(i, len(s.Cases)))
	}
	b.WriteString("]}\n")
	// Written beside it and renamed over it: a failed write leaves the
	// set there was.
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

func comma(i, n int) string {
	if i < n-1 {
		return ","
	}
	return ""
}
