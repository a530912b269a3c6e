package spend

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/cache"
)

// Budget bounds the spend, in US dollars at the configured prices. A zero
// field sets no bound.
type Budget struct {
	// Hourly and Daily bound the spend of every surface together in the
	// local clock hour and the local day.
	Hourly float64 `json:"hourly"`
	Daily  float64 `json:"daily"`
	// ConfirmAbove is the estimated cost of one request above which an
	// action asks before sending it.
	ConfirmAbove float64 `json:"confirmAbove"`
}

// DefaultConfirmAbove is budget.confirmAbove's default, in US dollars.
const DefaultConfirmAbove = 0.10

// WarnAt is the share of a budget at which the user is told, once per
// window.
const WarnAt = 0.8

// Confirm reports whether a request estimated at usd must be confirmed.
func (b Budget) Confirm(usd float64) bool { return b.ConfirmAbove > 0 && usd > b.ConfirmAbove }

// Window is the spend against one budget.
type Window struct {
	// Name is "hourly" or "daily".
	Name string `json:"name"`
	// Spent is what the window's requests cost so far (settled: recorded);
	// Held what this process's requests in flight hold against it
	// (Reservation: their estimates); Limit the budget (0: none); Ends
	// when the window ends.
	Spent float64   `json:"spentUSD"`
	Held  float64   `json:"heldUSD"`
	Limit float64   `json:"limitUSD"`
	Ends  time.Time `json:"ends"`
}

// Reached reports whether the window has a budget and spent it (settled
// spend only: a budget held by requests in flight is not spent, it is
// full — see Status.Fits).
func (w Window) Reached() bool { return w.Limit > 0 && w.Spent >= w.Limit }

// Status is the spend against the budgets at one time.
type Status struct {
	Hour Window `json:"hour"`
	Day  Window `json:"day"`
	// Capped is set while a budget is spent; Cap is then that window (the
	// one that ends later when both are) and Cap.Ends the time the
	// spending may resume.
	Capped bool    `json:"capped"`
	Cap    *Window `json:"cap,omitempty"`
	// Warn, from Meter.Check only, is the line to tell the user the first
	// time in a window the spend passes WarnAt of a budget ("").
	Warn string `json:"-"`
	// Notice, from Meter.Check only, is set the first time in a window a
	// budget is found spent: the background surfaces tell the user then
	// (CapMessage), once, and stop quietly afterwards.
	Notice bool `json:"-"`
}

// Meter applies a Budget to a Log. It is safe for concurrent use.
type Meter struct {
	log *Log
	now func() time.Time

	mu      sync.Mutex
	budget  Budget
	warned  map[string]int64   // window name → the window end it was warned for
	noticed map[string]int64   // the same, for the cap notice
	held    map[uint64]float64 // reservation id → its estimate (Reservation)
	nextID  uint64
}

// NewMeter returns a meter of l's spend against b, on l's clock.
func NewMeter(l *Log, b Budget) *Meter {
	return &Meter{log: l, now: l.now, budget: b, warned: map[string]int64{}, noticed: map[string]int64{},
		held: map[uint64]float64{}}
}

// Log returns the meter's record.
func (m *Meter) Log() *Log { return m.log }

// SetBudget makes b the budget from now on.
func (m *Meter) SetBudget(b Budget) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.budget = b
}

// Budget returns the budget.
func (m *Meter) Budget() Budget {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.budget
}

// Status returns the spend against the budget now, the reservations of
// requests in flight included (Window.Held), without the one-time Warn
// and Notice.
func (m *Meter) Status() Status {
	m.mu.Lock()
	b, held := m.budget, m.heldLocked()
	m.mu.Unlock()
	return status(m.log.Spend(m.now()), b, held)
}

// status is the spend s and the reservations held against b. Requests in
// flight count in the current windows: they are recorded when they end.
func status(s Spend, b Budget, held float64) Status {
	st := Status{
		Hour: Window{Name: "hourly", Spent: s.Hour, Held: held, Limit: b.Hourly, Ends: s.HourEnds},
		Day:  Window{Name: "daily", Spent: s.Day, Held: held, Limit: b.Daily, Ends: s.DayEnds},
	}
	switch {
	case st.Day.Reached():
		st.Capped, st.Cap = true, &st.Day
	case st.Hour.Reached():
		st.Capped, st.Cap = true, &st.Hour
	}
	return st
}

// Check returns the spend against the budget now (reservations included,
// as in Status), with Warn and Notice set the first time in each window
// that they apply (for this meter: each server tells its own user).
func (m *Meter) Check() Status {
	m.mu.Lock()
	b, held := m.budget, m.heldLocked()
	m.mu.Unlock()
	now := m.now()
	st := status(m.log.Spend(now), b, held)
	m.mu.Lock()
	defer m.mu.Unlock()
	if st.Capped {
		if m.noticed[st.Cap.Name] != st.Cap.Ends.Unix() {
			m.noticed[st.Cap.Name] = st.Cap.Ends.Unix()
			st.Notice = true
		}
		return st
	}
	for _, w := range []Window{st.Day, st.Hour} {
		if w.Limit > 0 && w.Spent >= WarnAt*w.Limit && m.warned[w.Name] != w.Ends.Unix() {
			m.warned[w.Name] = w.Ends.Unix()
			st.Warn = fmt.Sprintf("Kimi: %s of the %s budget of %s spent (%d %%), until %s.",
				USD(w.Spent), w.Name, USD(w.Limit), int(math.Floor(100*w.Spent/w.Limit)), Until(now, w.Ends))
			break
		}
	}
	return st
}

// CapMessage says why what (a surface: "inline completion") stopped, and
// until when: "Kimi: the hourly budget of $0.01 is spent ($0.0123 this
// hour); inline completion is paused until 18:00." It is "" when no budget
// is spent. A plural surface ("next edits") "are" paused.
func (s Status) CapMessage(what string, now time.Time) string {
	if !s.Capped {
		return ""
	}
	verb := "is"
	if strings.HasSuffix(what, "s") {
		verb = "are"
	}
	return fmt.Sprintf("Kimi: the %s budget of %s is spent (%s %s); %s %s paused until %s.",
		s.Cap.Name, USD(s.Cap.Limit), USD(s.Cap.Spent), thisWindow(s.Cap.Name), what, verb, Until(now, s.Cap.Ends))
}

// AskMessage is the question an action asks before a request while a
// budget is spent, when the request's estimate would pass what is left of
// one (Status.Fits), or when it is estimated above Budget.ConfirmAbove:
// its size and estimated cost (with basis, what the estimate counts for
// the answer, when not ""), and why it asks.
func (s Status) AskMessage(b Budget, tokens int, usd float64, basis string, now time.Time) string {
	size := fmt.Sprintf("This request is about %s tokens, estimated at %s.", Count(tokens), USD(usd))
	if basis != "" {
		size = fmt.Sprintf("This request is about %s tokens, estimated at %s (the answer: %s).", Count(tokens), USD(usd), basis)
	}
	if s.Capped {
		return fmt.Sprintf("Kimi: the %s budget of %s is spent (%s %s, until %s). %s Send it anyway?",
			s.Cap.Name, USD(s.Cap.Limit), USD(s.Cap.Spent), thisWindow(s.Cap.Name), Until(now, s.Cap.Ends), size)
	}
	if w := s.Over(usd); w != nil {
		held := ""
		if w.Held > 0 {
			held = fmt.Sprintf(", %s held by requests in flight", USD(w.Held))
		}
		return fmt.Sprintf("Kimi: %s That is more than is left of the %s budget of %s (%s left: %s spent %s%s, until %s). Send it anyway?",
			size, w.Name, USD(w.Limit), USD(w.Left()), USD(w.Spent), thisWindow(w.Name), held, Until(now, w.Ends))
	}
	return fmt.Sprintf("Kimi: %s That is above budget.confirmAbove (%s). Send it?", size, USD(b.ConfirmAbove))
}

func thisWindow(name string) string {
	if name == "hourly" {
		return "this hour"
	}
	return "today"
}

// Estimate is the cost, in US dollars at price p, of a request of
// promptTokens prompt tokens of which the provider should serve
// predictedCached from its cache (the rest counted as written to it, for
// the TTL asked: the dearer case), and outputTokens of output.
func Estimate(p cache.Price, promptTokens, predictedCached, outputTokens int, hourTTL bool) float64 {
	promptTokens = max(promptTokens, 0)
	cached := min(max(predictedCached, 0), promptTokens)
	in, out := p.Cost(cache.Usage{PromptTokens: promptTokens, CachedTokens: cached,
		CacheWriteTokens: promptTokens - cached, CompletionTokens: max(outputTokens, 0)}, hourTTL)
	return in + out
}

// USD formats a cost: "$0.0123" under a dollar (four decimals, the size
// of one request), "$1.23" above.
func USD(v float64) string {
	if math.Abs(v) < 1 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

// Count formats a token count with thousands separators ("12,345").
func Count(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + Count(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Until formats t, a window's end, for a notice at now: "18:00" on the
// same day, "Wed 2 Dec 00:00" otherwise.
func Until(now, t time.Time) string {
	t = t.In(now.Location())
	if y, m, d := now.Date(); t.Year() == y && t.Month() == m && t.Day() == d {
		return t.Format("15:04")
	}
	return t.Format("Mon 2 Jan 15:04")
}
