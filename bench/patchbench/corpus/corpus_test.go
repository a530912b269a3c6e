package corpus

import (
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/tools"
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

// TestRepairRound runs the correction round with scripted second answers
// (see Repair) on the cases refused in round one: a corrected answer must
// never apply wrongly, and most must be repaired, in both correction modes.
func TestRepairRound(t *testing.T) {
	root, err := GOROOT()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := Generate(root, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for _, mode := range []tools.CorrectionMode{tools.CorrectWithDiff, tools.CorrectWithTool} {
		n, ok := 0, 0
		for i, c := range cases {
			if !Repairable(c) || c.Expect == Apply {
				continue
			}
			v, rounds, err := Repair(c, tmp, mode, DefaultSeed+uint64(i))
			if err != nil {
				t.Fatal(err)
			}
			n++
			switch {
			case v == Wrong:
				t.Errorf("mode %d, %s: the corrected answer applied wrongly", mode, c.Name)
			case v == Correct:
				ok++
			}
			if rounds < 2 {
				t.Errorf("mode %d, %s: no correction round (%d rounds)", mode, c.Name, rounds)
			}
		}
		t.Logf("mode %d: %d of %d repaired", mode, ok, n)
		if n < 40 || ok*100 < n*75 {
			t.Errorf("mode %d: %d of %d repaired, want at least 75 %% of at least 40", mode, ok, n)
		}
	}
}
