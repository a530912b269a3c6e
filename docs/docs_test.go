// Package docs holds no code: its test keeps the repository's documents
// standing alone. No file may refer to a document kept outside the
// repository, and every relative link in a Markdown file must lead to a
// file or directory that exists.
package docs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outside lists what names a document outside the repository. The strings
// are built from parts so that this file does not match itself.
var outside = regexp.MustCompile(strings.Join([]string{
	`DESIGN` + `\.md`,
	`PIT` + `FALLS`,
	`STYLE` + `\.md`,
	`STYLE` + ` #[0-9]`,
	`\.\./` + `shared`,
	`/work/` + `shared`,
	`shared/` + `seeds`,
}, "|"))

// repoFiles returns the repository's files, relative to its root, slash
// separated: the files git tracks when this is a git checkout, else every
// file but those under .git and the directories that hold installed or
// built outputs (node_modules, dist, out, bin).
func repoFiles(t *testing.T, root string) []string {
	t.Helper()
	if out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output(); err == nil && len(out) > 0 {
		var files []string
		for _, f := range bytes.Split(out, []byte{0}) {
			if len(f) > 0 && !strings.Contains("/"+string(f), "/node_modules/") {
				files = append(files, string(f))
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "dist", "out", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestNoOutsideDocuments(t *testing.T) {
	root := ".."
	files := repoFiles(t, root)
	if len(files) < 50 {
		t.Fatalf("found %d files under %s; is this the repository?", len(files), root)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) {
				continue // tracked but deleted in this work tree
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(data, 0) >= 0 {
			continue // binary
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d refers to %q, a document outside the repository: say what it says, or point into docs/", f, i+1, m)
			}
		}
	}
}

// mdLink matches an inline Markdown link or image, [text](target), and a
// reference definition, [label]: target.
var (
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	mdRef  = regexp.MustCompile(`^\s*\[[^\]]+\]:\s+(\S+)`)
	inCode = regexp.MustCompile("`[^`]*`")
)

func TestMarkdownLinks(t *testing.T) {
	root := ".."
	checked := 0
	for _, f := range repoFiles(t, root) {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			t.Fatal(err)
		}
		fenced := false
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			if fenced {
				continue
			}
			line = inCode.ReplaceAllString(line, "")
			var targets []string
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				targets = append(targets, m[1])
			}
			if m := mdRef.FindStringSubmatch(line); m != nil {
				targets = append(targets, m[1])
			}
			for _, target := range targets {
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "#") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				p := filepath.Join(root, filepath.FromSlash(filepath.Dir(f)), filepath.FromSlash(target))
				if strings.HasPrefix(target, "/") {
					p = filepath.Join(root, filepath.FromSlash(target))
				}
				checked++
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s:%d links to %s, which does not exist", f, i+1, target)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d links; the link pattern is probably broken", checked)
	}
}

// sectionRef matches a citation of a section of a document in docs/, as
// comments write it: docs/NAME.md, "Heading" (and "Heading"…), once
// comment markers between lines are removed.
var (
	sectionRef   = regexp.MustCompile(`docs/([A-Za-z0-9_-]+\.md),? "([^"]+)"((?:,? and "[^"]+")*)`)
	moreSections = regexp.MustCompile(`"([^"]+)"`)
	commentBreak = regexp.MustCompile(`\s*\n\s*(//|#|--)\s*`)
	heading      = regexp.MustCompile(`(?m)^#+\s+(.+?)\s*$`)
)

// TestSectionReferences: a comment that names a section of a document in
// docs/ names one that exists, so renaming a heading cannot leave the code
// pointing nowhere.
func TestSectionReferences(t *testing.T) {
	root := ".."
	headings := map[string]map[string]bool{}
	checked := 0
	for _, f := range repoFiles(t, root) {
		if strings.HasPrefix(f, "docs/") && strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			t.Fatal(err)
		}
		text := commentBreak.ReplaceAllString(string(data), " ")
		for _, m := range sectionRef.FindAllStringSubmatch(text, -1) {
			doc := m[1]
			if headings[doc] == nil {
				b, err := os.ReadFile(filepath.Join(root, "docs", doc))
				if err != nil {
					t.Errorf("%s cites docs/%s, which does not exist", f, doc)
					headings[doc] = map[string]bool{}
					continue
				}
				headings[doc] = map[string]bool{}
				for _, h := range heading.FindAllStringSubmatch(string(b), -1) {
					headings[doc][strings.ReplaceAll(h[1], "`", "")] = true
				}
			}
			names := []string{m[2]}
			for _, more := range moreSections.FindAllStringSubmatch(m[3], -1) {
				names = append(names, more[1])
			}
			for _, name := range names {
				checked++
				if !headings[doc][name] {
					t.Errorf("%s cites docs/%s, %q: no such heading", f, doc, name)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d section references; the pattern is probably broken", checked)
	}
}
