package workspace

import "testing"

func TestMarksMoveAndDrop(t *testing.T) {
	d := NewDocuments()
	uri := URI("file:///m.go")
	text := "a\nfirst\nb\nsecond\nc\n"
	if err := d.Open(uri, "go", 1, text); err != nil {
		t.Fatal(err)
	}
	m := NewMarks()
	first := m.Add(2, 7)    // "first"
	second := m.Add(10, 16) // "second"
	// Typing above both: a new line at the top.
	edits, err := d.ChangeEdits(uri, 2, []Change{{Range: &Range{Start: Position{0, 0}, End: Position{0, 0}}, Text: "new\n"}}, UTF16)
	if err != nil {
		t.Fatal(err)
	}
	if dropped := m.Apply(edits); len(dropped) != 0 {
		t.Fatalf("dropped %v", dropped)
	}
	snap, _ := d.Snapshot(uri)
	if s, e, _ := m.Range(first); snap.Slice(s, e) != "first" {
		t.Fatalf("first at %q", snap.Slice(s, e))
	}
	// Editing the first mark's line drops it only; the second moves.
	edits, _ = d.ChangeEdits(uri, 3, []Change{{Range: &Range{Start: Position{2, 5}, End: Position{2, 5}}, Text: "!!"}}, UTF16)
	if dropped := m.Apply(edits); len(dropped) != 1 || dropped[0] != first {
		t.Fatalf("dropped %v", dropped)
	}
	snap, _ = d.Snapshot(uri)
	if s, e, ok := m.Range(second); !ok || snap.Slice(s, e) != "second" {
		t.Fatalf("second at %q", snap.Slice(s, e))
	}
	// A whole-text change (no range) is the span that differs.
	edits, _ = d.ChangeEdits(uri, 4, []Change{{Text: "x\n" + snap.Text()}}, UTF16)
	if len(edits) != 1 || edits[0].Start != 0 || edits[0].End != 0 || edits[0].Text != "x\n" {
		t.Fatalf("edits %+v", edits)
	}
	m.Apply(edits)
	snap, _ = d.Snapshot(uri)
	if s, e, ok := m.Range(second); !ok || snap.Slice(s, e) != "second" {
		t.Fatalf("second at %q after a full change", snap.Slice(s, e))
	}
	// Typing at a mark's first character edits it: dropped.
	s, _, _ := m.Range(second)
	if dropped := m.Apply([]Edit{{Start: s, End: s, Text: "x"}}); len(dropped) != 1 || dropped[0] != second {
		t.Fatalf("an insertion at the mark's start dropped %v", dropped)
	}
}

func applyEdits(text string, edits []Edit) string {
	for _, e := range edits {
		text = text[:e.Start] + e.Text + text[e.End:]
	}
	return text
}

// TestDiffEdits: the changes in two places are two edits, and a mark
// between them is kept, moved.
func TestDiffEdits(t *testing.T) {
	old := "a\nb\nmark\nc\nd"
	new := "top\na\nb\nmark\nc\nd!"
	edits := DiffEdits(old, new)
	if len(edits) != 2 || applyEdits(old, edits) != new {
		t.Fatalf("edits %+v", edits)
	}
	m := NewMarks()
	id := m.Add(4, 8)
	if dropped := m.Apply(edits); len(dropped) != 0 {
		t.Fatalf("dropped %v", dropped)
	}
	if s, e, _ := m.Range(id); new[s:e] != "mark" {
		t.Fatalf("mark at %q", new[s:e])
	}
}

func FuzzDiffEdits(f *testing.F) {
	f.Add("a\nb\nc\n", "x\na\nb\nc\ny")
	f.Add("", "a")
	f.Add("a\r\nb", "a\nb\r\n")
	f.Fuzz(func(t *testing.T, old, new string) {
		edits := DiffEdits(old, new)
		if got := applyEdits(old, edits); got != new {
			t.Fatalf("DiffEdits(%q, %q) = %+v gives %q", old, new, edits, got)
		}
	})
}
