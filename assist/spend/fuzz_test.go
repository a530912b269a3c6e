package spend

import (
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
)

// FuzzRecordFile: whatever the record file holds (torn, hand-edited,
// another program's), reading it never panics, every record read is
// clean (no control characters for a terminal), no spend is negative, and
// an append after it is read back.
func FuzzRecordFile(f *testing.F) {
	good := `{"time":"2026-12-01T17:10:00Z","surface":"explain","model":"m","files":[{"path":"a.go","bytes":3}],"promptTokens":9,"cachedTokens":1,"writtenTokens":8,"outputTokens":2,"costUSD":0.5,"outcome":"ok"}`
	for _, s := range []string{
		good + "\n", good + "\n" + good[:50], "\x00\x00\n" + good + "\n",
		`{"folded":{"hour":"2026-12-01T17:00:00Z","usd":2,"requests":3}}` + "\n",
		`{"folded":{"hour":"2026-12-01T17:00:00Z","usd":-5,"requests":3}}` + "\n",
		`{"compacted":"x"}` + "\n" + good + "\n", `{"time":"2026-12-01T17:10:00Z","costUSD":-5,"surface":"\u001b[2J"}` + "\n",
		`[1,2]` + "\n" + `{"time":null}` + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, FileName), data, 0o600); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 1, 17, 30, 0, 0, time.UTC)
		l, err := Open(dir, Options{Location: time.UTC, Now: func() time.Time { return now }, Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		recs, err := l.Records(0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			for _, s := range []string{r.Surface, r.Model, r.Outcome} {
				if strings.ContainsFunc(s, unicode.IsControl) {
					t.Fatalf("record string %q holds a control character", s)
				}
			}
			if r.CostUSD < 0 {
				t.Fatalf("negative cost %v", r.CostUSD)
			}
		}
		s := l.Spend(now)
		if l.Add(Record{Time: now, Surface: "x", CostUSD: 0.25}) != nil {
			t.Fatal("append failed")
		}
		after, _ := l.Records(0)
		if len(after) != len(recs)+1 || !slices.ContainsFunc(after, func(r Record) bool { return r.Surface == "x" }) {
			t.Fatalf("after an append %d records, before %d", len(after), len(recs))
		}
		if s.Hour < 0 || s.Day < 0 || math.IsNaN(s.Day) {
			t.Fatalf("spend %+v", s)
		}
		if s2 := l.Spend(now); s2.Hour < s.Hour+0.25-1e-9 {
			t.Fatalf("the append did not count: %v then %v", s.Hour, s2.Hour)
		}
	})
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
