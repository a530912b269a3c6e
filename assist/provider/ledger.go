package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/redact"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/cache"
)

// Ledger is what every provider request passes through, whichever surface
// sends it (actions, completion, next edits, repairs): the budgets before
// it (Background for the surfaces that run on their own, Ask for the ones
// the user started), and after it the request record (Done) and the last
// prompt (Stream keeps it). A nil *Ledger records nothing and never stops
// a request.
type Ledger struct {
	log *slog.Logger
	// The record is opened on first use (a server answers initialize
	// without touching the disk): dir, with budget, makes meter.
	dir    string
	budget config.Budget
	once   sync.Once
	m      *spend.Meter // guarded by mu; set once

	mu      sync.Mutex
	last    *LastPrompt
	warn    func(msg string) // OnWarn
	notice  func(msg string) // OnNotice
	noticed int64            // the cap window (its end, Unix s) the notice was given for
	// unpriced holds the models whose requests were found to have no
	// price while a budget is set (told once each).
	unpriced map[string]bool
	// unkeptSaid: the user was told the record's file is not a regular
	// file (notKept).
	unkeptSaid bool
	// outputs are the output tokens of each surface and model's last
	// answers (ExpectedOutput), seeded once from the record (seedOnce).
	outputs  map[outputKey][]int
	seedOnce sync.Once
	// background are the surfaces that run on their own (Backgrounds).
	background []string
}

// LastPrompt is the last request as it was sent, with the API key struck
// out. It is kept in memory only.
type LastPrompt struct {
	Time    time.Time `json:"time"`
	Surface string    `json:"surface"`
	Model   string    `json:"model"`
	// Body is the request's JSON body, byte for byte as sent but for the
	// key (redacted).
	Body string `json:"body"`
}

// ErrBudget is wrapped by the error of a request that a spent budget
// stopped (a background surface) or that the user chose not to send.
var ErrBudget = errors.New("budget")

// ErrNotSent: the user answered "Cancel" (or nothing) when asked whether
// to send a request; nothing was sent. It wraps ErrBudget.
var ErrNotSent = fmt.Errorf("%w: not sent", ErrBudget)

// OpenLedger returns the ledger of the request record in dir
// (spend.StateDir) with the budget b. It does no I/O: the record is opened
// on first use, and when it cannot be (no state directory), the spend is
// counted in memory and the log says why once.
func OpenLedger(dir string, b config.Budget, log *slog.Logger) *Ledger {
	if log == nil {
		log = slog.Default()
	}
	return &Ledger{dir: dir, budget: b, log: log}
}

// NewLedger returns a ledger on an open record (tests: its clock and zone).
func NewLedger(l *spend.Log, b config.Budget, log *slog.Logger) *Ledger {
	if log == nil {
		log = slog.Default()
	}
	lg := &Ledger{log: log}
	lg.once.Do(func() { lg.m = spend.NewMeter(l, Budget(b)) })
	return lg
}

// meter returns the meter, opening the record on first use.
func (l *Ledger) meter() *spend.Meter {
	l.once.Do(func() {
		rec, err := spend.Open(l.dir, spend.Options{Logger: l.log})
		if err != nil {
			l.log.Warn("requests are not recorded on disk; the budgets count this session only", "error", err)
			rec = spend.Memory(spend.Options{Logger: l.log})
		}
		l.mu.Lock()
		l.m = spend.NewMeter(rec, Budget(l.budget))
		l.mu.Unlock()
		if err := rec.Unkept(); err != nil {
			l.notKept(err)
		}
	})
	return l.m
}

// notKept tells why a request was not recorded on disk: once, to the log
// and to OnWarn (the user), when the record's file is not a regular file
// (spend.Log.Unkept: the budgets then count this session only); in the
// log each time otherwise (a full disk).
func (l *Ledger) notKept(err error) {
	l.mu.Lock()
	m := l.m
	l.mu.Unlock()
	var unkept error
	if m != nil {
		unkept = m.Log().Unkept()
	}
	if unkept == nil {
		l.log.Warn("request not recorded", "error", err)
		return
	}
	l.mu.Lock()
	said := l.unkeptSaid
	l.unkeptSaid = true
	warn := l.warn
	l.mu.Unlock()
	if said {
		l.log.Debug("request not recorded", "error", err)
		return
	}
	msg := fmt.Sprintf("Kimi: requests are not recorded, and budget.hourly and budget.daily count this session's spend only: %v. Move it away to record them again.", unkept)
	l.log.Warn(msg)
	if warn != nil {
		warn(msg)
	}
}

// Budget converts the configuration's budget.
func Budget(b config.Budget) spend.Budget {
	return spend.Budget{Hourly: b.Hourly, Daily: b.Daily, ConfirmAbove: b.ConfirmAbove}
}

// Close closes the record.
func (l *Ledger) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	m := l.m
	l.mu.Unlock()
	if m == nil {
		return nil // never opened
	}
	return m.Log().Close()
}

// SetBudget applies a new configuration's budget.
func (l *Ledger) SetBudget(b config.Budget) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.budget = b
	m := l.m
	l.mu.Unlock()
	if m != nil {
		m.SetBudget(Budget(b))
	}
}

// OnWarn sets the function told, once per window, that the spend passed
// 80 % of a budget; OnNotice the one told, once per window, that a budget
// is spent and the background surfaces stopped. Both are called from the
// goroutine of the request that found it.
func (l *Ledger) OnWarn(f func(msg string))   { l.mu.Lock(); l.warn = f; l.mu.Unlock() }
func (l *Ledger) OnNotice(f func(msg string)) { l.mu.Lock(); l.notice = f; l.mu.Unlock() }

// Status is the spend against the budget now (for kimi.stats).
func (l *Ledger) Status() (spend.Status, spend.Budget) {
	if l == nil {
		return spend.Status{}, spend.Budget{}
	}
	return l.meter().Status(), l.meter().Budget()
}

// Records returns the newest last requests of the record (0: all).
func (l *Ledger) Records(last int) ([]spend.Record, error) {
	if l == nil {
		return nil, nil
	}
	return l.meter().Log().Records(last)
}

// LastPrompt returns the last request sent (nil before any).
func (l *Ledger) LastPrompt() *LastPrompt {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// check returns the status, telling the warning when one is due.
func (l *Ledger) check() spend.Status {
	st := l.meter().Check()
	if st.Warn != "" {
		l.mu.Lock()
		warn := l.warn
		l.mu.Unlock()
		l.log.Info(st.Warn)
		if warn != nil {
			warn(st.Warn)
		}
	}
	return st
}

// Backgrounds names the surfaces that run on their own ("inline
// completion", "next edits"): the notice that a spent budget stops one
// names them all, since it is given once per window.
func (l *Ledger) Backgrounds(what ...string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.background = append([]string(nil), what...)
	l.mu.Unlock()
}

// Background checks the budget before a request of a surface that runs on
// its own (what: "inline completion", "next edits"). While a budget is
// spent it returns an error wrapping ErrBudget and sends nothing; the
// first time in the window, OnNotice is told why and until when.
func (l *Ledger) Background(what string) error {
	if l == nil {
		return nil
	}
	st := l.check()
	if !st.Capped {
		return nil
	}
	msg := st.CapMessage(what, l.meter().Log().Now())
	l.mu.Lock()
	first := l.noticed != st.Cap.Ends.Unix()
	l.noticed = st.Cap.Ends.Unix()
	notice := l.notice
	also := slices.DeleteFunc(slices.Clone(l.background), func(s string) bool { return s == what })
	l.mu.Unlock()
	if first {
		// The one notice of the window names every surface it stops.
		told := msg
		for _, a := range also {
			verb := "is"
			if strings.HasSuffix(a, "s") {
				verb = "are"
			}
			told = strings.TrimSuffix(told, ".") + ", and so " + verb + " " + a + "."
		}
		l.log.Warn(told)
		if notice != nil {
			notice(told)
		}
	}
	return fmt.Errorf("%w: %s", ErrBudget, msg)
}

// Ask checks the budget before a request the user started (an action),
// estimated at tokens prompt tokens costing usd (basis: what it counts for
// the answer, ExpectedOutput's Basis, said in the question), before it waits for a
// stream slot: while a budget is spent, when usd would pass what is left
// of one (the spend and the reservations of requests in flight counted,
// spend.Status.Fits), or when usd is above budget.confirmAbove, it asks
// with confirm (the question names the size and the estimated cost) and
// returns ErrNotSent unless the answer is yes. past reports that it asked
// because of a budget and the answer was yes: the action's requests may
// then pass it (Hold instead of Reserve) without asking again. A nil
// confirm (the command line, where the user just typed the request) sends
// without asking, past set; the log says why it would have asked.
func (l *Ledger) Ask(ctx context.Context, tokens int, usd float64, basis string, confirm func(ctx context.Context, question string) bool) (past bool, err error) {
	return l.ask(ctx, tokens, usd, basis, confirm, true)
}

// AskBudget is Ask for a request about to be sent (a stream slot taken
// and given back while it asks) whose reservation did not fit: it asks
// only about the budgets, not budget.confirmAbove (Ask asked that before
// the queue). It asks nothing, and returns past false and no error, when
// the estimate fits after all (a request in flight ended meanwhile): try
// Reserve again.
func (l *Ledger) AskBudget(ctx context.Context, tokens int, usd float64, basis string, confirm func(ctx context.Context, question string) bool) (past bool, err error) {
	return l.ask(ctx, tokens, usd, basis, confirm, false)
}

func (l *Ledger) ask(ctx context.Context, tokens int, usd float64, basis string, confirm func(ctx context.Context, question string) bool, above bool) (bool, error) {
	if l == nil {
		return false, nil
	}
	st := l.check()
	b := l.meter().Budget()
	over := !st.Fits(usd)
	if !over && !(above && b.Confirm(usd)) {
		return false, nil
	}
	q := st.AskMessage(b, tokens, usd, basis, l.meter().Log().Now())
	if confirm == nil {
		l.log.Warn(SentAnyway(q))
		return over, nil
	}
	if !confirm(ctx, q) {
		return false, ErrNotSent
	}
	return over, nil
}

// Reserve holds usd, the estimate of a request the user started that is
// about to be sent (its stream slot taken), against the budgets, when it
// fits in what is left of them (spend.Meter.Reserve: checked and held at
// once, so concurrent requests see each other). ok false: it does not
// fit and nothing is held; ask (AskBudget) or do not send. Settle the
// reservation when the request ends, and Release it on every other way
// out (defer r.Release(): both are idempotent). A nil *Ledger holds
// nothing and always fits.
func (l *Ledger) Reserve(usd float64) (r *spend.Reservation, ok bool) {
	if l == nil {
		return nil, true
	}
	r, _ = l.meter().Reserve(usd)
	return r, r != nil
}

// Hold holds usd against the budgets whatever is left (the user answered
// Send to passing a budget, Ask's past): others still see it.
func (l *Ledger) Hold(usd float64) *spend.Reservation {
	if l == nil {
		return nil
	}
	return l.meter().Hold(usd)
}

// ReserveBackground is Reserve for a surface that runs on its own (what:
// "inline completion", "next edits"), right before its request is sent:
// when the estimate does not fit what is left it asks nobody and returns
// an error wrapping ErrBudget — the request is not sent, and the surface
// pauses quietly as at the cap (Background tells the cap, once).
func (l *Ledger) ReserveBackground(what string, usd float64) (*spend.Reservation, error) {
	if l == nil {
		return nil, nil
	}
	r, st := l.meter().Reserve(usd)
	if r != nil {
		return r, nil
	}
	w := st.Over(usd)
	msg := fmt.Sprintf("%s not sent: its estimate (%s) is more than is left of the %s budget (%s)", what, spend.USD(usd), w.Name, spend.USD(w.Left()))
	l.log.Debug(msg)
	return nil, fmt.Errorf("%w: %s", ErrBudget, msg)
}

// SentAnyway is the log line of a request Ask would have asked about but
// sent without asking (no confirm: the command line).
func SentAnyway(question string) string {
	return question + " (sent anyway: a request typed on the command line is not asked about)"
}

// Call is one request as the record sees it.
type Call struct {
	// Surface is the action's name or spend.SurfaceCompletion, ….
	Surface string
	// Files are the files the prompt includes, with their bytes.
	Files []spend.File
	// Key is the API key, struck from the kept prompt (never recorded).
	Key string
}

// Stream sends req with client.Stream and keeps the body it sent as the
// last prompt (the key struck out). trace, if set, receives the call's
// other events.
func (l *Ledger) Stream(ctx context.Context, client *model.Client, req *model.Request, trace *model.Trace, c *Call) (*model.Stream, error) {
	var t model.Trace
	if trace != nil {
		t = *trace
	}
	if l != nil {
		sent := t.Sent
		t.Sent = func(body []byte) {
			l.keep(c, req.Model, body)
			if sent != nil {
				sent(body)
			}
		}
	}
	return client.Stream(model.WithTrace(ctx, &t), req)
}

// Done records a request that was sent: its model, usage and priced
// accounting (cache.Session.Record's), and err, how it ended. It is
// Settle without a reservation.
func (l *Ledger) Done(c *Call, modelName string, a cache.Accounting, err error) {
	l.Settle(nil, c, modelName, a, err)
}

// Settle records a request that ended, as Done does, and settles its
// reservation r (Reserve, Hold, ReserveBackground; nil: none) with that
// record: the estimate r held is replaced by the real cost. A request
// that was never sent releases r instead (r.Release).
func (l *Ledger) Settle(r *spend.Reservation, c *Call, modelName string, a cache.Accounting, err error) {
	if l == nil {
		r.Release()
		return
	}
	rec := spend.Record{
		// The record's own clock, the one its budget windows go by.
		Time: l.meter().Log().Now(), Surface: c.Surface, Model: modelName, Files: c.Files,
		PromptTokens: a.PromptTokens, CachedTokens: a.CachedTokens, WrittenTokens: a.CacheWriteTokens, OutputTokens: a.CompletionTokens,
		CostUSD: a.InputCostUSD + a.OutputCostUSD, Unpriced: !a.Priced && a.PromptTokens > 0, Estimated: a.Estimated,
		Outcome: Outcome(err),
	}
	var aerr error
	if r != nil {
		aerr = r.Settle(rec)
	} else {
		aerr = l.meter().Log().Add(rec)
	}
	if aerr != nil {
		l.notKept(aerr)
	}
	l.noteOutput(rec)
	if rec.Unpriced {
		l.unpricedModel(modelName)
	}
}

// unpricedModel tells the user, once per model, when a request of a model
// without a price was made while budget.hourly or budget.daily is set: its
// requests count $0 against the budgets (and budget.confirmAbove never asks
// about them), which the user would not otherwise learn.
func (l *Ledger) unpricedModel(modelName string) {
	if b := l.meter().Budget(); b.Hourly <= 0 && b.Daily <= 0 {
		return
	}
	l.mu.Lock()
	if l.unpriced[modelName] {
		l.mu.Unlock()
		return
	}
	if l.unpriced == nil {
		l.unpriced = map[string]bool{}
	}
	l.unpriced[modelName] = true
	warn := l.warn
	l.mu.Unlock()
	msg := fmt.Sprintf("Kimi: the model %s has no price in prices, so its requests count $0 against budget.hourly and budget.daily; set prices.%q to bound them.", modelName, modelName)
	l.log.Warn(msg)
	if warn != nil {
		warn(msg)
	}
}

// Outcome names how a request ended, for the record.
func Outcome(err error) string {
	switch {
	case err == nil:
		return spend.OutcomeOK
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return spend.OutcomeCancelled
	case errors.Is(err, model.ErrCutOff):
		return spend.OutcomeCutOff
	case errors.Is(err, model.ErrNoAnswer):
		return spend.OutcomeNoAnswer
	}
	return spend.OutcomeError
}

// Held lists the documents a built prompt holds (cache.Prompt.Files) as
// the record's files: one per path, with the bytes of all its parts.
func Held(p *cache.Prompt) []spend.File {
	var out []spend.File
	for _, f := range p.Files {
		out = AddFiles(out, spend.File{Path: f.Path, Bytes: f.Bytes})
	}
	return out
}

// AddFiles returns files with more added: the bytes of a path already
// listed are added to its own, a new path is listed after the others.
// files is not modified.
func AddFiles(files []spend.File, more ...spend.File) []spend.File {
	out := append([]spend.File(nil), files...)
	for _, m := range more {
		i := slices.IndexFunc(out, func(f spend.File) bool { return f.Path == m.Path })
		if i < 0 {
			out = append(out, m)
			continue
		}
		out[i].Bytes += m.Bytes
	}
	return out
}

// Estimate is the estimated cost of sending prompt for a model priced in
// cfg, with up to maxOutput output tokens (the most the answer can cost).
func Estimate(cfg config.Config, modelName string, prompt *cache.Prompt, maxOutput int) float64 {
	p, ok := Prices(cfg)[modelName]
	if !ok {
		return 0
	}
	return spend.Estimate(p, prompt.EstimatedTokens, prompt.PredictedCachedTokens, maxOutput, prompt.TTL == time.Hour)
}

// Complete is Stream for a request sent without streaming
// (model.Client.Complete): the body is kept as the last prompt, and the
// request recorded, priced at cfg's prices, when it ends.
func (l *Ledger) Complete(ctx context.Context, cfg config.Config, client *model.Client, req *model.Request, c *Call) (*model.Response, error) {
	t := model.Trace{}
	if l != nil {
		t.Sent = func(body []byte) { l.keep(c, req.Model, body) }
	}
	resp, err := client.Complete(model.WithTrace(ctx, &t), req)
	var a cache.Accounting
	if resp != nil && resp.Usage != nil {
		a = Account(cfg, req.Model, Usage(resp.Usage))
	}
	l.Done(c, req.Model, a, err)
	return resp, err
}

// keep makes body the last prompt, the key struck out.
func (l *Ledger) keep(c *Call, modelName string, body []byte) {
	lp := &LastPrompt{Time: time.Now(), Surface: c.Surface, Model: modelName, Body: redact.String(string(body), c.Key)}
	l.mu.Lock()
	l.last = lp
	l.mu.Unlock()
}

// Account prices usage u of one request to modelName at cfg's prices, for
// a request outside any prompt session (cache writes at the 5 minute
// price, what the provider writes by default).
func Account(cfg config.Config, modelName string, u cache.Usage) cache.Accounting {
	a := cache.Accounting{Usage: u}
	if p, ok := Prices(cfg)[modelName]; ok {
		a.Priced = true
		a.InputCostUSD, a.OutputCostUSD = p.Cost(u, false)
	}
	return a
}
