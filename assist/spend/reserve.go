package spend

import "sync"

// Reservation is one request's estimated cost, held against the budgets
// from its dispatch (right before it is sent) until it ends, so that
// requests in flight at once see each other: every Status of the meter
// counts it (Window.Held) until it is settled with the request's real
// cost (Settle) or released unsent (Release). Settle and Release are
// idempotent and may be called in any order, any number of times: only
// the first counts; a nil *Reservation does nothing.
type Reservation struct {
	m   *Meter
	id  uint64
	usd float64

	once sync.Once
}

// USD returns the estimate held.
func (r *Reservation) USD() float64 {
	if r == nil {
		return 0
	}
	return r.usd
}

// Release drops the reservation without recording anything: the request
// was not sent, or its record is written by other means.
func (r *Reservation) Release() {
	if r == nil {
		return
	}
	r.once.Do(r.drop)
}

// Settle replaces the reservation by the request's real cost: it adds rec
// to the record and then drops the estimate (in that order, so the spend
// is never counted as neither). Only the first Settle or Release counts:
// a later Settle records nothing and returns nil.
func (r *Reservation) Settle(rec Record) error {
	if r == nil {
		return nil
	}
	var err error
	r.once.Do(func() {
		err = r.m.log.Add(rec)
		r.drop()
	})
	return err
}

func (r *Reservation) drop() {
	r.m.mu.Lock()
	delete(r.m.held, r.id)
	r.m.mu.Unlock()
}

// Reserve holds usd against the budgets if it fits in what is left of
// each (no budget is spent, and the spend so far, what other reservations
// hold and usd together stay within it), checking and reserving at once:
// two requests reserving concurrently never both pass a budget. Otherwise
// it reserves nothing and returns nil with the status that says why (see
// Status.Fits).
func (m *Meter) Reserve(usd float64) (*Reservation, Status) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := status(m.log.Spend(m.now()), m.budget, m.heldLocked())
	if !st.Fits(usd) {
		return nil, st
	}
	return m.holdLocked(usd), st
}

// Hold holds usd against the budgets whatever is left: a request the user
// chose to send past a budget, or one no budget may stop.
func (m *Meter) Hold(usd float64) *Reservation {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.holdLocked(usd)
}

// Held returns the estimates the meter's reservations hold now.
func (m *Meter) Held() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.heldLocked()
}

// holdLocked makes a reservation. Precondition: m.mu is held.
func (m *Meter) holdLocked(usd float64) *Reservation {
	m.nextID++
	r := &Reservation{m: m, id: m.nextID, usd: max(usd, 0)}
	m.held[r.id] = r.usd
	return r
}

// heldLocked sums the reservations. Precondition: m.mu is held.
func (m *Meter) heldLocked() float64 {
	var sum float64
	for _, usd := range m.held {
		sum += usd
	}
	return sum
}

// Fits reports whether a request estimated at usd fits in what is left of
// every budget: none is spent, and spent, held and usd together stay
// within each.
func (s Status) Fits(usd float64) bool {
	if s.Capped {
		return false
	}
	for _, w := range []Window{s.Hour, s.Day} {
		if w.Limit > 0 && w.Spent+w.Held+max(usd, 0) > w.Limit {
			return false
		}
	}
	return true
}

// Over returns the window a request estimated at usd would pass (the one
// that ends later when both would), or nil when it fits.
func (s Status) Over(usd float64) *Window {
	if s.Capped {
		return s.Cap
	}
	for _, w := range []*Window{&s.Day, &s.Hour} {
		if w.Limit > 0 && w.Spent+w.Held+max(usd, 0) > w.Limit {
			c := *w
			return &c
		}
	}
	return nil
}

// Left is what is left of the window's budget: its limit less what was
// spent and what requests in flight hold (never below 0).
func (w Window) Left() float64 { return max(w.Limit-w.Spent-w.Held, 0) }
