package spend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/cache"
)

// zone is the budget windows' zone in the tests: not UTC, not a whole-hour
// offset from it, so that hour and day starts are computed, not assumed.
var zone = time.FixedZone("X", 5*3600+1800)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func open(t *testing.T, dir string, c *clock, log *slog.Logger) *Log {
	t.Helper()
	l, err := Open(dir, Options{Location: zone, Now: c.now, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func rec(at time.Time, usd float64, files ...File) Record {
	return Record{Time: at, Surface: "explain", Model: "kimi-k3.1-pro", Files: files,
		PromptTokens: 1200, CachedTokens: 1000, WrittenTokens: 200, OutputTokens: 80, CostUSD: usd, Outcome: OutcomeOK}
}

func TestStateDir(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		env  func(string) string
		want string
	}{
		{env("XDG_STATE_HOME", "/s", "HOME", "/h"), "/s/kimi-lsp"},
		{env("XDG_STATE_HOME", "rel", "HOME", "/h"), "/h/.local/state/kimi-lsp"},
		{env("HOME", "/h"), "/h/.local/state/kimi-lsp"},
	} {
		got, err := StateDir(tc.env)
		if err != nil || got != filepath.FromSlash(tc.want) {
			t.Errorf("StateDir = %q, %v, want %q", got, err, tc.want)
		}
	}
	if _, err := StateDir(env("HOME", "rel")); err != ErrNoStateDir {
		t.Errorf("no absolute directory: %v", err)
	}
}

func TestAddRecordsMetadataOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "kimi-lsp")
	c := &clock{t: time.Date(2026, 12, 1, 17, 10, 0, 0, zone)}
	l := open(t, dir, c, nil)
	files := []File{{Path: "a.go", Bytes: 120}, {Path: "sub/b.go", Bytes: 3400}}
	for i := range 3 {
		r := rec(c.now().Add(time.Duration(i)*time.Minute), 0.001, files...)
		r.Surface = "explain\x1b[2J" // a control sequence from a user action's name
		if err := l.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.Records(2)
	if err != nil || len(got) != 2 {
		t.Fatalf("Records(2) = %d records, %v", len(got), err)
	}
	if !got[1].Time.Equal(c.now().Add(2*time.Minute)) || got[1].Surface != "explain [2J" {
		t.Errorf("newest record %+v", got[1])
	}
	if fmt.Sprint(got[0].Files) != "[{a.go 120} {sub/b.go 3400}]" {
		t.Errorf("files %v", got[0].Files)
	}
	fi, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("record file: %v, %v", fi, err)
	}
	if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode %v", di.Mode())
	}
	// Every line decodes to exactly the Record's fields.
	b, _ := os.ReadFile(filepath.Join(dir, FileName))
	for _, ln := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(ln, &m); err != nil {
			t.Fatalf("line %q: %v", ln, err)
		}
		for k := range m {
			switch k {
			case "time", "surface", "model", "files", "promptTokens", "cachedTokens", "writtenTokens", "outputTokens", "costUSD", "outcome":
			default:
				t.Errorf("unexpected key %q in %s", k, ln)
			}
		}
	}
}

func TestCleanBounds(t *testing.T) {
	var files []File
	for i := range 130 {
		files = append(files, File{Path: strings.Repeat("d/", 400) + fmt.Sprint(i), Bytes: -3})
	}
	r := Record{Surface: strings.Repeat("é", 100), Model: "m\n", Files: files, PromptTokens: -1, CostUSD: math.NaN()}.clean()
	if len(r.Files) != maxFiles || r.MoreFiles != 30 || len(r.Files[0].Path) > maxPath || r.Files[0].Bytes != 0 {
		t.Errorf("files: %d listed, %d more, path %d bytes, %d bytes", len(r.Files), r.MoreFiles, len(r.Files[0].Path), r.Files[0].Bytes)
	}
	if len(r.Surface) > maxSurface || !strings.HasPrefix(r.Surface, "éé") || r.Model != "m " || r.PromptTokens != 0 || r.CostUSD != 0 {
		t.Errorf("clean = %+v", r)
	}
}

// TestSpendAcrossRestart: a new server on the same directory counts the
// spend of the earlier one, in the calendar hour and day.
func TestSpendAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: time.Date(2026, 12, 1, 17, 59, 0, 0, zone)}
	l := open(t, dir, c, nil)
	l.Add(rec(time.Date(2026, 12, 1, 16, 40, 0, 0, zone), 0.5))
	l.Add(rec(time.Date(2026, 12, 1, 17, 1, 0, 0, zone), 0.25))
	l.Add(rec(time.Date(2026, 11, 30, 23, 59, 0, 0, zone), 4))
	l.Close()

	l2 := open(t, dir, c, nil)
	s := l2.Spend(c.now())
	if s.Hour != 0.25 || s.Day != 0.75 {
		t.Errorf("spend %+v, want 0.25 this hour, 0.75 today", s)
	}
	if want := time.Date(2026, 12, 1, 18, 0, 0, 0, zone); !s.HourEnds.Equal(want) {
		t.Errorf("hour ends %v, want %v", s.HourEnds, want)
	}
	if want := time.Date(2026, 12, 2, 0, 0, 0, 0, zone); !s.DayEnds.Equal(want) {
		t.Errorf("day ends %v, want %v", s.DayEnds, want)
	}
	// The new lines of the file are read as they come.
	l.Add(rec(c.now(), 0.125)) // l is closed: Add reports, nothing written
	l3 := open(t, dir, c, nil)
	l3.Add(rec(c.now(), 0.125))
	if s := l2.Spend(c.now()); s.Hour != 0.375 {
		t.Errorf("after another server's request: hour %v, want 0.375", s.Hour)
	}
}

// TestConcurrentServersLoseNothing: two servers (two Logs, two open
// files, as two processes have) append at once, through rewrites; every
// request's cost is still counted, and the file stays within its bound.
func TestConcurrentServersLoseNothing(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: time.Now().In(zone)}
	a, b := open(t, dir, c, nil), open(t, dir, c, nil)
	var files []File
	for i := range 100 {
		files = append(files, File{Path: fmt.Sprintf("%s/file%03d.go", strings.Repeat("x", 300), i), Bytes: i})
	}
	const each = 40 // about 36 KB a record: several rewrites
	var wg sync.WaitGroup
	for _, l := range []*Log{a, b} {
		wg.Go(func() {
			for range each {
				if err := l.Add(rec(c.now(), 0.001, files...)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	fi, _ := os.Stat(filepath.Join(dir, FileName))
	if fi.Size() > MaxBytes+64<<10 {
		t.Errorf("record is %d bytes, bound %d", fi.Size(), MaxBytes)
	}
	for _, l := range []*Log{a, b, open(t, dir, c, nil)} {
		if s := l.Spend(c.now()); math.Abs(s.Day-2*each*0.001) > 1e-9 {
			t.Errorf("day spend %v, want %v", s.Day, 2*each*0.001)
		}
	}
	recs, _ := a.Records(0)
	if len(recs) == 0 || len(recs) >= 2*each {
		t.Errorf("%d records kept of %d (some rewrite should have dropped some)", len(recs), 2*each)
	}
}

// TestBound: the file is rewritten past MaxBytes to the newest
// KeepRecords, and the spend of the dropped ones is kept.
func TestBound(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: time.Now().In(zone)}
	l := open(t, dir, c, nil)
	files := []File{{Path: strings.Repeat("p", 500), Bytes: 1}}
	n := 0
	for ; n < 5000; n++ {
		if err := l.Add(rec(c.now(), 0.0001, files...)); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(filepath.Join(dir, FileName)); fi.Size() > MaxBytes {
			t.Fatalf("after %d requests the record is %d bytes", n+1, fi.Size())
		}
	}
	recs, _ := l.Records(0)
	if len(recs) < KeepRecords || len(recs) > MaxBytes/600 {
		t.Errorf("%d records kept", len(recs))
	}
	if s := l.Spend(c.now()); math.Abs(s.Day-float64(n)*0.0001) > 1e-9 {
		t.Errorf("day spend %v, want %v", s.Day, float64(n)*0.0001)
	}
	if got, _ := l.Records(3); len(got) != 3 || !got[2].Time.Equal(c.now()) {
		t.Errorf("Records(3) = %v", got)
	}
}

// TestCorruptRecord: unreadable lines are skipped with one log line, a
// torn last line is ended before the next append, the rest is kept.
func TestCorruptRecord(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, zone)}
	good, _ := json.Marshal(rec(c.now(), 0.01))
	body := string(good) + "\n\x00\x00garbage\n{\"time\":\"yesterday\"}\n[1,2]\n" + string(good) + "\n" + string(good[:40])
	os.WriteFile(filepath.Join(dir, FileName), []byte(body), 0o600)
	var logs bytes.Buffer
	l := open(t, dir, c, slog.New(slog.NewTextHandler(&logs, nil)))
	if s := l.Spend(c.now()); s.Hour != 0.02 {
		t.Errorf("spend %v, want 0.02", s.Hour)
	}
	recs, err := l.Records(0)
	if err != nil || len(recs) != 2 {
		t.Fatalf("Records = %d, %v", len(recs), err)
	}
	if err := l.Add(rec(c.now(), 0.01)); err != nil {
		t.Fatal(err)
	}
	if recs, _ := l.Records(0); len(recs) != 3 {
		t.Errorf("after an append to a torn file: %d records, want 3", len(recs))
	}
	if s := l.Spend(c.now()); math.Abs(s.Hour-0.03) > 1e-12 {
		t.Errorf("spend %v, want 0.03", s.Hour)
	}
	if n := strings.Count(logs.String(), "skipped unreadable lines"); n != 1 {
		t.Errorf("%d log lines about the bad lines, want 1:\n%s", n, logs.String())
	}
}

func TestMeter(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: time.Date(2026, 12, 1, 17, 30, 0, 0, zone)}
	l := open(t, dir, c, nil)
	m := NewMeter(l, Budget{Hourly: 0.01, Daily: 0.05, ConfirmAbove: DefaultConfirmAbove})

	if st := m.Check(); st.Capped || st.Warn != "" || st.Notice {
		t.Fatalf("no spend: %+v", st)
	}
	l.Add(rec(c.now(), 0.0085))
	st := m.Check()
	if st.Warn != "Kimi: $0.0085 of the hourly budget of $0.0100 spent (85 %), until 18:00." {
		t.Errorf("warn %q", st.Warn)
	}
	if st := m.Check(); st.Warn != "" {
		t.Errorf("warned twice in one window: %q", st.Warn)
	}
	l.Add(rec(c.now(), 0.002))
	st = m.Check()
	if !st.Capped || !st.Notice || st.Cap.Name != "hourly" {
		t.Fatalf("over the hourly budget: %+v", st)
	}
	if got, want := st.CapMessage("inline completion", c.now()), "Kimi: the hourly budget of $0.0100 is spent ($0.0105 this hour); inline completion is paused until 18:00."; got != want {
		t.Errorf("cap message\n got %q\nwant %q", got, want)
	}
	if got := st.AskMessage(m.Budget(), 12345, 0.0247, "", c.now()); got != "Kimi: the hourly budget of $0.0100 is spent ($0.0105 this hour, until 18:00). This request is about 12,345 tokens, estimated at $0.0247. Send it anyway?" {
		t.Errorf("ask %q", got)
	}
	if st := m.Check(); !st.Capped || st.Notice {
		t.Errorf("second check in the window: %+v (the notice is once)", st)
	}
	if st := m.Status(); !st.Capped || st.Hour.Spent != 0.0105 {
		t.Errorf("Status %+v", st)
	}

	// The next hour frees the hourly budget; the daily one counts on.
	c.set(time.Date(2026, 12, 1, 18, 0, 0, 0, zone))
	if st := m.Check(); st.Capped || st.Hour.Spent != 0 || st.Day.Spent != 0.0105 {
		t.Errorf("next hour: %+v", st)
	}
	l.Add(rec(c.now(), 0.04))
	st = m.Check()
	if !st.Capped || st.Cap.Name != "daily" || !st.Notice {
		t.Fatalf("over the daily budget: %+v", st)
	}
	if got := st.CapMessage("inline completion", c.now()); !strings.HasSuffix(got, "today); inline completion is paused until Wed 2 Dec 00:00.") {
		t.Errorf("daily cap message %q", got)
	}
	// A lower budget applies at once; no budget, no cap.
	m.SetBudget(Budget{})
	if st := m.Check(); st.Capped || st.Warn != "" {
		t.Errorf("no budget: %+v", st)
	}
}

func TestEstimateAndConfirm(t *testing.T) {
	p := cache.DefaultPrices()["kimi-k3.1-pro"]
	// 2,000 tokens written at 5m (2.00/M) and 8,000 cached (0.20/M).
	if got := Estimate(p, 10000, 8000, 500, false); math.Abs(got-0.0056) > 1e-12 {
		t.Errorf("Estimate = %v, want 0.0056", got)
	}
	// At 1h the writes cost 4.00/M; a prediction above the prompt is cut.
	if got := Estimate(p, 10000, 20000, 0, true); math.Abs(got-0.002) > 1e-12 {
		t.Errorf("Estimate(all cached) = %v, want 0.002", got)
	}
	p.Output = 10
	if got := Estimate(p, 0, 0, 1000, false); math.Abs(got-0.01) > 1e-12 {
		t.Errorf("Estimate(output) = %v", got)
	}
	b := Budget{ConfirmAbove: 0.10}
	if b.Confirm(0.10) || !b.Confirm(0.1001) || (Budget{}).Confirm(5) {
		t.Error("Confirm: asks above confirmAbove only, never when it is 0")
	}
	if got := (Status{}).AskMessage(b, 60000, 0.12, "", time.Now()); got != "Kimi: This request is about 60,000 tokens, estimated at $0.1200. That is above budget.confirmAbove ($0.1000). Send it?" {
		t.Errorf("ask %q", got)
	}
}

func TestRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	recs, err := Read(dir, 5, Options{})
	if err != nil || recs != nil {
		t.Fatalf("Read of a missing directory = %v, %v", recs, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Read created %s", dir)
	}
}

func TestMemory(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, zone)}
	l := Memory(Options{Location: zone, Now: c.now})
	l.Add(rec(c.now(), 0.25))
	if s := l.Spend(c.now()); s.Hour != 0.25 || s.Day != 0.25 {
		t.Errorf("in-memory spend %+v", s)
	}
	if recs, err := l.Records(0); recs != nil || err != nil || l.Close() != nil {
		t.Errorf("in-memory records %v, %v", recs, err)
	}
}
