package agent

import (
	"context"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist"
)

// Client is the editor as a turn sees it (lsp/acp implements it over
// session/update and session/request_permission). Thought and Message are
// called from the stream-reading goroutine and must not block for long.
type Client interface {
	// Thought receives the model's reasoning as it arrives.
	Thought(text string)
	// Message receives the answer as it arrives.
	Message(text string)
	// ToolCall reports a tool call: its first report (Start) and each
	// change of its status or content after.
	ToolCall(ctx context.Context, t ToolCall)
	// Permission asks the user whether the tool call t (an edit, its
	// diffs in t.Diffs; a command) may proceed, offering AllowAlways when
	// always is set; Reject, or an error, lets nothing happen.
	Permission(ctx context.Context, t ToolCall, always bool) (Answer, error)
}

// FS is the editor's file access (ACP's fs/read_text_file and
// fs/write_text_file): paths are absolute.
type FS interface {
	ReadTextFile(ctx context.Context, path string) (string, error)
	WriteTextFile(ctx context.Context, path, text string) error
}

// ToolKind is what a tool call does, for the editor's icon.
type ToolKind string

// The kinds (ACP's).
const (
	KindRead   ToolKind = "read"
	KindEdit   ToolKind = "edit"
	KindDelete ToolKind = "delete"
	KindSearch ToolKind = "search"
	KindRun    ToolKind = "execute"
	KindOther  ToolKind = "other"
)

// ToolStatus is where a tool call stands.
type ToolStatus string

// The statuses (ACP's).
const (
	StatusPending    ToolStatus = "pending"
	StatusInProgress ToolStatus = "in_progress"
	StatusCompleted  ToolStatus = "completed"
	StatusFailed     ToolStatus = "failed"
)

// ToolCall is one tool call as the user sees it.
type ToolCall struct {
	// ID is unique in the session.
	ID string
	// Start is set on the call's first report.
	Start  bool
	Title  string
	Kind   ToolKind
	Status ToolStatus
	// Locations are the files it touches (absolute paths), Line from 1
	// (0: none).
	Locations []Location
	// Diffs are an edit's changes, one per file.
	Diffs []Diff
	// Text is what the call returned, or why it failed (the API key
	// struck, paths workspace-relative).
	Text string
}

// Location is a file a tool call touches.
type Location struct {
	Path string
	Line int
}

// Diff is one file's change: OldText is nil for a created file; NewText is
// "" for a deleted one. Unified is the same change as a unified diff.
type Diff struct {
	Path    string
	OldText *string
	NewText string
	Unified string
	Deleted bool
}

// Result is how a turn ended.
type Result struct {
	Stop StopReason
	// Usage is the turn's usage and cost; Spend the spend against the
	// budgets after it.
	Usage Usage
}

// Usage is a turn's usage and cost.
type Usage struct {
	Model string
	// PromptTokens, CachedTokens (of them, read from the provider's
	// cache), OutputTokens and ReasoningTokens (of them) sum the turn's
	// requests; Estimated is set when some reply carried no usage.
	PromptTokens, CachedTokens, OutputTokens, ReasoningTokens int
	Estimated                                                 bool
	// Requests counts the turn's model requests.
	Requests int
	// CostUSD is the turn's priced cost; SessionUSD the session's so far.
	CostUSD, SessionUSD float64
	// HourUSD and DayUSD are the spend of the calendar hour and day
	// (every kimi-lsp process sharing the record), HourLimit and DayLimit
	// their budgets (0: none).
	HourUSD, HourLimit, DayUSD, DayLimit float64
	// ContextWindow is the model's window, for the editor's gauge.
	ContextWindow int
}

// sink passes a turn's stream to the client.
type sink struct {
	c    Client
	note *string // the last Round note said
}

var _ assist.Sink = sink{}

func sinkFor(c Client) sink { return sink{c: c, note: new(string)} }

func (s sink) Reasoning(delta string) { s.c.Thought(delta) }
func (s sink) Content(delta string)   { s.c.Message(delta) }

// Status lines ("verifying the edit") are the engine's; the tool calls
// say the same to the user.
func (s sink) Status(string) {}

// Round: an ACP client keeps every chunk of the turn, so a new model call
// simply goes on streaming; a repair's note ("repairing: gopls found 1
// new error: …"), given again at each call of the repair, is said once,
// as a thought.
func (s sink) Round(note string) {
	if note != "" && note != *s.note {
		*s.note = note
		s.c.Thought("\n" + note + "\n")
	}
}

// oneLine cuts text to its first line, at most n bytes.
func oneLine(text string, n int) string {
	text, _, _ = strings.Cut(strings.TrimSpace(text), "\n")
	if len(text) > n {
		text = text[:n] + "…"
	}
	return text
}
