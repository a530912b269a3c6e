package cache

import "time"

// Message is one chat message of a prompt, in the order it is sent. Role is
// "system" or "user"; assist converts it to its model message type.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Document is a text the prompt may show: an open buffer or a related file,
// whole, or one declaration of a file (a snippet: Part is set).
type Document struct {
	// Path is workspace-relative and slash-separated ("net/http/server.go").
	// It is what the model sees; an absolute path is refused, as it would
	// leak the user's directory layout and differ between machines.
	Path string
	// Part is "" for a whole file; for a snippet, the declaration it shows
	// ("func NewServer", "method Server.Start"). Path and Part together
	// identify a document: a snippet whose text changes is edited in place
	// like a file, another declaration of the same file is another
	// document.
	Part string
	// Line is the 1-based line of the file where a snippet's Text begins
	// (shown to the model); 0 or 1 for a whole file.
	Line int
	// Language is the language id ("go"), shown to the model.
	Language string
	// Text is the full current text.
	Text string
	// Version is the editor's version of the buffer (0 for files on disk).
	Version int32
	// LastEdited orders documents by their last edit: a monotonic sequence
	// or Unix nanoseconds, larger meaning more recent. The prompt shows the
	// least recently edited first.
	LastEdited int64
	// Base, when HasBase is set, is an earlier text of a document of the
	// active file (Request.Active): the whole file, or one of its parts
	// (a page of it, a declaration). It is the text the document's block
	// shows whenever the session lays that block out afresh (the
	// session's first request, a cold cache, a new project block, a
	// rebase, the document's first appearance), the edit log then
	// beginning with the change from Base to Text. A prompt made afresh so
	// still shows the edits made since Base. A change from Base larger than
	// half the log's limit (Config.MaxLogTokens) is not shown: the block
	// shows Text. Ignored for other files' documents and for the whole
	// active file with Request.ExcerptActive (its block is not shown).
	Base    string
	HasBase bool
}

// Project is the rarely changing context of the workspace. Any change to it
// rewrites the whole stable part, so the caller must pass the same values
// (languages in the same order too) from request to request.
type Project struct {
	// Name is the workspace name (a folder name, never a path).
	Name string
	// Languages are the main languages, most used first.
	Languages []string
	// Conventions is free text: style rules, build and test commands.
	Conventions string
}

// Severity of a diagnostic, as LSP numbers them.
type Severity int

// Diagnostic severities.
const (
	SeverityError Severity = 1 + iota
	SeverityWarning
	SeverityInformation
	SeverityHint
)

// String returns the severity's name as the prompt shows it ("error").
func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInformation:
		return "info"
	case SeverityHint:
		return "hint"
	}
	return "diagnostic"
}

// Diagnostic is a problem reported in the active document.
type Diagnostic struct {
	// StartLine and EndLine are 0-based, inclusive.
	StartLine, EndLine int
	Severity           Severity
	// Source names the reporting tool ("compiler", "staticcheck"); optional.
	Source  string
	Message string
}

// Selection is a byte range [Start, End) in the active document's text; an
// empty range is the cursor.
type Selection struct {
	Start, End int
}

// Request is everything one prompt is built from.
type Request struct {
	// Project is the workspace context.
	Project Project
	// Documents are the open buffers, related files and snippets that the
	// stable part shows, in any order, each (Path, Part) once; one of them
	// is the active document, whole.
	Documents []Document
	// Active is the Path of the document the action applies to (the one
	// with an empty Part).
	Active string
	// ExcerptActive shows the active document by parts only: its whole
	// text serves the request block (the selection and the lines around
	// it), and the stable part shows the Documents with its Path and a
	// Part (its header, the declarations around the selection), as a file
	// too large to show whole is.
	ExcerptActive bool
	// Volatile are documents (snippets, mostly) that only this request
	// needs: the definitions the selection uses that Documents do not
	// show. They go in the <context> block, after the cached prefix;
	// but one the stable part already shows with the same text is not
	// repeated (and stays there, as asked for), and when the build
	// rewrites the stable part anyway they join it, at its end (see the
	// package comment: the ledger).
	Volatile []Document
	// ContextBudget, if positive, bounds the stable part's documents other
	// than the active one (and the edit log), in tokens, for this request:
	// the prompt's budget is then this plus the system message, the tools,
	// the project, the active file and the request block. Zero means
	// Config.BudgetTokens for the whole prompt.
	ContextBudget int
	// Selection is the range the action applies to, in Active's text.
	Selection Selection
	// Diagnostics are those of the active document worth showing.
	Diagnostics []Diagnostic
	// Action names the action ("explain", "fix", a user-defined name).
	Action string
	// Instruction is the action-specific instruction text. It goes in the
	// volatile tail, never in the system message.
	Instruction string
	// Model is the model the prompt is for; it selects the price.
	// Empty means Config.Model.
	Model string
	// TTL is the cache lifetime this request asks for (5m or 1h); zero
	// means Config.TTL. The caller sends Prompt.TTL on the wire, so that
	// the request, the layout's idea of a cold cache and the price of its
	// cache writes all follow the one setting, even when it changes
	// between requests.
	TTL time.Duration
	// Now is the time of the request; zero means Config.Now().
	Now time.Time
}

// Usage is the provider's accounting of one request, as reported in the
// reply's usage object.
type Usage struct {
	// PromptTokens counts every input token: plain, cached and written.
	PromptTokens int `json:"promptTokens"`
	// CachedTokens (prompt_tokens_details.cached_tokens) were read from
	// the cache.
	CachedTokens int `json:"cachedTokens"`
	// CacheWriteTokens (prompt_tokens_details.cache_write_tokens) were
	// written to the cache; they are not billed again as plain input.
	CacheWriteTokens int `json:"cacheWriteTokens"`
	// CompletionTokens counts the output, reasoning included.
	CompletionTokens int `json:"completionTokens"`
	// ReasoningTokens (completion_tokens_details.reasoning_tokens) is the
	// reasoning part of CompletionTokens.
	ReasoningTokens int `json:"reasoningTokens"`
	// Estimated marks counts that are the caller's own estimate, because
	// the reply carried no usage: they are priced and counted in
	// Stats.EstimatedUsage, but never correct the token estimator.
	Estimated bool `json:"estimated,omitempty"`
	// CacheTTL is the cache lifetime the request asked for, which prices
	// its cache writes; zero means the TTL of the prompt it continues
	// (Record) or Config.TTL (RecordFollowUp).
	CacheTTL time.Duration `json:"-"`
}

// Handle identifies a built prompt, to Record its usage once the reply came.
type Handle uint64
