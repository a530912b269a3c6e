package spend

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// TestReservationsHoldUnderConcurrency (#30.6): sixteen requests checked at
// once against budget.hourly = 0.01, each estimated at $0.004, are let
// through only as far as the budget goes: the reservation is checked and
// held in one step, so the spend recorded (the file's, read back by a
// second meter as another server would) stays within the cap. Before, each
// request saw only the settled spend ($0 while all were in flight) and
// all sixteen went out.
func TestReservationsHoldUnderConcurrency(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: time.Date(2026, 12, 1, 17, 30, 0, 0, zone)}
	m := NewMeter(open(t, dir, c, nil), Budget{Hourly: 0.01})

	const n, est, cost = 16, 0.004, 0.0037 // what each request really costs: a little less
	var (
		start = make(chan struct{})
		// All sixteen are in flight before any ends: each reservation
		// is held until every request has been decided.
		decided sync.WaitGroup
		wg      sync.WaitGroup
		mu      sync.Mutex
		sent    int
	)
	decided.Add(n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r, _ := m.Reserve(est)
			decided.Done()
			if r == nil {
				return // not sent
			}
			defer r.Release()
			decided.Wait() // in flight while the others check
			mu.Lock()
			sent++
			mu.Unlock()
			if err := r.Settle(rec(c.now(), cost)); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if sent != 2 {
		t.Errorf("%d of %d requests sent, want 2 ($0.004 each under $0.01)", sent, n)
	}
	other := NewMeter(open(t, dir, c, nil), Budget{Hourly: 0.01})
	st := other.Status()
	if st.Hour.Spent > 0.01 || math.Abs(st.Hour.Spent-float64(sent)*cost) > 1e-9 {
		t.Errorf("recorded spend $%v (%d sent), want at most the cap $0.01", st.Hour.Spent, sent)
	}
	if h := m.Held(); h != 0 {
		t.Errorf("$%v still held after every request ended", h)
	}
}

// TestReservationLifecycle (#30.6): a reservation counts in every status
// until it is settled or released, once: Settle replaces it by the real
// cost, a second Settle records nothing, Release after Settle does
// nothing, and a panic between reserving and sending cannot leak it (the
// deferred Release).
func TestReservationLifecycle(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: time.Date(2026, 12, 1, 17, 30, 0, 0, zone)}
	l := open(t, dir, c, nil)
	m := NewMeter(l, Budget{Hourly: 0.01, Daily: 0.05})

	r, _ := m.Reserve(0.006)
	if r == nil || r.USD() != 0.006 {
		t.Fatalf("Reserve(0.006) under $0.01: %v", r)
	}
	st := m.Check()
	if st.Hour.Held != 0.006 || st.Day.Held != 0.006 || st.Hour.Spent != 0 || st.Capped {
		t.Errorf("status with a reservation: %+v", st)
	}
	if st.Fits(0.005) || !st.Fits(0.004) || st.Hour.Left() != 0.004 {
		t.Errorf("Fits/Left with $0.006 held of $0.01: fits(0.005) %v fits(0.004) %v left %v", st.Fits(0.005), st.Fits(0.004), st.Hour.Left())
	}
	if r2, st := m.Reserve(0.005); r2 != nil || st.Over(0.005) == nil || st.Over(0.005).Name != "hourly" {
		t.Errorf("a second reservation passing the hourly budget was held (%v) or not said why (%+v)", r2, st.Over(0.005))
	}
	// Over: the day's window is named when it is the one passed.
	if w := (Status{Hour: Window{Name: "hourly", Limit: 1}, Day: Window{Name: "daily", Limit: 0.01, Spent: 0.009}}).Over(0.002); w == nil || w.Name != "daily" {
		t.Errorf("Over names %+v, want the daily window", w)
	}
	if got := st.AskMessage(m.Budget(), 2000, 0.005, "", c.now()); got != "Kimi: This request is about 2,000 tokens, estimated at $0.0050. That is more than is left of the hourly budget of $0.0100 ($0.0040 left: $0.0000 spent this hour, $0.0060 held by requests in flight, until 18:00). Send it anyway?" {
		t.Errorf("ask %q", got)
	}

	if err := r.Settle(rec(c.now(), 0.0055)); err != nil {
		t.Fatal(err)
	}
	r.Settle(rec(c.now(), 1)) // no effect
	r.Release()               // no effect
	if st := m.Status(); st.Hour.Held != 0 || math.Abs(st.Hour.Spent-0.0055) > 1e-12 {
		t.Errorf("after Settle: %+v, want $0.0055 spent and nothing held", st.Hour)
	}
	if recs, _ := l.Records(0); len(recs) != 1 {
		t.Errorf("%d records after Settle twice, want 1", len(recs))
	}

	func() {
		defer func() { recover() }()
		r, _ := m.Reserve(0.001)
		defer r.Release()
		panic("before the send")
	}()
	if h := m.Held(); h != 0 {
		t.Errorf("a panic leaked $%v of reservation", h)
	}
	// Hold passes the budget (the user said Send); others see it.
	h := m.Hold(0.02)
	if st := m.Status(); st.Fits(0) || st.Hour.Held != 0.02 {
		t.Errorf("after Hold: %+v", st.Hour)
	}
	h.Release()
	h.Release()
	var nilRes *Reservation
	nilRes.Release()
	if err := nilRes.Settle(Record{}); err != nil || nilRes.USD() != 0 {
		t.Error("a nil reservation did something")
	}
	if m.Held() != 0 {
		t.Errorf("held %v after every release", m.Held())
	}
}

// TestUnkept (#30.7): a requests.jsonl that is a FIFO, a symbolic link or
// a directory keeps nothing, and Unkept says so (a regular or missing
// file: nil); the spend is then counted in this process only.
func TestUnkept(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 1, 17, 30, 0, 0, zone)}
	for _, kind := range []string{"missing", "regular", "fifo", "symlink", "directory"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, FileName)
			var err error
			switch kind {
			case "regular":
				err = os.WriteFile(p, nil, 0o600)
			case "fifo":
				err = syscall.Mkfifo(p, 0o600)
			case "symlink":
				target := filepath.Join(t.TempDir(), "elsewhere.jsonl")
				if err = os.WriteFile(target, nil, 0o600); err == nil {
					err = os.Symlink(target, p)
				}
			case "directory":
				err = os.Mkdir(p, 0o700)
			}
			if err != nil {
				t.Fatal(err)
			}
			l := open(t, dir, c, nil)
			addErr := l.Add(rec(c.now(), 0.003))
			unkept := l.Unkept()
			if kind == "missing" || kind == "regular" {
				if unkept != nil || addErr != nil {
					t.Errorf("a %s record: Unkept %v, Add %v", kind, unkept, addErr)
				}
				return
			}
			if !errors.Is(unkept, workspace.ErrNotRegular) || !strings.Contains(unkept.Error(), dir) {
				t.Errorf("Unkept = %v, want ErrNotRegular naming the directory", unkept)
			}
			if addErr == nil {
				t.Error("Add kept a request in a record that is not a regular file")
			}
			if s := l.Spend(c.now()); math.Abs(s.Hour-0.003) > 1e-12 {
				t.Errorf("spend %v: this session's request must still count", s.Hour)
			}
		})
	}
}
