package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func mustSnapshot(t testing.TB, d *Documents, uri URI) *Snapshot {
	t.Helper()
	s, ok := d.Snapshot(uri)
	if !ok {
		t.Fatalf("Snapshot(%s): not open", uri)
	}
	return s
}

func rng2(a, b uint64) *rand.Rand { return rand.New(rand.NewPCG(a, b)) }

func TestDocumentsLifecycle(t *testing.T) {
	d := NewDocuments()
	uri := FileURI("/w/a.go")
	if err := d.Open(uri, "go", 1, "package a\n"); err != nil {
		t.Fatal(err)
	}
	s := mustSnapshot(t, d, uri)
	if s.URI != uri || s.LanguageID != "go" || s.Version != 1 || s.Text() != "package a\n" || s.Saved {
		t.Fatalf("after open: %+v %q", s, s.Text())
	}
	r := Range{Position{0, 8}, Position{0, 9}}
	if err := d.Change(uri, 2, []Change{{Range: &r, Text: "b"}}, UTF16); err != nil {
		t.Fatal(err)
	}
	s2 := mustSnapshot(t, d, uri)
	if s2.Text() != "package b\n" || s2.Version != 2 || s2.Seq <= s.Seq {
		t.Fatalf("after change: version %d seq %d (was %d) text %q", s2.Version, s2.Seq, s.Seq, s2.Text())
	}
	if err := d.Save(uri, nil); err != nil {
		t.Fatal(err)
	}
	s3 := mustSnapshot(t, d, uri)
	if !s3.Saved || s3.Version != 2 || s3.Seq != s2.Seq || s3.Text() != "package b\n" {
		t.Fatalf("after save: saved %v version %d seq %d text %q", s3.Saved, s3.Version, s3.Seq, s3.Text())
	}
	if err := d.Change(uri, 3, []Change{{Text: "x"}}, UTF16); err != nil {
		t.Fatal(err)
	}
	if s4 := mustSnapshot(t, d, uri); s4.Saved || s4.Text() != "x" {
		t.Fatalf("after full change: saved %v text %q", s4.Saved, s4.Text())
	}
	if err := d.Close(uri); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Snapshot(uri); ok {
		t.Fatal("document still open after Close")
	}
	// The old snapshots are still whole.
	if s.Text() != "package a\n" || s2.Text() != "package b\n" {
		t.Fatal("an old snapshot changed")
	}
	for name, err := range map[string]error{
		"change": d.Change(uri, 4, []Change{{Text: "y"}}, UTF16),
		"save":   d.Save(uri, nil),
		"close":  d.Close(uri),
	} {
		if !errors.Is(err, ErrNotOpen) || !strings.Contains(err.Error(), string(uri)) {
			t.Errorf("%s of a closed document: %v, want ErrNotOpen naming the URI", name, err)
		}
	}
	if err := d.Open("", "go", 1, ""); err == nil {
		t.Error("Open with an empty URI succeeded")
	}
}

func TestChangeBatchIsAtomic(t *testing.T) {
	d := NewDocuments()
	d.sh = tinyShape
	uri := FileURI("/w/b.txt")
	text := strings.Repeat("line 😀 é\r\n", 40)
	if err := d.Open(uri, "plaintext", 1, text); err != nil {
		t.Fatal(err)
	}
	before := mustSnapshot(t, d, uri)
	ok1 := Range{Position{0, 0}, Position{0, 4}}
	ok2 := Range{Position{3, 0}, Position{5, 2}}
	bad := Range{Position{7, 3}, Position{7, 1}}
	err := d.Change(uri, 2, []Change{{Range: &ok1, Text: "LINE"}, {Text: "whole\n" + text}, {Range: &ok2}, {Range: &bad, Text: "x"}}, UTF16)
	if !errors.Is(err, ErrBadRange) {
		t.Fatalf("Change with a reversed range: %v, want ErrBadRange", err)
	}
	if !strings.Contains(err.Error(), "content change 4 of 4") {
		t.Errorf("error %q does not say which change", err)
	}
	after := mustSnapshot(t, d, uri)
	if after != before || after.Text() != text || after.Version != 1 {
		t.Fatalf("a failed batch changed the document: version %d, text %q", after.Version, short(after.Text()))
	}
	// The same batch without the bad change applies whole.
	if err := d.Change(uri, 2, []Change{{Range: &ok1, Text: "LINE"}, {Range: &ok2}}, UTF16); err != nil {
		t.Fatal(err)
	}
	want := "LINE" + text[4:]
	s, e := naivePositionOffset(want, ok2.Start, UTF16), naivePositionOffset(want, ok2.End, UTF16)
	want = want[:s] + want[e:]
	if got := mustSnapshot(t, d, uri).Text(); got != want {
		t.Fatalf("text = %q, want %q", short(got), short(want))
	}
}

func TestChangeFullText(t *testing.T) {
	d := NewDocuments()
	uri := URI("untitled:Untitled-1")
	if err := d.Open(uri, "markdown", 0, "old"); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("0123456789abcdef\n", 10000)
	r := Range{Position{2, 0}, Position{3, 0}}
	// A full replacement followed by an incremental change of the new text.
	if err := d.Change(uri, 1, []Change{{Text: big}, {Range: &r, Text: "gone\n"}}, UTF8); err != nil {
		t.Fatal(err)
	}
	want := big[:34] + "gone\n" + big[51:]
	s := mustSnapshot(t, d, uri)
	if s.Text() != want || s.LineCount() != 10001 || s.Len() != len(want) {
		t.Fatalf("len %d lines %d, want %d %d", s.Len(), s.LineCount(), len(want), 10001)
	}
	checkRope(t, s.text, want)
	if err := d.Change(uri, 2, []Change{{Text: ""}}, UTF8); err != nil {
		t.Fatal(err)
	}
	if s := mustSnapshot(t, d, uri); s.Text() != "" || s.LineCount() != 1 || s.Len() != 0 {
		t.Fatalf("after emptying: %q, %d lines", s.Text(), s.LineCount())
	}
}

func TestVersionAndReopenWarnings(t *testing.T) {
	var buf bytes.Buffer
	d := NewDocuments()
	d.SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	uri := FileURI("/w/c.go")
	if err := d.Open(uri, "go", 5, "abc"); err != nil {
		t.Fatal(err)
	}
	r := Range{Position{0, 3}, Position{0, 3}}
	if err := d.Change(uri, 5, []Change{{Range: &r, Text: "d"}}, UTF16); err != nil {
		t.Fatalf("a change with a repeated version was refused: %v", err)
	}
	if s := mustSnapshot(t, d, uri); s.Text() != "abcd" || s.Version != 5 {
		t.Fatalf("text %q version %d, want abcd 5", s.Text(), s.Version)
	}
	if !strings.Contains(buf.String(), "version did not increase") {
		t.Errorf("no warning logged for a repeated version: %q", buf.String())
	}
	buf.Reset()
	if err := d.Open(uri, "go", 1, "new"); err != nil {
		t.Fatal(err)
	}
	if s := mustSnapshot(t, d, uri); s.Text() != "new" || s.Version != 1 {
		t.Fatalf("reopen: text %q version %d", s.Text(), s.Version)
	}
	if !strings.Contains(buf.String(), "opened again") {
		t.Errorf("no warning logged for a reopened document: %q", buf.String())
	}
}

func TestSaveWithText(t *testing.T) {
	var buf bytes.Buffer
	d := NewDocuments()
	d.SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	uri := FileURI("/w/d.go")
	text := strings.Repeat("x😀\n", 2000)
	if err := d.Open(uri, "go", 1, text); err != nil {
		t.Fatal(err)
	}
	before := mustSnapshot(t, d, uri)
	same := strings.Clone(text)
	if err := d.Save(uri, &same); err != nil {
		t.Fatal(err)
	}
	s := mustSnapshot(t, d, uri)
	if !s.Saved || s.Seq != before.Seq || s.Text() != text || buf.Len() != 0 {
		t.Fatalf("save with the same text: saved %v seq %d/%d log %q", s.Saved, s.Seq, before.Seq, buf.String())
	}
	other := text[:len(text)-2] + "y\n"
	if err := d.Save(uri, &other); err != nil {
		t.Fatal(err)
	}
	s = mustSnapshot(t, d, uri)
	if !s.Saved || s.Seq <= before.Seq || s.Text() != other || s.Version != 1 {
		t.Fatalf("save with other text: saved %v seq %d version %d", s.Saved, s.Seq, s.Version)
	}
	if !strings.Contains(buf.String(), "saved text differs") {
		t.Errorf("no warning for a differing saved text: %q", buf.String())
	}
}

func TestAllSortedWithRecency(t *testing.T) {
	d := NewDocuments()
	uris := []URI{FileURI("/w/c"), FileURI("/w/a"), FileURI("/w/b")}
	for i, u := range uris {
		if err := d.Open(u, "text", 1, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Change(uris[1], 2, []Change{{Text: "edited"}}, UTF16); err != nil {
		t.Fatal(err)
	}
	all := d.All()
	if len(all) != 3 || all[0].URI != FileURI("/w/a") || all[1].URI != FileURI("/w/b") || all[2].URI != FileURI("/w/c") {
		t.Fatalf("All not sorted by URI: %v %v %v", all[0].URI, all[1].URI, all[2].URI)
	}
	// /w/a was edited last, then /w/b was opened before it.
	if !(all[0].Seq > all[1].Seq && all[1].Seq > all[2].Seq) {
		t.Fatalf("Seq does not follow edit order: a %d b %d c %d", all[0].Seq, all[1].Seq, all[2].Seq)
	}
	if all[0].Edited.Before(all[2].Edited) {
		t.Fatal("Edited time of the last edit is before an earlier open")
	}
}

// randPosition returns a position near text: lines up to two past the
// last, columns up to a few units past the line end.
func randPosition(rng *rand.Rand, text string, enc Encoding) Position {
	lines := naiveLines(text)
	line := rng.IntN(len(lines) + 2)
	if rng.IntN(10) == 0 {
		line = len(lines) - 1
	}
	width := 0
	if line < len(lines) {
		ln := lines[line]
		for i := ln.start; i < ln.end; {
			_, w := utf8.DecodeRuneInString(text[i:ln.end])
			width += naiveUnits(w, enc)
			i += w
		}
	}
	return Position{uint32(line), uint32(rng.IntN(width + 4))}
}

// TestChangeRandomIncremental is the property test of the store: random
// batches of incremental changes (random ranges in random encodings,
// inserted text with multi-byte runes, invalid bytes and all three line
// ends; now and then a full replacement) applied to the store and to the
// naive model must give the same text, and the mapper must agree with the
// naive one on the result.
func TestChangeRandomIncremental(t *testing.T) {
	for _, sh := range []*shape{tinyShape, defaultShape} {
		t.Run(fmt.Sprintf("leaf%d", sh.maxLeaf), func(t *testing.T) {
			rng := rng2(uint64(sh.maxLeaf), 11)
			d := NewDocuments()
			d.sh = sh
			uri := FileURI("/w/prop.txt")
			want := randText(rng, 200)
			if sh == defaultShape {
				want = randText(rng, 6000)
			}
			if err := d.Open(uri, "text", 0, want); err != nil {
				t.Fatal(err)
			}
			for version := int32(1); version <= 1500; version++ {
				enc := encodings[rng.IntN(3)]
				var changes []Change
				next := want
				for range 1 + rng.IntN(3) {
					if rng.IntN(60) == 0 {
						next = randText(rng, rng.IntN(300))
						changes = append(changes, Change{Text: next})
						continue
					}
					a, b := randPosition(rng, next, enc), randPosition(rng, next, enc)
					if posLess(b, a) {
						a, b = b, a
					}
					if rng.IntN(3) == 0 {
						b = a // pure insertion
					}
					ins := ""
					if rng.IntN(4) > 0 {
						ins = randText(rng, rng.IntN(5))
					}
					s, e := naivePositionOffset(next, a, enc), naivePositionOffset(next, b, enc)
					next = next[:s] + ins + next[e:]
					changes = append(changes, Change{Range: &Range{a, b}, Text: ins})
				}
				if err := d.Change(uri, version, changes, enc); err != nil {
					t.Fatal(err)
				}
				want = next
				s := mustSnapshot(t, d, uri)
				if s.Len() != len(want) || s.LineCount() != len(naiveLines(want)) {
					t.Fatalf("version %d: len %d lines %d, want %d %d", version, s.Len(), s.LineCount(), len(want), len(naiveLines(want)))
				}
				if version%50 == 0 || sh == tinyShape && version%5 == 0 {
					checkRope(t, s.text, want)
					if len(want) < 400 {
						checkMapper(t, s, want, encodings[rng.IntN(3)])
					}
				}
			}
			if got := mustSnapshot(t, d, uri).Text(); got != want {
				t.Fatalf("final text %q, want %q", short(got), short(want))
			}
		})
	}
}

// TestConcurrentEditsAndReads runs writers that change documents while
// readers take snapshots and read them (run with -race). Every snapshot a
// reader sees must be internally consistent: its text is what its version
// says it should be.
func TestConcurrentEditsAndReads(t *testing.T) {
	d := NewDocuments()
	d.sh = tinyShape
	const docsN, edits = 3, 300
	uris := make([]URI, docsN)
	for i := range uris {
		uris[i] = FileURI(fmt.Sprintf("/w/conc%d.txt", i))
		if err := d.Open(uris[i], "text", 0, ""); err != nil {
			t.Fatal(err)
		}
	}
	// Version v of a document is "😀\n" repeated v times: each change
	// appends one line at the end, given as a position past the end.
	wantText := func(v int32) string { return strings.Repeat("😀\n", int(v)) }
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 16)
	for _, u := range uris {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := int32(1); v <= edits; v++ {
				end := Range{Position{1 << 20, 0}, Position{1 << 20, 0}}
				if err := d.Change(u, v, []Change{{Range: &end, Text: "😀\n"}}, UTF16); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var readers sync.WaitGroup
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, s := range d.All() {
					if s.Text() != wantText(s.Version) || s.LineCount() != int(s.Version)+1 {
						errs <- fmt.Errorf("%s version %d: inconsistent snapshot (%d bytes, %d lines)", s.URI, s.Version, s.Len(), s.LineCount())
						return
					}
					if s.Version > 0 {
						p := s.OffsetPosition(s.Len()-1, UTF16)
						if p != (Position{uint32(s.Version) - 1, 2}) {
							errs <- fmt.Errorf("version %d: OffsetPosition = %+v", s.Version, p)
							return
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, u := range uris {
		if s := mustSnapshot(t, d, u); s.Version != edits || s.Text() != wantText(edits) {
			t.Errorf("%s: final version %d", u, s.Version)
		}
	}
}
