package spend

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Surfaces of a Record besides the actions, which are recorded under their
// name ("explain", "fix", a user-defined name).
const (
	SurfaceCompletion = "completion"
	SurfaceNextEdit   = "nextEdit"
	SurfaceRepair     = "repair"
	SurfaceAgent      = "agent"
)

// Outcomes of a Record.
const (
	OutcomeOK        = "ok"        // the reply came whole
	OutcomeCancelled = "cancelled" // the request was cancelled (superseded, the user, shutdown)
	OutcomeCutOff    = "cut off"   // the answer stopped at max_completion_tokens
	OutcomeNoAnswer  = "no answer" // the model thought and wrote nothing
	OutcomeError     = "error"     // the provider or the connection failed
)

// Record is the metadata of one provider request. It holds no contents:
// no file text, no prompt, no answer, no key.
type Record struct {
	Time time.Time `json:"time"`
	// Surface is the action's name, or SurfaceCompletion, SurfaceNextEdit,
	// SurfaceRepair, SurfaceAgent.
	Surface string `json:"surface"`
	Model   string `json:"model"`
	// Files are the files the prompt included, workspace-relative, each
	// with the bytes of it the prompt held; MoreFiles counts those past
	// the first 100, which are not listed.
	Files     []File `json:"files"`
	MoreFiles int    `json:"moreFiles,omitempty"`
	// The provider's token counts (or the program's estimate, Estimated).
	PromptTokens  int `json:"promptTokens"`
	CachedTokens  int `json:"cachedTokens"`
	WrittenTokens int `json:"writtenTokens"`
	OutputTokens  int `json:"outputTokens"`
	// CostUSD is the request's cost at the configured prices; Unpriced is
	// set when its model has no price (CostUSD is then 0).
	CostUSD  float64 `json:"costUSD"`
	Unpriced bool    `json:"unpriced,omitempty"`
	// Estimated is set when the reply carried no usage and the counts are
	// the program's estimate.
	Estimated bool `json:"estimated,omitempty"`
	// Outcome is one of the Outcome constants.
	Outcome string `json:"outcome"`
}

// File is one file a prompt included.
type File struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
}

// Bounds of a Record's strings and lists.
const (
	maxFiles   = 100
	maxPath    = 512
	maxSurface = 80
	maxModel   = 120
	maxOutcome = 40
)

// clean returns r with its strings cut short and rid of control
// characters, negative counts and impossible costs zeroed, and at most
// maxFiles files listed.
func (r Record) clean() Record {
	r.Surface = cut(r.Surface, maxSurface)
	r.Model = cut(r.Model, maxModel)
	r.Outcome = cut(r.Outcome, maxOutcome)
	for _, n := range []*int{&r.PromptTokens, &r.CachedTokens, &r.WrittenTokens, &r.OutputTokens, &r.MoreFiles} {
		*n = max(*n, 0)
	}
	if math.IsNaN(r.CostUSD) || math.IsInf(r.CostUSD, 0) || r.CostUSD < 0 {
		r.CostUSD = 0
	}
	if len(r.Files) > maxFiles {
		r.MoreFiles += len(r.Files) - maxFiles
		r.Files = r.Files[:maxFiles]
	}
	files := make([]File, len(r.Files))
	for i, f := range r.Files {
		files[i] = File{Path: cut(filepath.ToSlash(f.Path), maxPath), Bytes: max(f.Bytes, 0)}
	}
	r.Files = files
	return r
}

// cut replaces control characters and invalid UTF-8 in s and cuts it at n
// bytes, on a rune boundary.
func cut(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// ErrNoStateDir: neither $XDG_STATE_HOME nor $HOME is set to an absolute
// path.
var ErrNoStateDir = errors.New("no state directory: neither $XDG_STATE_HOME nor $HOME is an absolute path")

// StateDir returns the program's state directory for the environment
// getenv: $XDG_STATE_HOME/kimi-lsp when it is an absolute path (the XDG
// rule: a relative one is ignored), else $HOME/.local/state/kimi-lsp (on
// Windows %LocalAppData%\kimi-lsp\state).
func StateDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "kimi-lsp"), nil
	}
	if d := getenv("LocalAppData"); filepath.IsAbs(d) && filepath.Separator == '\\' {
		return filepath.Join(d, "kimi-lsp", "state"), nil
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "kimi-lsp"), nil
	}
	return "", ErrNoStateDir
}
