package config

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
)

// Defaults and limits.
const (
	// DefaultModel answers edits (fix, rewrite, document, tests).
	DefaultModel = "kimi-k3.1-pro"
	// DefaultFastModel answers explanations.
	DefaultFastModel = "kimi-k3.1-pro-highspeed"
	// DefaultCacheTTL is the prompt-cache lifetime asked of the provider.
	DefaultCacheTTL = "5m"
	// MinWaitTimeout and MaxWaitTimeout bound the waitTimeout setting.
	MinWaitTimeout, MaxWaitTimeout = 5 * time.Second, 30 * time.Minute
	// DefaultContextMaxTokens is the prompt budget for context, in tokens:
	// what a prompt shows besides the active file, the system message and
	// the request. 10,000 makes a typical action's prompt about 16,000
	// tokens with a recall of 0.96 of the definitions a selection uses in
	// Go's own packages (bench/README.md, "Context").
	DefaultContextMaxTokens = 10000
	// DefaultMaxFileSize is the largest file, in bytes, read into a prompt.
	DefaultMaxFileSize = 1 << 20
	// DefaultMaxReportsPerSecond caps $/progress reports per job.
	DefaultMaxReportsPerSecond = 10
	// DefaultMaxConcurrentJobs is jobs.maxConcurrent's default: model
	// streams open at once; more jobs wait in a queue.
	DefaultMaxConcurrentJobs = 4
	// MaxConcurrentJobsLimit is the largest jobs.maxConcurrent accepted.
	MaxConcurrentJobsLimit = 64
	// DefaultExplainTokens is maxCompletionTokens for explanations.
	DefaultExplainTokens = 8192
	// DefaultEditTokens is maxCompletionTokens for edits: thinking counts
	// against it, and an edit's answer (a diff) can be long.
	DefaultEditTokens = 32768
	// MaxCompletionTokensLimit is the provider's upper bound.
	MaxCompletionTokensLimit = 1048576
	// WorkspaceFileName is the workspace-local file read at the root of each
	// workspace folder. It may tune actions, context, models, reasoning
	// effort, completion tokens, cacheTTL and progress, and lower the
	// budgets (never raise them); it can never set
	// apiKey or baseURL (nor webSearch, allowInvalidGo, prices, logLevel).
	WorkspaceFileName = ".kimi-lsp.toml"
)

// ErrNoAPIKey is returned by Config.Key when no API key is configured.
var ErrNoAPIKey = errors.New("no API key: set KIMI_API_KEY or kimi.apiKey in your editor settings (or apiKey in the user config file)")

// Effort is a canonical reasoning effort: low, high or max. The provider's
// aliases are accepted on input and mapped as the provider does: medium to
// high, xhigh to max, minimal and none to low (none does not turn thinking
// off).
type Effort string

// The canonical reasoning efforts.
const (
	EffortLow  Effort = "low"
	EffortHigh Effort = "high"
	EffortMax  Effort = "max"
)

// ParseEffort maps a reasoning effort or one of its aliases to its canonical
// form. The comparison ignores case and surrounding spaces.
func ParseEffort(s string) (Effort, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "low", "minimal", "none":
		return EffortLow, true
	case "high", "medium":
		return EffortHigh, true
	case "max", "xhigh":
		return EffortMax, true
	}
	return "", false
}

// Result is what an action produces.
type Result string

// The kinds of result.
const (
	ResultExplain Result = "explain" // markdown shown to the user
	ResultEdit    Result = "edit"    // changes applied through workspace/applyEdit
	ResultReview  Result = "review"  // findings shown as diagnostics (built-in Review only)
)

// Names of the built-in actions.
const (
	ActionExplain  = "explain"
	ActionFix      = "fix"
	ActionRewrite  = "rewrite"
	ActionDocument = "document"
	ActionTests    = "tests"
)

// ActionReview names Kimi: Review's action (ReviewAction). It is not in
// the action list (Actions), nor found by ActionFor: the review has its
// own command (kimi.review), whose bare name "review" is reserved.
const ActionReview = "kimi.review"

// reservedNames are the names a user action may not take, compared
// without case: the built-in actions', the review's, every other built-in
// command's (kimi.NAME: an action so named would read as that command in
// menus and keybindings) and "default" (the key of every action in
// [reasoningEffort] and the like). lsp's TestCommandNamesReserved checks
// that every command of its table is here.
var reservedNames = []string{ActionExplain, ActionFix, ActionRewrite, ActionDocument, ActionTests, "review", "default",
	"action", "cancel", "stats", "clearReview", "requests", "lastPrompt", "nextEdit.apply", "nextEdit.dismiss",
	"nextEdit.accepted"}

// Reserved reports whether name is reserved: no user action may take it.
func Reserved(name string) bool {
	for _, r := range reservedNames {
		if strings.EqualFold(name, r) {
			return true
		}
	}
	return false
}

// reservedList names the reserved names for messages.
func reservedList() string { return strings.Join(reservedNames, ", ") }

// builtins lists the built-in actions in menu order.
var builtins = []struct {
	name, title, kind string
	result            Result
}{
	{ActionExplain, "Kimi: Explain", "refactor", ResultExplain},
	{ActionFix, "Kimi: Fix", "quickfix", ResultEdit},
	{ActionRewrite, "Kimi: Rewrite", "refactor.rewrite", ResultEdit},
	{ActionDocument, "Kimi: Add documentation", "refactor.rewrite", ResultEdit},
	{ActionTests, "Kimi: Write tests", "source", ResultEdit},
}

func isBuiltin(name string) bool {
	for _, b := range builtins {
		if b.name == name {
			return true
		}
	}
	return false
}

// Action is one action with every setting resolved: the built-in ones and
// the user-defined ones of the "actions" key.
type Action struct {
	Name  string // "explain", "fix", … or the user's name
	Title string // menu title, e.g. "Kimi: Explain"
	// Kind is the code action kind. For built-ins it is a suggestion
	// (explain "refactor", fix "quickfix", rewrite and document
	// "refactor.rewrite", tests "source"); lsp may choose otherwise.
	Kind string
	// Prompt is the user's template (see Placeholders); empty for built-ins,
	// whose wording belongs to assist.
	Prompt              string
	Model               string
	ReasoningEffort     Effort
	MaxCompletionTokens int
	Result              Result
	Builtin             bool
	// Origin is the source that defined a user-defined action (the zero
	// Source, "default", for built-ins). An action from a workspace file
	// has its Title labelled with RepoLabel.
	Origin Source
}

// RepoLabel starts the title of every action a workspace file
// (.kimi-lsp.toml, shipped by a repository) defines, in place of the
// title's own "Kimi:" prefix, so that the menu shows where an action
// comes from and a repository cannot pass its action off as a built-in or
// as the user's own.
const RepoLabel = "Kimi (repo): "

// Context says what may enter a prompt besides the selection.
type Context struct {
	// MaxTokens is the token budget for context.
	MaxTokens int
	// Include says which kinds of context enter prompts.
	Include Include
	// Exclude holds globs (slash-separated, relative to a workspace folder,
	// `**` allowed) of files never put in a prompt. Globs from every source
	// accumulate.
	Exclude []string
	// MaxFileSize is the largest file, in bytes, read into a prompt.
	MaxFileSize int64
	// Secrets holds globs of secret files added to the built-in list
	// (.env*, *.pem, …); they accumulate across sources, so that a workspace
	// file can add to them but never remove the user's.
	Secrets []string
}

// Include says which kinds of context enter prompts.
type Include struct {
	OpenBuffers bool // other open buffers
	Related     bool // files related to the active one (same package, imports)
	Recent      bool // recently viewed files
}

// Progress tunes the $/progress reports of a job.
type Progress struct {
	ShowThinking        bool // report a "thinking…" line while the model reasons
	MaxReportsPerSecond int  // throttle
}

// Jobs tunes the job engine.
type Jobs struct {
	// MaxConcurrent is how many model streams may be open at once; more
	// jobs wait in a queue.
	MaxConcurrent int
}

// Budget bounds the spend, in US dollars at the configured prices; a zero
// field sets no bound. A workspace file may lower each bound (set one where
// there was none), never raise it.
type Budget struct {
	// Hourly and Daily bound what every surface together spends in the
	// local clock hour and the local day.
	Hourly, Daily float64
	// ConfirmAbove is the estimated cost of one request above which an
	// action asks first (0: it never asks).
	ConfirmAbove float64
}

// DefaultConfirmAbove is budget.confirmAbove's default, in US dollars.
const DefaultConfirmAbove = 0.10

// MaxBudget is the largest budget value accepted, in US dollars.
const MaxBudget = 1e6

// Price is a model's price in USD per million tokens.
type Price struct {
	Input      float64 // uncached input
	CachedRead float64 // input served from the prompt cache
	Write5m    float64 // input written to the cache with a 5m TTL
	Write1h    float64 // input written to the cache with a 1h TTL
	Output     float64 // output, thinking included
}

// defaultPrices are editable assumptions. Only the kimi-k3.1-pro input and
// cache prices come from the project's issue; the output price and the
// other models' prices are assumptions to be corrected in configuration.
var defaultPrices = map[string]Price{
	"kimi-k3.1-pro":           {Input: 2.00, CachedRead: 0.20, Write5m: 2.00, Write1h: 4.00, Output: 8.00},
	"kimi-k3.1-pro-highspeed": {Input: 2.00, CachedRead: 0.20, Write5m: 2.00, Write1h: 4.00, Output: 8.00},
	"kimi-k3":                 {Input: 2.00, CachedRead: 0.20, Write5m: 2.00, Write1h: 4.00, Output: 8.00},
}

// Config is the effective configuration. It is a value: copies are
// independent, and nothing in a Config is changed after it is built (the
// slices in exported fields are shared between copies and must be treated
// as read-only). Build one with Default or Load and refine it with the With
// methods, which never modify their receiver.
//
// Printing a Config with fmt or log/slog shows the redacted form; the API key
// is only available through Key or APIKey.Reveal.
type Config struct {
	APIKey Secret
	// BaseURL is the endpoint, without a trailing slash or /v1. When the
	// source that decides it gave an invalid value, BaseURL holds that
	// value as it may be shown and BaseURLError says why: nothing may be
	// sent then, to this URL, the default or its fallback.
	BaseURL   string
	Model     string // for edits
	FastModel string // for explanations
	CacheTTL  string // "5m" or "1h"
	Context   Context
	Progress  Progress
	Jobs      Jobs
	LogLevel  string // "debug", "info", "warn" or "error"
	// AllowInvalidGo lets the edit applier apply Go edits that do not parse.
	AllowInvalidGo bool
	// WebSearch offers the provider's web_search tool to the model.
	WebSearch bool
	// WaitTimeout bounds the wait for the provider to start answering a
	// request: every attempt, retry and the fallback URL (waitTimeout).
	WaitTimeout time.Duration
	// Completion tunes inline completion.
	Completion Completion
	// NextEdit tunes next-edit suggestions.
	NextEdit NextEdit
	Review   Review
	Edits    Edits
	// Budget bounds the spend (budget.*).
	Budget Budget
	// Verify configures edit verification.
	Verify Verify
	// Trust is what the user trusts (trust.folders, workspaceTrusted).
	Trust Trust

	baseURLErr *Problem          // see BaseURLError
	effort     map[string]Effort // action name or "default"
	maxTokens  map[string]int    // action name or "default"
	actions    []actionDef       // user-defined, in definition order
	prices     map[string]Price
	excludeSrc []Source // parallel to Context.Exclude
	secretsSrc []Source // parallel to Context.Secrets
	src        map[string]Source
	stack      stack
}

// actionDef is a user-defined action as written in a source.
type actionDef struct {
	name, title, kind, prompt, model string
	effort                           Effort
	maxTokens                        int
	result                           Result
	src                              Source
}

// Default returns the built-in configuration: the schema's defaults.
func Default() Config {
	c := Config{
		effort:    map[string]Effort{},
		maxTokens: map[string]int{},
		prices:    make(map[string]Price, len(defaultPrices)),
		src:       map[string]Source{},
	}
	for _, e := range schema {
		if e.dflt != nil {
			e.set(&c, e.dflt)
		}
	}
	for m, p := range defaultPrices {
		c.prices[m] = p
	}
	return c
}

// Review configures Kimi: Review.
type Review struct {
	// MaxFindings bounds the findings kept per file (review.maxFindings).
	MaxFindings int
}

// Edits configures how model edits are sent to the editor.
type Edits struct {
	// Confirm is when an edit is sent for confirmation hunk by hunk
	// (edits.confirm): ConfirmNever, ConfirmMultiFile or ConfirmAlways.
	Confirm string
}

// The values of edits.confirm.
const (
	ConfirmNever     = "never"
	ConfirmMultiFile = "multiFile"
	ConfirmAlways    = "always"
)

// ReviewAction is the action Kimi: Review runs: the edit model with the
// edit actions' effort and budget (a review is read as carefully as an
// edit is written).
func (c Config) ReviewAction() Action {
	a := Action{Name: ActionReview, Title: "Kimi: Review", Kind: "source", Result: ResultReview, Builtin: true}
	a.Model, _ = c.actionModel(ResultEdit, actionDef{})
	a.ReasoningEffort, _ = c.actionEffort(ActionReview, ResultEdit, actionDef{})
	a.ReasoningEffort, _ = EffortFor(a.Model, a.ReasoningEffort)
	a.MaxCompletionTokens, _ = c.actionTokens(ActionReview, ResultEdit, actionDef{})
	return a
}

// DefaultMaxFindings is review.maxFindings' default.
const DefaultMaxFindings = 20

// Key returns the API key, or ErrNoAPIKey when none is configured.
func (c Config) Key() (string, error) {
	if !c.APIKey.IsSet() {
		return "", ErrNoAPIKey
	}
	return c.APIKey.Reveal(), nil
}

// FallbackURL returns the endpoint to retry on after a 5xx from BaseURL:
// model.DefaultFallbackURL when BaseURL is the default endpoint, and "" when the
// user chose another endpoint (there is then no fallback) or when BaseURL
// is invalid (BaseURLError).
func (c Config) FallbackURL() string {
	if c.baseURLErr != nil {
		return ""
	}
	return model.FallbackFor(c.BaseURL)
}

// ErrInvalidBaseURL is wrapped by the error of BaseURLError.
var ErrInvalidBaseURL = errors.New("invalid baseURL")

// BaseURLError returns nil when BaseURL may be used, and otherwise an error
// (wrapping ErrInvalidBaseURL) naming the invalid value, the source that
// gave it and what is wrong. The source with the highest precedence that
// sets baseURL decides it, valid or not: an invalid value is never replaced
// by a lower source's or the default, so that code and key are not sent to
// a host the user did not choose. Every caller that sends a request checks
// it first.
func (c Config) BaseURLError() error {
	if c.baseURLErr == nil {
		return nil
	}
	return baseURLError{c.baseURLErr}
}

// baseURLError is BaseURLError's error.
type baseURLError struct{ p *Problem }

func (e baseURLError) Error() string {
	return fmt.Sprintf("nothing was sent: the baseURL from %s cannot be used: %s (fix it, or remove it for the default endpoint)",
		e.p.Source, e.p.Message)
}

func (e baseURLError) Is(target error) bool { return target == ErrInvalidBaseURL }

// CacheTTLDuration returns CacheTTL as a duration (5m or 1h). It is the
// one reading of the setting: the request's prompt_cache_options.ttl and the
// prompt session's layout and prices all follow it.
func (c Config) CacheTTLDuration() time.Duration {
	if c.CacheTTL == "1h" {
		return time.Hour
	}
	return 5 * time.Minute
}

// Level returns LogLevel as a slog level.
func (c Config) Level() slog.Level {
	switch c.LogLevel {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// Actions returns every action, resolved: the built-ins in menu order
// (explain, fix, rewrite, document, tests), then the user-defined ones in
// the order they were first defined.
func (c Config) Actions() []Action {
	out := make([]Action, 0, len(builtins)+len(c.actions))
	for _, b := range builtins {
		a, _ := c.ActionFor(b.name)
		out = append(out, a)
	}
	for _, d := range c.actions {
		a, _ := c.ActionFor(d.name)
		out = append(out, a)
	}
	return out
}

// ActionFor resolves the action called name (built-in or user-defined) and
// reports whether it exists.
//
// Model: the action's own model, else FastModel for explanations and Model
// for edits. Reasoning effort and completion tokens: the entry for the
// action's name in the reasoningEffort (maxCompletionTokens) table, else the
// action's own value, else the table's "default" entry (which a single value
// for all actions sets), else low and DefaultExplainTokens for explanations,
// high and DefaultEditTokens for edits. A model that accepts one effort only
// gets that one, whatever was configured (see EffortFor).
func (c Config) ActionFor(name string) (Action, bool) {
	var a Action
	var own actionDef
	found := false
	for _, b := range builtins {
		if b.name == name {
			a = Action{Name: b.name, Title: b.title, Kind: b.kind, Result: b.result, Builtin: true}
			found = true
		}
	}
	if !found {
		i := c.actionIndex(name)
		if i < 0 {
			return Action{}, false
		}
		own = c.actions[i]
		a = Action{Name: own.name, Title: own.title, Kind: own.kind, Prompt: own.prompt, Result: own.result, Origin: own.src}
		if own.src.Kind == FromWorkspaceFile {
			a.Title = RepoLabel + bareTitle(own.title, own.name)
		}
	}
	a.Model, _ = c.actionModel(a.Result, own)
	a.ReasoningEffort, _ = c.actionEffort(name, a.Result, own)
	a.ReasoningEffort, _ = EffortFor(a.Model, a.ReasoningEffort)
	a.MaxCompletionTokens, _ = c.actionTokens(name, a.Result, own)
	return a, true
}

func (c Config) actionIndex(name string) int {
	return slices.IndexFunc(c.actions, func(d actionDef) bool { return d.name == name })
}

func (c Config) actionModel(r Result, own actionDef) (string, Source) {
	switch {
	case own.model != "":
		return own.model, own.src
	case r == ResultExplain:
		return c.FastModel, c.srcOf("fastModel")
	}
	return c.Model, c.srcOf("model")
}

func (c Config) actionEffort(name string, r Result, own actionDef) (Effort, Source) {
	if e, ok := c.effort[name]; ok {
		return e, c.srcOf("reasoningEffort." + name)
	}
	if own.effort != "" {
		return own.effort, own.src
	}
	if e, ok := c.effort["default"]; ok {
		return e, c.srcOf("reasoningEffort.default")
	}
	if r == ResultExplain {
		return EffortLow, defaultSource
	}
	return EffortHigh, defaultSource
}

// EffortFor returns the reasoning effort a request to modelName must
// carry: e, unless the model accepts one effort only, which is then
// returned with forced set. Seed 003: "kimi-k3 仅支持 max" (kimi-k3 supports
// max only), so kimi-k3 always gets max.
func EffortFor(modelName string, e Effort) (_ Effort, forced bool) {
	if only, ok := model.RequiredEffort(modelName); ok && Effort(only) != e {
		return Effort(only), true
	}
	return e, false
}

func (c Config) actionTokens(name string, r Result, own actionDef) (int, Source) {
	if n, ok := c.maxTokens[name]; ok {
		return n, c.srcOf("maxCompletionTokens." + name)
	}
	if own.maxTokens != 0 {
		return own.maxTokens, own.src
	}
	if n, ok := c.maxTokens["default"]; ok {
		return n, c.srcOf("maxCompletionTokens.default")
	}
	if r == ResultExplain {
		return DefaultExplainTokens, defaultSource
	}
	return DefaultEditTokens, defaultSource
}

// PriceFor returns the price of model and whether one is configured.
func (c Config) PriceFor(model string) (Price, bool) {
	p, ok := c.prices[model]
	return p, ok
}

// Prices returns a copy of the price table, by model.
func (c Config) Prices() map[string]Price {
	out := make(map[string]Price, len(c.prices))
	for m, p := range c.prices {
		out[m] = p
	}
	return out
}

// srcOf returns where key's value came from (default when no source set it).
func (c Config) srcOf(key string) Source {
	if s, ok := c.src[key]; ok {
		return s
	}
	return defaultSource
}
