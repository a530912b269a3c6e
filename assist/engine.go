package assist

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/assist/tools"
	"github.com/kimi-lsp/kimi-lsp/assist/verify"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// Sentinel errors of Run.
var (
	// ErrNoChange: an edit action ended without any change.
	ErrNoChange = errors.New("the model proposed no change")
)

// Task is one action to run: what the user asked and a consistent snapshot
// of what the model may see.
type Task struct {
	// Action is the resolved action (config.Config.ActionFor).
	Action config.Action
	// URI is the active document's ("" for a task not built by
	// BuildTask).
	URI workspace.URI
	// Instruction is the user's instruction (Rewrite, user actions).
	Instruction string
	// Project is the workspace context.
	Project cache.Project
	// Active is the document the action works on; Path is
	// workspace-relative.
	Active cache.Document
	// Selection is the range in Active.Text.
	Selection cache.Selection
	// Diagnostics are the problems the action should address (Fix).
	Diagnostics []cache.Diagnostic
	// Context are the other documents the prompt's stable part shows
	// (with ExcerptActive, the active file's parts among them).
	Context []cache.Document
	// Volatile are the documents only this selection needs: the prompt
	// shows them after its cached part (cache.Request.Volatile).
	Volatile []cache.Document
	// ExcerptActive is set when the active file is too large to show
	// whole: Context holds its header and the declarations around the
	// selection (cache.Request.ExcerptActive).
	ExcerptActive bool
	// ContextBudget bounds, in tokens, what the prompt's stable part holds
	// besides the active file (cache.Request.ContextBudget); 0 for the
	// session's whole-prompt budget.
	ContextBudget int
	// Files reads and confines the files edits may touch. Open documents
	// must be read from the same snapshot as Active and Context.
	Files patch.Files
	// Notice, if set, is a line to tell the user before the task runs
	// (the active file was cut to a window around the selection).
	Notice string
	// Notes are added to the instruction: what the prompt leaves out.
	Notes []string
	// ReviewLines, for a review of changes, are the line ranges under
	// review (from 1, inclusive; see FileDiff.Lines): findings outside
	// them are left out, unless their lines use one of ReviewNames (the
	// names the change added or removed: a compile error it caused further
	// down is kept). Empty: the selection's lines.
	ReviewLines [][2]int
	ReviewNames []string
	// WindowLine, for an active file cut to a window around the selection
	// (context.maxFileSize), is the number of the file's lines before the
	// window (Active.Text holds the window, renumbered from 1); 0 else. A
	// review's findings are read in the window's lines and returned in the
	// file's.
	WindowLine int
	// NeedsInstruction is set for a Rewrite with no instruction from the
	// user or the selection: the caller should ask (or use
	// DefaultRewriteInstruction).
	NeedsInstruction bool
	// choice is what Context and Volatile were chosen from (nil for a
	// task not built by BuildTask): Run chooses Volatile again with the
	// helper's definitions.
	choice *contextChoice
}

// selectedLines returns the 1-based first and last line of the selection,
// or 0, 0 when there is none or it is the whole file.
func (t *Task) selectedLines() (start, end int) {
	s, e := t.Selection.Start, t.Selection.End
	text := t.Active.Text
	if s < 0 || e > len(text) || s >= e || s == 0 && e == len(text) {
		return 0, 0
	}
	if text[e-1] == '\n' {
		e-- // a selection of whole lines ends at the next line's start
	}
	start = 1 + strings.Count(text[:s], "\n")
	return start, start + strings.Count(text[s:e], "\n")
}

// title is the name of the document an explanation (what: "explanation",
// "answer") of the task is stored under.
func (t *Task) title(what string) string {
	start, end := t.selectedLines()
	return ExplanationTitle(t.Active.Path, start, end, what)
}

func (t *Task) selectedText() string {
	s, e := t.Selection.Start, t.Selection.End
	if s < 0 || e > len(t.Active.Text) || s > e {
		return ""
	}
	return t.Active.Text[s:e]
}

// Sink receives a task's output as it streams. Its methods must not block
// for long: they are called from the stream-reading goroutine.
type Sink interface {
	// Reasoning receives the model's thinking as it arrives.
	Reasoning(delta string)
	// Content receives the answer text as it arrives.
	Content(delta string)
	// Status receives a short line about what the task is doing
	// ("applying the edit", "asking the model to correct its diff").
	Status(msg string)
	// Round says another model call of the task begins: its answer and
	// reasoning replace what the last call streamed (a surface shows
	// this call's, not the earlier diff again). A non-empty note says why
	// the call is made and stays in view for the rest of the task, over
	// its answer and statuses ("repairing: gopls: 1 new error: …").
	Round(note string)
}

// Outcome is what a task produced.
type Outcome struct {
	// Action is the action that ran.
	Action config.Action
	// Model is the model that answered.
	Model string
	// Text is the final answer text (Markdown).
	Text string
	// Changes are the checked file changes of an edit action; empty for
	// explanations.
	Changes []patch.FileChange
	// Usage sums the usage of every model call of the task.
	Usage cache.Usage
	// Rounds counts the model calls.
	Rounds int
	// Cached is set when an explanation was served from an earlier answer
	// without a model call.
	Cached bool
	// File is the Markdown file holding an explanation, or the answer of
	// an edit action that proposed no change ("" if it could not be
	// written).
	File string
	// Redone lists the edit tool calls of an edit that failed and that the
	// model redid after it was told (tool, file and reason of each): the
	// edit applied holds what the model did instead. See RedoneNote.
	Redone []string
	// Findings are a review's findings, checked (parseFindings), at most
	// review.maxFindings; Dropped counts those left out as invalid,
	// outside the lines under review or over review.maxFindings.
	Findings []Finding
	Dropped  int
	// Cut counts the findings of an answer over 1 MiB past its first MiB,
	// not read (CutNote words it).
	Cut int
	// Verification is what the helper language server said of the edit
	// (nil when it was not verified: no edit, verification off).
	Verification *Verification
	// RepairUsage is the part of Usage spent on the repair round.
	RepairUsage cache.Usage
}

// RedoneNote says, in one sentence for the end of a job, which edit tool
// calls failed and were redone by the model; "" when none did.
func (o *Outcome) RedoneNote() string {
	n := len(o.Redone)
	if n == 0 {
		return ""
	}
	const shown = 3
	list := strings.Join(o.Redone[:min(n, shown)], "; ")
	if n > shown {
		list += fmt.Sprintf("; and %d more", n-shown)
	}
	if n == 1 {
		return "1 edit tool call failed and was redone by the model: " + list
	}
	return fmt.Sprintf("%d edit tool calls failed and were redone by the model: %s", n, list)
}

// Options configure an Engine.
type Options struct {
	// Config is the initial configuration (see SetConfig).
	Config config.Config
	// Logger receives the engine's log; nil means slog.Default().
	Logger *slog.Logger
	// HTTPClient, if set, sends the model requests (tests use it; nil
	// means the model package's own client).
	HTTPClient *http.Client
	// ExplanationDir is where explanations are written; "" means
	// os.UserCacheDir()/kimi-lsp/explanations.
	ExplanationDir string
	// StatsFile, if set, receives the session's statistics as JSON after
	// every task, for "kimi-lsp doctor --stats" (see DefaultStatsFile).
	StatsFile string
	// Gate, if set, bounds the model streams open at once: a task takes a
	// slot before its first model call and gives it back when its model
	// work ends (see Gate).
	Gate Gate
	// Now is the prompt session's clock (time.Now if nil); tests move it
	// to let the provider's cache expire, or not.
	Now func() time.Time
	// Ledger, if set, records every request the tasks send and applies
	// the budgets (see Ledger); nil records nothing.
	Ledger *provider.Ledger
	// Confirm, if set, asks the user whether to send a request (a budget
	// is spent, the request's estimate would pass what is left of one,
	// or it is estimated above budget.confirmAbove) and reports the
	// answer; nil sends without asking (the command line).
	Confirm func(ctx context.Context, question string) bool
	// VerifyFolders, if set, turns edit verification on (as far as
	// verify.enable allows): it returns the workspace folders a helper
	// language server gets when it starts (assist/verify).
	VerifyFolders func() []workspace.URI
	// VerifyBuffers returns the editor's open documents, which the helpers
	// mirror (nil: none, the command line).
	VerifyBuffers func() []*workspace.Snapshot
	// VerifyEnv is added to the helpers' environment.
	VerifyEnv []string
	// VerifyBounds overrides the verifier's bounds where set (tests).
	VerifyBounds verify.Bounds
}

// AskOnce returns ctx for the tasks of a review of changes (one request
// per changed file), which the user started as one: whether to send is
// asked at most once for all of them (a spent budget, budget.confirmAbove),
// and the first answer holds for the rest — "Send" sends the others
// without asking, "Cancel" sends none; the question says so. On the
// command line, which does not ask, the log says once that the requests
// were sent anyway.
func AskOnce(ctx context.Context) context.Context {
	return context.WithValue(ctx, askOnceKey{}, &askOnce{note: " (The answer holds for every file of this review of changes.)"})
}

type askOnceKey struct{}

// askOnce is AskOnce's answer, once given.
type askOnce struct {
	note     string
	mu       sync.Mutex
	answered bool
	yes      bool
}

// confirmFor is the engine's confirm for a request of ctx: e.confirm, or
// under AskOnce the answer already given.
func (e *Engine) confirmFor(ctx context.Context) func(context.Context, string) bool {
	m, _ := ctx.Value(askOnceKey{}).(*askOnce)
	if m == nil {
		return e.confirm
	}
	next, log := e.confirm, e.log
	return func(ctx context.Context, q string) bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.answered {
			return m.yes
		}
		if next == nil {
			log.Warn(provider.SentAnyway(q + m.note))
			m.answered, m.yes = true, true
			return true
		}
		m.answered, m.yes = true, next(ctx, q+m.note)
		return m.yes
	}
}

// OpenLedger returns the ledger of the request record in the state
// directory of getenv (spend.StateDir) with the budget b. It does no I/O
// (see provider.OpenLedger); without a state directory the spend is
// counted in memory.
func OpenLedger(getenv func(string) string, b config.Budget, log *slog.Logger) *provider.Ledger {
	dir, err := spend.StateDir(getenv)
	if err != nil {
		log.Warn("requests are not recorded on disk; the budgets count this session only", "error", err)
		return provider.NewLedger(spend.Memory(spend.Options{Logger: log}), b, log)
	}
	return provider.OpenLedger(dir, b, log)
}

// Gate hands out model-stream slots (the job engine, assist/jobs,
// implements it). Acquire waits for a free slot, calling place with the
// number of tasks ahead while it waits; it returns the function that gives
// the slot back, or the cause of ctx's end.
type Gate interface {
	Acquire(ctx context.Context, place func(ahead int)) (release func(), err error)
}

// Engine runs tasks. It is safe for concurrent use; tasks run in parallel.
//
// An engine costs nothing until its first task: the prompt session, the
// tool definitions, the explanation store and the HTTP client are made on
// first use (a language server answers initialize without them).
type Engine struct {
	log        *slog.Logger
	statsFile  string
	gate       Gate
	explainDir string
	ledger     *provider.Ledger
	confirm    func(ctx context.Context, question string) bool
	now        func() time.Time

	// Made once, by setup, on first use.
	setupOnce sync.Once
	setupErr  error
	prompts   *cache.Session
	tools     []model.Tool
	explains  *Explanations
	// fixed is what setup fixed for the engine's life (StartOnly), nil
	// before the first task.
	fixed atomic.Pointer[fixedSettings]

	noUsage sync.Once // the log says once that replies carry no usage

	// verifier checks edits with helper language servers (nil: never).
	verifier     *verify.Verifier
	verifyCounts verifyCounters

	// mu guards the fields below. client is made from cfg on first use
	// and kept while the endpoint, the key and the wait timeout stay the
	// same; every client sends through http, made once, so the pooled
	// connections survive configuration changes.
	mu     sync.Mutex
	cfg    config.Config
	client *model.Client
	http   *http.Client
}

// NewEngine returns an engine with the given options. It does no work and
// no I/O: see Engine.
func NewEngine(opts Options) (*Engine, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	e := &Engine{log: log, statsFile: opts.StatsFile, gate: opts.Gate, explainDir: opts.ExplanationDir, ledger: opts.Ledger, confirm: opts.Confirm,
		now: opts.Now, http: opts.HTTPClient, cfg: opts.Config}
	if opts.VerifyFolders != nil {
		servers, idle := VerifierOptions(opts.Config)
		e.verifier = verify.New(verify.Options{Servers: servers, Idle: idle, Folders: opts.VerifyFolders,
			Buffers: opts.VerifyBuffers, Env: opts.VerifyEnv, Logger: log, Bounds: opts.VerifyBounds,
			Trusted: e.trusted})
	}
	return e, nil
}

// setup makes what tasks need, once, from the configuration at first use:
// the tool definitions (webSearch) and the prices are part of the prompt
// session, which lives as long as the engine.
func (e *Engine) setup() error {
	e.setupOnce.Do(func() {
		cfg := e.Config()
		defs := tools.ModelTools()
		if cfg.WebSearch {
			defs = append(defs, model.WebSearchTool())
		}
		toolsJSON, err := json.Marshal(defs)
		if err != nil {
			e.setupErr = err
			return
		}
		prompts, err := cache.NewSession(cache.Config{
			System: System,
			Tools:  toolsJSON,
			Model:  cfg.Model,
			Prices: provider.Prices(cfg),
			TTL:    cfg.CacheTTLDuration(),
			Logger: e.log,
			Now:    e.now,
		})
		if err != nil {
			e.setupErr = err
			return
		}
		ex, err := NewExplanations(e.explainDir)
		if err != nil {
			e.log.Warn("explanations will not be kept on disk", "error", err)
		}
		e.prompts, e.tools, e.explains = prompts, defs, ex
		e.fixed.Store(&fixedSettings{webSearch: cfg.WebSearch, prices: provider.Prices(cfg)})
	})
	return e.setupErr
}

// fixedSettings are the settings the engine reads once, at its first task,
// for its life: the tool definitions lead every prompt, whose cached
// prefix a change would throw away, and the prices of the prompt session,
// which prices what each action's requests cost.
type fixedSettings struct {
	webSearch bool
	prices    cache.Prices
}

// StartOnly returns the keys whose value in cfg differs from the one the
// engine fixed at its first task and keeps until the server starts again
// (webSearch; prices, for the cost recorded of actions); none before the
// first task, when cfg still applies whole.
func (e *Engine) StartOnly(cfg config.Config) []string {
	f := e.fixed.Load()
	if f == nil {
		return nil
	}
	var keys []string
	if f.webSearch != cfg.WebSearch {
		keys = append(keys, "webSearch")
	}
	if !maps.Equal(f.prices, provider.Prices(cfg)) {
		keys = append(keys, "prices (the cost recorded for actions)")
	}
	return keys
}

// SetConfig makes cfg the configuration of the tasks that start from now.
// Running tasks keep the configuration they started with. The model client
// is kept when the endpoint, the key and the wait timeout stay the same,
// and its pooled connections in any case.
func (e *Engine) SetConfig(cfg config.Config) {
	e.mu.Lock()
	if e.client != nil && !sameClient(e.cfg, cfg) {
		e.client = nil // made again by current
	}
	trustChanged := e.cfg.TrustIdentity() != cfg.TrustIdentity()
	e.cfg = cfg
	e.mu.Unlock()
	if e.verifier == nil {
		return
	}
	e.verifier.SetServers(VerifierOptions(cfg))
	if cfg.Verify.Enable == config.VerifyOff {
		e.verifier.Stop()
	} else if trustChanged {
		// After e.mu is released: TrustChanged asks e.trusted.
		e.verifier.TrustChanged()
	}
}

// trusted reports whether the user trusts every one of folders (the
// configuration's trust.folders, or the editor's workspace trust): a
// helper started in them runs as the user's editor would run it, else
// restricted (assist/verify, D66, D69).
func (e *Engine) trusted(folders []workspace.URI) bool {
	dirs := make([]string, 0, len(folders))
	for _, f := range folders {
		dir, err := f.Path()
		if err != nil {
			return false
		}
		dirs = append(dirs, dir)
	}
	return e.Config().Trusts(dirs)
}

// sameClient reports whether a and b make the same model client: the same
// URLs, key and wait timeout.
func sameClient(a, b config.Config) bool {
	return provider.Identity(a) == provider.Identity(b) && a.WaitTimeout == b.WaitTimeout
}

// Config returns the configuration tasks start with now.
func (e *Engine) Config() config.Config {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cfg
}

func (e *Engine) current() (config.Config, *model.Client) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.client == nil {
		if e.http == nil {
			e.http = model.NewHTTPClient(0)
		}
		e.client = provider.NewClient(e.cfg, provider.ClientOptions{HTTPClient: e.http, Logger: e.log, WaitTimeout: e.cfg.WaitTimeout})
	}
	return e.cfg, e.client
}

// SaveText keeps text too long for a message as a Markdown document in the
// explanation directory and returns its path; name (a file name or title)
// starts the document's base name.
func (e *Engine) SaveText(name, text string) (string, error) {
	if err := e.setup(); err != nil {
		return "", err
	}
	if e.explains == nil {
		return "", errors.New("no directory for explanations")
	}
	return e.explains.Store(ExplanationKey("", "message", name, "", text), name, text)
}

// Stats returns the session's prompt and cache accounting.
func (e *Engine) Stats() cache.Stats {
	if e.setup() != nil {
		return cache.Stats{}
	}
	return e.prompts.Stats()
}

// Estimator is the session's token estimator, corrected by the provider's
// counts so far: TaskRequest.Estimator.
func (e *Engine) Estimator() cache.Estimator {
	if e.setup() != nil {
		return cache.Estimator{}
	}
	return e.prompts.Estimator()
}

// BuildTask is the package's BuildTask with the engine's estimator
// (corrected by the provider's counts so far) in r.Estimator and what its
// prompt session's stable part holds in r.Cached: the caller does not
// carry either from the engine back into the task.
func (e *Engine) BuildTask(cfg config.Config, folders *workspace.Folders, r TaskRequest) (*Task, error) {
	r.Estimator = e.Estimator()
	if e.setup() == nil {
		r.Cached = e.prompts.Shown()
	}
	return BuildTask(cfg, folders, r)
}

// DefaultStatsFile is where editor sessions leave their statistics:
// os.UserCacheDir()/kimi-lsp/stats.json ("" if there is no cache dir).
func DefaultStatsFile() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "kimi-lsp", "stats.json")
}

func (e *Engine) saveStats() {
	b, err := json.MarshalIndent(e.prompts.Stats(), "", "  ")
	if err == nil {
		err = writeCacheFile(e.statsFile, append(b, '\n'))
	}
	if err != nil {
		e.log.Debug("statistics not saved", "error", err)
	}
}

// Run runs t, streaming the model's output to sink, and returns what it
// produced. An explanation asked again for unchanged text is served from
// the earlier answer without a model call. Cancelling ctx stops the model
// stream at once. The API key is struck from everything the task passes
// on — the streamed text, the result, the explanation file — in case the
// provider echoes it. A panic inside the task (a model reply breaking the
// diff parser) is logged with its stack and returned as an error wrapping
// ErrInternal.
func (e *Engine) Run(ctx context.Context, t Task, sink Sink) (out *Outcome, err error) {
	if err := e.setup(); err != nil {
		return nil, err
	}
	cfg, client := e.current()
	key, _ := cfg.Key()
	rs := newRedactingSink(sink, key)
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, provider.Recovered(e.log, "a task", r, "action", t.Action.Name)
		}
	}()
	defer rs.flush()
	out, err = e.run(ctx, cfg, client, t, rs)
	if out != nil {
		out.Text = rs.redact(out.Text)
	}
	if e.statsFile != "" && out != nil && out.Rounds > 0 {
		e.saveStats()
	}
	return out, err
}

// run is one task's run, the same steps for every result kind: the
// stored answer when it is one (an unchanged explanation), else the prompt,
// the budgets' question, the model call with its tool rounds, then the
// delivery of the answer by the action's result kind (resultKindOf).
func (e *Engine) run(ctx context.Context, cfg config.Config, client *model.Client, t Task, sink *redactingSink) (*Outcome, error) {
	if _, err := provider.Key(cfg); err != nil {
		return nil, err
	}
	a := t.Action
	r := &taskRun{e: e, cfg: cfg, t: &t, sink: sink, out: &Outcome{Action: a, Model: a.Model}}
	r.instruction = instructionFor(a, &t)
	for _, n := range t.Notes {
		r.instruction += "\n" + n
	}
	kind := resultKindOf(a.Result)
	if kind.stored(r) {
		return r.out, nil
	}
	// The helper's definitions of the selection's names, where it runs:
	// asked before the prompt is built, within verify.DefinitionTimeout.
	e.precise(ctx, cfg, &t)
	prompt, err := r.buildPrompt()
	if err != nil {
		return nil, err
	}
	budget, past, err := r.ask(ctx, prompt)
	if err != nil {
		return r.out, err
	}
	res, set, err := r.send(ctx, kind, client, prompt, budget, past)
	if err != nil {
		return r.out, err
	}
	return r.out, r.deliver(kind, res, set)
}

// taskRun holds what the steps of one task's run share.
type taskRun struct {
	e           *Engine
	cfg         config.Config
	t           *Task
	instruction string // the action's instruction, the task's notes appended
	sink        *redactingSink
	out         *Outcome
}

// buildPrompt lays out the task's prompt in the engine's prompt cache.
func (r *taskRun) buildPrompt() (*cache.Prompt, error) {
	t, a := r.t, r.t.Action
	prompt, err := r.e.prompts.Build(cache.Request{
		Project:       t.Project,
		Documents:     append(append([]cache.Document(nil), t.Context...), t.Active),
		Active:        t.Active.Path,
		Volatile:      t.Volatile,
		ExcerptActive: t.ExcerptActive,
		ContextBudget: t.ContextBudget,
		Selection:     t.Selection,
		Diagnostics:   t.Diagnostics,
		Action:        a.Name,
		Instruction:   r.instruction,
		Model:         a.Model,
		// The one source of the TTL: the prompt's layout, the price of
		// its cache writes and prompt_cache_options.ttl all follow it.
		TTL: r.cfg.CacheTTLDuration(),
	})
	if err != nil {
		return nil, fmt.Errorf("building the prompt: %w", err)
	}
	return prompt, nil
}

// ask fits the answer's budget into the model's window beside prompt (a
// smaller one is said on the sink) and asks the budgets whether prompt may
// be sent. It returns the answer's token budget and whether the user
// agreed to pass a budget.
func (r *taskRun) ask(ctx context.Context, prompt *cache.Prompt) (budget int, past bool, err error) {
	a := r.t.Action
	budget, note, err := fitWindow(prompt.EstimatedTokens, a.MaxCompletionTokens)
	if err != nil {
		return 0, false, err
	}
	if note != "" {
		r.e.log.Info(note, "action", a.Name)
		r.sink.Status(note)
	}
	// The budgets: a spent one, a request whose estimate would pass what
	// is left of one, or one estimated above confirmAbove asks the user
	// first; "Cancel" sends nothing. This is before the queue: each
	// request reserves its estimate when it is sent (streamingCompleter.
	// reserve), and asks then if, meanwhile, it no longer fits. A "Send"
	// to passing a budget covers the action's tool rounds and its retry.
	// The answer is counted as long as the action's recent answers were
	// (provider.Ledger.ExpectedOutput), and the question says so.
	exp := r.e.ledger.ExpectedOutput(a.Name, a.Model, budget)
	past, err = r.e.ledger.Ask(ctx, prompt.EstimatedTokens, provider.Estimate(r.cfg, a.Model, prompt, exp.Tokens), exp.Basis, r.e.confirmFor(ctx))
	if err != nil {
		return 0, false, err
	}
	return budget, past, nil
}

// send streams prompt to the model and runs its tool rounds over the
// task's edit set, shaped by kind; the stream slot is given back before it
// returns. It returns the loop's result and the edit set; on an error, the
// outcome keeps what kind shows of the answer.
func (r *taskRun) send(ctx context.Context, kind resultKind, client *model.Client, prompt *cache.Prompt, budget int, past bool) (*tools.LoopResult, *patch.EditSet, error) {
	e, cfg, t, a, sink, out := r.e, r.cfg, r.t, r.t.Action, r.sink, r.out
	key, _ := cfg.Key()
	// The files the prompt holds: what this task asked for, and what the
	// stable part still shows of earlier ones (sent again, from the cache).
	call := &provider.Call{Surface: a.Name, Files: provider.Held(prompt), Key: key}
	effort, _ := config.EffortFor(a.Model, a.ReasoningEffort) // kimi-k3: max only
	req := &model.Request{
		Model:               a.Model,
		Messages:            provider.Messages(prompt.Messages),
		ReasoningEffort:     string(effort),
		MaxCompletionTokens: budget,
		Tools:               e.tools,
		ToolChoice:          model.ToolChoiceAuto,
		PromptCache:         model.ImplicitCache(ttlName(prompt.TTL)),
	}
	set := patch.NewEditSet(t.Files, patch.Options{AllowBrokenGo: cfg.AllowInvalidGo, Document: t.Active.Path})
	exec := tools.NewExecutor(set, e.log).RedactWith(sink.r) // no key in a tool result either
	sc := &streamingCompleter{e: e, client: client, sink: sink, prompt: prompt, out: out, rec: call, exec: exec,
		waitLimit: cmp.Or(cfg.WaitTimeout, model.DefaultWaitTimeout),
		room:      windowRoom(prompt.EstimatedTokens), repairFrom: -1, cfg: cfg, past: past}
	defer sc.release()
	lopts := tools.LoopOptions{MaxRounds: tools.MaxRounds, DiffRetries: 1}
	kind.shape(r, req, &lopts, set, sc)
	res, err := tools.Loop(ctx, sc, req, exec, lopts)
	if err != nil && req.ResponseFormat != nil && formatRefused(err) {
		// An endpoint without structured output that says so: asked once
		// more without it, its plain answer is read leniently.
		e.log.Info("the endpoint refused response_format; asking again without it", "error", err)
		req.ResponseFormat = nil
		res, err = tools.Loop(ctx, sc, req, exec, lopts)
	}
	out.Rounds = sc.rounds
	// A job cancelled during its check is not an unverified edit: it is
	// no edit.
	if out.Verification != nil && err == nil && ctx.Err() == nil {
		e.verifyCounts.add(out.Verification)
	}
	// The model's work is over: free the stream slot before the edit is
	// checked and applied.
	sc.release()
	if err != nil {
		kind.failed(r, sc)
		return nil, nil, err
	}
	return res, set, nil
}

// deliver makes the outcome of the model's final answer: its text (key
// struck) and the edits redone after a failure, then what kind makes of it.
func (r *taskRun) deliver(kind resultKind, res *tools.LoopResult, set *patch.EditSet) error {
	r.out.Text = r.sink.redact(res.Final.Content)
	for _, f := range res.Failed {
		if f.Resolved {
			r.out.Redone = append(r.out.Redone, r.sink.redact(f.String()))
		}
	}
	return kind.deliver(r, set)
}

// resultKind is all a run does that depends on its action's result kind
// (config.ResultExplain, ResultEdit, ResultReview): run's steps are the
// same for every kind, and call these at theirs.
type resultKind interface {
	// stored answers the task from what was kept, without the model:
	// true when r.out is complete.
	stored(r *taskRun) bool
	// shape sets what the kind asks of the model call: the request's tool
	// choice and format, the loop's diff and verification rounds, whether
	// a cut-off answer is asked once more.
	shape(r *taskRun, req *model.Request, lopts *tools.LoopOptions, set *patch.EditSet, sc *streamingCompleter)
	// failed keeps in r.out what is shown of an answer that ended in an
	// error.
	failed(r *taskRun, sc *streamingCompleter)
	// deliver makes r.out of the model's final answer (r.out.Text) and the
	// edit set its tool calls made.
	deliver(r *taskRun, set *patch.EditSet) error
}

// resultKindOf is the resultKind of an action's result, a run's own (the
// explanation's keeps its store key between the steps). config makes no
// action of another result; the edit's steps are the default, as before.
func resultKindOf(result config.Result) resultKind {
	switch result {
	case config.ResultExplain:
		return &explainResult{}
	case config.ResultReview:
		return reviewResult{}
	default:
		return editResult{}
	}
}

// explainResult is an explanation: Markdown, served from the explanation
// store while its key (model, instruction, file, selection, text) holds.
type explainResult struct {
	key string // the store's key, "" without a store
}

// stored serves an unchanged explanation from the store, streamed to the
// sink as the model's answer would be.
func (k *explainResult) stored(r *taskRun) bool {
	if r.e.explains == nil {
		return false
	}
	t := r.t
	k.key = ExplanationKey(t.Action.Model, r.instruction, t.Active.Path, t.selectedText(), t.Active.Text)
	text, file, ok := r.e.explains.Lookup(k.key)
	if !ok {
		return false
	}
	r.out.Text, r.out.File, r.out.Cached = text, file, true
	r.sink.Content(text)
	return true
}

// shape leaves the call as it is: tools offered, no diff asked for.
func (*explainResult) shape(*taskRun, *model.Request, *tools.LoopOptions, *patch.EditSet, *streamingCompleter) {
}

// failed keeps the part of the answer that streamed.
func (*explainResult) failed(r *taskRun, sc *streamingCompleter) {
	r.out.Text = r.sink.redact(sc.partial) // shown, never stored
}

// deliver refuses an empty answer and keeps the explanation in the store.
func (k *explainResult) deliver(r *taskRun, _ *patch.EditSet) error {
	if strings.TrimSpace(r.out.Text) == "" {
		return errors.New("the model returned an empty answer")
	}
	if k.key != "" {
		file, err := r.e.explains.Store(k.key, r.t.title("explanation"), r.out.Text)
		if err != nil {
			r.e.log.Warn("explanation not kept", "error", err)
		}
		r.out.File = file
	}
	return nil
}

// editResult is an edit: the edit set of the model's tool calls and its
// reply's diff, verified by the language's helper where it runs.
type editResult struct{}

// stored: an edit is never served from a store.
func (editResult) stored(*taskRun) bool { return false }

// shape asks for a diff in the reply, a cut-off answer once more, and
// verification with one repair round when the helper runs (warmed while
// the model writes).
func (editResult) shape(r *taskRun, _ *model.Request, lopts *tools.LoopOptions, set *patch.EditSet, sc *streamingCompleter) {
	sc.edit = true
	lopts.ReplyDiff = true
	if r.e.verifying(r.cfg) {
		if r.t.URI != "" {
			r.e.verifier.Warm(r.t.URI) // loads while the model writes
		}
		lopts.Verify = r.e.verifyHook(r.cfg, set, sc, r.sink, r.out)
		lopts.Repairs = 1
	}
}

// failed keeps nothing of a failed edit's answer.
func (editResult) failed(*taskRun, *streamingCompleter) {}

// deliver checks the edit set: no change is ErrNoChange (the model's reason
// kept as a document), an edit writing the API key is refused.
func (editResult) deliver(r *taskRun, set *patch.EditSet) error {
	r.sink.Status("checking the edit")
	changes, err := set.Changes()
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		if strings.TrimSpace(r.out.Text) != "" && r.e.explains != nil {
			// The model said why it changed nothing: keep its answer as a
			// document the editor can open (it may be long).
			t := r.t
			file, err := r.e.explains.Store(ExplanationKey(t.Action.Model, "answer: "+r.instruction, t.Active.Path, t.selectedText(), r.out.Text), t.title("answer"), r.out.Text)
			if err != nil {
				r.e.log.Warn("answer not kept", "error", err)
			}
			r.out.File = file
		}
		return ErrNoChange
	}
	for _, c := range changes {
		if r.sink.holdsKey(c.After) && !r.sink.holdsKey(c.Before) {
			return fmt.Errorf("%w: the edit of %s writes your API key into the file", ErrKeyInEdit, c.Path)
		}
	}
	r.out.Changes = changes
	return nil
}

// reviewResult is a review: findings, in structured output.
type reviewResult struct{}

// stored: a review is never served from a store.
func (reviewResult) stored(*taskRun) bool { return false }

// shape asks for the findings in structured output; the tools stay listed
// (they are part of the cached prefix) but are not called. A cut-off
// answer is asked once more.
func (reviewResult) shape(_ *taskRun, req *model.Request, _ *tools.LoopOptions, _ *patch.EditSet, sc *streamingCompleter) {
	sc.edit = true
	req.ToolChoice, req.ResponseFormat = model.ToolChoiceNone, reviewFormat()
}

// failed keeps nothing of a failed review's answer.
func (reviewResult) failed(*taskRun, *streamingCompleter) {}

// deliver reads the findings from the answer.
func (reviewResult) deliver(r *taskRun, _ *patch.EditSet) error {
	return reviewOutcome(r.out, r.t, r.cfg.Review.MaxFindings)
}

// ErrKeyInEdit: the model's edit would write the API key into a file (the
// provider echoed it); the edit is refused.
var ErrKeyInEdit = errors.New("edit refused")

// streamingCompleter is the tools.Completer of a task: it streams each
// round's reply to the sink as it arrives, checks how it ended, and
// accounts for its usage.
type streamingCompleter struct {
	e         *Engine
	client    *model.Client
	sink      *redactingSink
	prompt    *cache.Prompt
	rec       *provider.Call  // for the request record
	exec      *tools.Executor // the file text its tool results sent, for the record
	out       *Outcome
	edit      bool          // an edit action: a cut-off answer is asked once more
	waitLimit time.Duration // waitTimeout, for the waiting notice
	room      int           // the largest output budget the context window leaves
	rounds    int
	retried   bool   // the one retry with a larger budget was made
	partial   string // the last reply's answer text, complete or not
	lastIn    int    // the last request's prompt tokens
	slot      func() // gives the stream slot back; nil when none is held
	queuing   bool   // a "queued" status was shown
	// repairFrom is the number of rounds made before the repair round
	// (-1 when none was asked for): the usage of later rounds is the
	// repair's.
	repairFrom int
	// repairNote says what the repair round repairs ("repairing: gopls:
	// 1 new error: undefined: x"), kept in view from its first call on.
	repairNote string
	cfg        config.Config // the prices of the estimates
	// past: the user answered Send to passing a budget (or the command
	// line, which is not asked): the task's requests hold their estimates
	// without asking again.
	past bool
	// conversation is set for a turn of a conversation (Engine.Converse):
	// its prompt is no built prompt of the session, so every request is
	// recorded as a follow-up; base is the number of the prompt's
	// messages (those the estimate of a later round starts after).
	conversation bool
	base         int
	// reads, if set, lists the files whose text the surface's own tools
	// carried (Engine.Converse), for the record.
	reads func() []tools.FileRead
	// costUSD sums the priced cost of the requests made.
	costUSD float64
}

// acquire takes a stream slot from the engine's gate, once per task: the
// tool rounds of one task never hold two.
func (c *streamingCompleter) acquire(ctx context.Context) error {
	if c.slot != nil || c.e.gate == nil {
		return nil
	}
	release, err := c.e.gate.Acquire(ctx, func(ahead int) {
		c.queuing = true
		c.sink.Status(fmt.Sprintf("queued (%d ahead)", ahead))
	})
	if err != nil {
		return err
	}
	if c.queuing {
		c.sink.Status("asking " + c.out.Model + "…")
	}
	c.slot = release
	return nil
}

func (c *streamingCompleter) release() {
	if c.slot != nil {
		c.slot()
		c.slot = nil
	}
}

func (c *streamingCompleter) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := c.acquire(ctx); err != nil {
		return nil, err
	}
	if c.rounds > 0 {
		c.sink.Round(c.repairNote)
		if c.repairNote == "" || c.rounds > c.repairFrom {
			c.sink.Status(fmt.Sprintf("round %d: sending tool results", c.rounds+1))
		}
	}
	for {
		resp, err := c.call(ctx, req)
		if err == nil {
			err = finished(resp, req.MaxCompletionTokens)
		}
		// An edit cut off at its budget is worth nothing: ask once more
		// with a larger one (bounded, see retryBudget). An explanation is
		// shown as it is, and said to be cut off.
		if c.edit && !c.retried && (errors.Is(err, model.ErrCutOff) || errors.Is(err, model.ErrNoAnswer)) {
			if next := retryBudget(req.MaxCompletionTokens, c.room); next > 0 {
				c.retried = true
				msg := fmt.Sprintf("the answer was cut off at maxCompletionTokens (%d); asking once more with %d", req.MaxCompletionTokens, next)
				c.e.log.Info(msg, "model", req.Model)
				c.sink.Status(msg)
				req.MaxCompletionTokens = next // later rounds keep it
				continue
			}
		}
		return resp, err
	}
}

// finished tells whether a reply that streamed to its end is complete:
// an answer, or tool calls to run.
func finished(resp *model.Response, budget int) error {
	m := resp.Message
	if resp.FinishReason == model.FinishLength && strings.TrimSpace(m.Content) == "" && len(m.ToolCalls) == 0 {
		return fmt.Errorf("%w (max_completion_tokens %d)", model.ErrNoAnswer, budget)
	}
	return model.CheckFinish(resp.FinishReason, budget)
}

// call sends one request, streams its reply to the sink and records it:
// its estimate is reserved against the budgets right before it is sent
// (reserve) and settled with its real cost when it ends.
func (c *streamingCompleter) call(ctx context.Context, req *model.Request) (*model.Response, error) {
	c.rounds++
	res, err := c.reserve(ctx, req)
	if err != nil {
		c.rounds--
		return nil, err
	}
	defer res.Release() // a panic or an early return never leaks it
	resp, err := c.e.stream(ctx, c.client, req, c.sink, c.waitLimit, c.rec)
	c.sink.flush()
	a := c.account(req, resp)
	c.costUSD += a.InputCostUSD + a.OutputCostUSD
	done := err
	if done == nil && resp != nil {
		done = finished(resp, req.MaxCompletionTokens)
	}
	c.e.ledger.Settle(res, c.recorded(), req.Model, a, done)
	if resp != nil {
		c.partial = resp.Message.Content
	}
	return resp, err
}

// reserve holds the estimate of the request about to be sent (its stream
// slot taken) against the budgets. When it does not fit what is left —
// other requests in flight hold the rest, or spent it while this one
// waited for its slot — the user is asked (the same question as before the
// queue; the slot is given back while they answer): "Cancel", or no
// answer, sends nothing (ErrNotSent). A "Send" to passing a budget holds
// the estimate whatever is left, for the task's later rounds too.
func (c *streamingCompleter) reserve(ctx context.Context, req *model.Request) (*spend.Reservation, error) {
	tokens, usd, basis := c.estimate(req)
	for {
		if c.past {
			return c.e.ledger.Hold(usd), nil
		}
		if r, ok := c.e.ledger.Reserve(usd); ok {
			return r, nil
		}
		held := c.slot != nil
		c.release()
		past, err := c.e.ledger.AskBudget(ctx, tokens, usd, basis, c.e.confirmFor(ctx))
		if err != nil {
			return nil, err
		}
		c.past = past
		if held {
			if err := c.acquire(ctx); err != nil {
				return nil, err
			}
		}
	}
}

// estimate is the prompt tokens and the estimated cost of req, the task's
// next request: the built prompt at its predicted cache hit for the first,
// the previous request's prompt (cached) and what the rounds added for
// later ones, as account counts them; plus the output an estimate counts
// (the surface's recent answers, provider.Ledger.ExpectedOutput, within
// req's max_completion_tokens), and the basis of that count.
func (c *streamingCompleter) estimate(req *model.Request) (tokens int, usd float64, basis string) {
	in, cached := c.prompt.EstimatedTokens, c.prompt.PredictedCachedTokens
	if c.rounds > 1 {
		in += c.e.prompts.EstimateTokens(messagesText(req.Messages[min(c.baseMessages(), len(req.Messages)):]))
		cached = c.lastIn
	}
	exp := c.e.ledger.ExpectedOutput(c.rec.Surface, req.Model, req.MaxCompletionTokens)
	p, ok := provider.Prices(c.cfg)[req.Model]
	if !ok {
		return in, 0, exp.Basis
	}
	return in, spend.Estimate(p, in, cached, exp.Tokens, c.prompt.TTL == time.Hour), exp.Basis
}

// baseMessages is the number of messages of the request's prompt: what a
// later round adds comes after them.
func (c *streamingCompleter) baseMessages() int {
	if c.conversation {
		return c.base
	}
	return len(c.prompt.Messages)
}

// recorded is the request record's view of the call just made: the
// prompt's files, and those whose text a tool result carried in an earlier
// round (read_file, a refused edit's quoted lines) — every later request
// carries the tool results; a round of the
// verification's repair is recorded as surface "repair".
func (c *streamingCompleter) recorded() *provider.Call {
	repair := c.repairFrom >= 0 && c.rounds > c.repairFrom
	var reads []tools.FileRead
	if c.exec != nil {
		reads = c.exec.Reads()
	}
	if c.reads != nil {
		reads = append(reads, c.reads()...)
	}
	if len(reads) == 0 && !repair {
		return c.rec
	}
	rec := *c.rec
	if repair {
		rec.Surface = spend.SurfaceRepair
	}
	if len(reads) > 0 {
		more := make([]spend.File, len(reads))
		for i, r := range reads {
			more[i] = spend.File{Path: r.Path, Bytes: r.Bytes}
		}
		rec.Files = provider.AddFiles(c.rec.Files, more...)
	}
	return &rec
}

// account records a call's usage: the provider's, or, when the reply
// carried none, kimi-lsp's own estimate, marked as such (said once in the
// log). The first call is recorded against the built prompt, later ones
// (tool rounds, a retry) as follow-ups; all are priced for the prompt's TTL.
func (c *streamingCompleter) account(req *model.Request, resp *model.Response) cache.Accounting {
	var cu cache.Usage
	switch {
	case resp != nil && resp.Usage != nil:
		cu = provider.Usage(resp.Usage)
	case resp != nil:
		in, cached := c.prompt.EstimatedTokens, c.prompt.PredictedCachedTokens
		if c.rounds > 1 {
			// The prompt, then what the rounds added; the provider holds
			// the previous request's prompt in its cache.
			in += c.e.prompts.EstimateTokens(messagesText(req.Messages[min(c.baseMessages(), len(req.Messages)):]))
			cached = c.lastIn
		}
		cu = provider.EstimateUsage(c.e.prompts.EstimateTokens, in, cached, resp.Message)
		if resp.FinishReason == "" {
			break // cancelled or broken off before the usage came: nothing to say of the provider
		}
		c.e.noUsage.Do(func() {
			c.e.log.Info("the provider sends no usage with its replies: kimi.stats counts kimi-lsp's own token estimates for them (estimatedUsage)", "model", req.Model)
		})
	}
	cu.CacheTTL = c.prompt.TTL
	c.lastIn = cu.PromptTokens
	var err error
	var a cache.Accounting
	if c.rounds == 1 && !c.conversation {
		a, err = c.e.prompts.Record(c.prompt.Handle, cu)
	} else {
		a, err = c.e.prompts.RecordFollowUp(req.Model, cu)
	}
	if err != nil {
		c.e.log.Debug("usage not recorded", "error", err)
	}
	if c.repairFrom >= 0 && c.rounds > c.repairFrom {
		c.e.verifyCounts.repairTokens.Add(int64(cu.PromptTokens + cu.CompletionTokens))
		c.out.RepairUsage.PromptTokens += cu.PromptTokens
		c.out.RepairUsage.CachedTokens += cu.CachedTokens
		c.out.RepairUsage.CompletionTokens += cu.CompletionTokens
	}
	total := &c.out.Usage
	total.PromptTokens += cu.PromptTokens
	total.CachedTokens += cu.CachedTokens
	total.CacheWriteTokens += cu.CacheWriteTokens
	total.CompletionTokens += cu.CompletionTokens
	total.ReasoningTokens += cu.ReasoningTokens
	total.Estimated = total.Estimated || cu.Estimated
	return a
}

// stream sends req and forwards the reply to sink as it arrives. Until the
// first event, the sink hears that the call is waiting (see waiter).
func (e *Engine) stream(ctx context.Context, client *model.Client, req *model.Request, sink Sink, waitLimit time.Duration, call *provider.Call) (*model.Response, error) {
	w := startWaiter(sink, req.Model, waitLimit)
	defer w.stop()
	sent := false
	t := w.trace()
	t.Sent = func([]byte) { sent = true }
	s, err := e.ledger.Stream(ctx, client, req, t, call)
	if err != nil {
		if sent && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			// Cancelled before the reply's headers came: the provider may
			// have read the prompt already, and bill it. An empty reply is
			// accounted at kimi-lsp's estimate (streamingCompleter.account).
			return &model.Response{}, err
		}
		return nil, err
	}
	defer s.Close()
	var acc model.Accumulator
	for {
		ev, err := s.Next()
		w.stop() // the provider answered (or failed): no more waiting notices
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return &model.Response{Message: acc.Message(), FinishReason: acc.FinishReason(), Usage: acc.Usage()}, err
		}
		acc.Add(ev)
		switch ev.Kind {
		case model.EventReasoning:
			sink.Reasoning(ev.Text)
		case model.EventContent:
			sink.Content(ev.Text)
		}
	}
	return &model.Response{ID: s.ID(), Model: s.Model(), Message: acc.Message(), FinishReason: acc.FinishReason(), Usage: acc.Usage()}, nil
}

// formatRefused reports whether err is the provider refusing a request for
// its response_format (a 400 or 422 that names it): an endpoint without
// structured output.
func formatRefused(err error) bool {
	var apiErr *model.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest && apiErr.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	m := strings.ToLower(apiErr.Message)
	return strings.Contains(m, "response_format") || strings.Contains(m, "json_schema") || strings.Contains(m, "response format")
}
