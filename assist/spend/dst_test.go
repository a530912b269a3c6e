package spend

import (
	"testing"
	"time"
	_ "time/tzdata" // the zone below on systems without a zone database
)

// TestHourWindowAcrossDSTEnd (#25.1): where daylight saving time ends, the
// clock hour 01:00–02:00 comes twice. The second is its own window: it
// counts none of the first's spend, and it ends an hour after it starts
// (02:00 standard time). Before, both were keyed by time.Date(…, 1, 0, …),
// which names the first: the second hour counted the first's spend (a
// budget spent then stayed spent) and ended at 01:00 standard time, before
// the window's own start — "paused until 01:00" at 01:30.
func TestHourWindowAcrossDSTEnd(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	first := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)  // 01:30 EDT
	second := time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC) // 01:30 EST
	if a, b := first.In(ny), second.In(ny); a.Hour() != 1 || b.Hour() != 1 {
		t.Fatalf("the zone does not repeat 01:00 on 2026-11-01: %v, %v", a, b)
	}
	c := &clock{t: first}
	l, err := Open(t.TempDir(), Options{Location: ny, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Add(rec(first, 0.02))
	if s := l.Spend(first); s.Hour != 0.02 || !s.HourEnds.Equal(second.Add(-30*time.Minute)) {
		t.Errorf("the first 01:00 hour: %+v", s)
	}
	c.set(second)
	s := l.Spend(second)
	if s.Hour != 0 || s.Day != 0.02 {
		t.Errorf("the second 01:00 hour counts %v (the day %v), want 0 (0.02)", s.Hour, s.Day)
	}
	if want := second.Add(30 * time.Minute); !s.HourEnds.Equal(want) {
		t.Errorf("the second 01:00 hour ends at %v, want %v", s.HourEnds.In(ny), want.In(ny))
	}
	m := NewMeter(l, Budget{Hourly: 0.01})
	if st := m.Check(); st.Capped {
		t.Errorf("the second 01:00 hour is capped by the first's spend: %+v", st)
	}
}
