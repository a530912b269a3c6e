package corpus

import (
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// TestOurApplierOnCorpus runs the applier over the whole corpus: it must
// never apply wrongly, must refuse every REFUSE case and apply at least
// 95 % of the APPLY cases correctly.
func TestOurApplierOnCorpus(t *testing.T) {
	root, err := GOROOT()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	cases, err := Generate(root, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 200 {
		t.Fatalf("corpus has %d cases, want at least 200", len(cases))
	}
	tmp := t.TempDir()
	applyCases, applied := 0, 0
	for _, c := range cases {
		v, aerr, err := RunOurs(c, tmp)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		switch {
		case v == Wrong:
			t.Errorf("%s: applied wrongly\n--- diff\n%s", c.Name, c.Diff)
		case c.Expect == Refuse && v != Correct:
			t.Errorf("%s: REFUSE case not refused", c.Name)
		case c.Expect == Apply && v == Refused:
			t.Logf("%s: refused: %s", c.Name, patch.Feedback(aerr))
		}
		if c.Expect == Apply {
			applyCases++
			if v == Correct {
				applied++
			}
		}
	}
	t.Logf("%d cases; APPLY cases correct: %d of %d", len(cases), applied, applyCases)
	if applied*100 < applyCases*95 {
		t.Errorf("only %d of %d APPLY cases applied correctly, want at least 95 %%", applied, applyCases)
	}
}

func TestGenerateDeterministic(t *testing.T) {
	root, err := GOROOT()
	if err != nil {
		t.Fatal(err)
	}
	a, err := Generate(root, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(root, 7)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i].Diff != b[i].Diff || !same(a[i].Before, b[i].Before) {
			t.Fatalf("case %d differs between two generations", i)
		}
	}
}
