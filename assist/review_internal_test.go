package assist

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzFirstFindings: the findings read of an answer past the limit are
// JSON values that end within the limit, in order; the count of the rest
// is not negative; nothing panics.
func FuzzFirstFindings(f *testing.F) {
	f.Add(`{"findings":[{"startLine":1},{"startLine":2},{"startLine":3}]}`, 30)
	f.Add("```json\n{\"other\": {\"findings\": 1}, \"findings\": [1, 2, 3, 4]}\n```", 40)
	f.Add(`{"findings":[{"a":"}"},{"b":"\"findings\""}`, 20)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if limit < 1 || limit > len(text) {
			limit = max(len(text)/2, 1)
		}
		raws, cut, ok := firstFindings(text, limit)
		if !ok {
			if len(raws) != 0 || cut != 0 {
				t.Fatalf("not ok with %d findings, %d cut", len(raws), cut)
			}
			return
		}
		if cut < 0 {
			t.Fatalf("cut %d", cut)
		}
		at := 0
		for _, r := range raws {
			if !json.Valid(r) {
				t.Fatalf("finding %q is not JSON", r)
			}
			i := strings.Index(text[at:], string(r))
			if i < 0 || at+i+len(r) > limit {
				t.Fatalf("finding %q is not within the first %d bytes of %q in order", r, limit, text)
			}
			at += i + len(r)
		}
	})
}
