package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
)

// SourceKind says which kind of source a setting came from. The kinds are
// listed in increasing precedence, except that a workspace file can set only
// some keys (see WorkspaceFileName).
type SourceKind int

// The kinds of source, in increasing precedence.
const (
	FromDefault       SourceKind = iota // built-in default
	FromUserFile                        // $XDG_CONFIG_HOME/kimi-lsp/config.toml
	FromWorkspaceFile                   // .kimi-lsp.toml at a workspace folder root
	FromEnv                             // KIMI_API_KEY, KIMI_BASE_URL, KIMI_MODEL
	FromEditor                          // the "kimi" section of the editor's settings
	// FromModel marks a value the model imposes over every source (Name
	// is the model): kimi-k3 accepts reasoning_effort max only.
	FromModel
)

// Source names where one effective value came from.
type Source struct {
	Kind SourceKind
	// Name is the file path for FromUserFile and FromWorkspaceFile, the
	// variable name for FromEnv, "initializationOptions" for that editor
	// source (empty for the editor's settings), and empty otherwise.
	Name string
}

// String describes the source for people: "default", "user file PATH",
// "workspace file PATH", the environment variable's name, or
// "editor settings".
func (s Source) String() string {
	switch s.Kind {
	case FromDefault:
		return "default"
	case FromUserFile:
		return "user file " + s.Name
	case FromWorkspaceFile:
		return "workspace file " + s.Name
	case FromEnv:
		return s.Name
	case FromEditor:
		if s.Name != "" {
			return "editor " + s.Name
		}
		return "editor settings"
	case FromModel:
		if e, ok := model.RequiredEffort(s.Name); ok {
			return "the model " + s.Name + ", which accepts reasoning_effort " + e + " only"
		}
		return "the model " + s.Name
	}
	return fmt.Sprintf("source(%d)", int(s.Kind))
}

var defaultSource = Source{Kind: FromDefault}

// Setting is one effective value and where it came from, as listed by
// Config.Sources for `kimi-lsp doctor`.
type Setting struct {
	// Key is the dotted key, for example "context.maxTokens",
	// "reasoningEffort.explain" or "prices.kimi-k3.1-pro.output".
	Key string
	// Value is the value written as in the TOML file ("5m", 8192, true,
	// ["a", "b"]); the API key appears only in its redacted form.
	Value string
	// Source is where the value came from.
	Source Source
}

// String formats the setting as one line, for example
// `apiKey = sk-…abcd (from KIMI_API_KEY)`.
func (s Setting) String() string {
	return s.Key + " = " + s.Value + " (from " + s.Source.String() + ")"
}

// Problem is an invalid or ignored value found while reading one source. The
// error slices returned by this package hold *Problem values.
//
// An error (Warning false) means the source was not applied: the returned
// Config keeps what that source last gave when it was valid. A warning means
// the source was applied without the offending key (an unknown key, or a key
// a workspace file may not set) or with a questionable value.
type Problem struct {
	Source  Source
	Key     string // dotted key, or "" for a problem with the whole source (syntax)
	Message string // names the accepted values where there is a fixed set
	Warning bool
	// Dropped marks a warning that something the user will miss was left
	// out (an action ignored): unlike other warnings it is shown to the
	// user, not only logged.
	Dropped bool
}

// Error formats the problem as "SOURCE: KEY: MESSAGE", on one line
// without escape sequences, control or format characters (cleanText): a
// key or a value may come from a repository's file.
func (p *Problem) Error() string {
	s := p.Source.String() + ": "
	if p.Warning {
		s = "warning: " + s
	}
	if p.Key != "" {
		s += p.Key + ": "
	}
	return cleanText(s + p.Message)
}

// IsDropped reports whether err is a warning that something was left
// out (Problem.Dropped): the editor shows it as it shows errors.
func IsDropped(err error) bool {
	var p *Problem
	return errors.As(err, &p) && p.Warning && p.Dropped
}

// IsWarning reports whether err is a *Problem that did not stop its source
// from being applied.
func IsWarning(err error) bool {
	var p *Problem
	return errors.As(err, &p) && p.Warning
}

// HasErrors reports whether errs holds anything other than warnings, that is
// whether some source was refused and its previous good values kept.
func HasErrors(errs []error) bool {
	for _, err := range errs {
		if !IsWarning(err) {
			return true
		}
	}
	return false
}

// Report words problems for the user: one line per source with errors or
// with something dropped (Problem.Dropped), each problem once, and after a
// source's errors what they cost: a file with an error (a value out of
// range, a TOML syntax error) is ignored as a whole, an environment
// variable alone, the editor's settings as a whole (their previous good
// values stay). Other warnings (unknown keys and the like) are left to the
// log. The lines hold no control or format characters.
func Report(errs []error) []string {
	type group struct {
		src    Source
		parts  []string
		failed bool
	}
	var groups []*group
	for _, err := range errs {
		var p *Problem
		if !errors.As(err, &p) {
			groups = append(groups, &group{parts: []string{cleanText(err.Error())}})
			continue
		}
		if p.Warning && !p.Dropped {
			continue
		}
		var g *group
		for _, x := range groups {
			if x.src == p.Source && x.parts != nil {
				g = x
			}
		}
		if g == nil {
			g = &group{src: p.Source}
			groups = append(groups, g)
		}
		part := p.Message
		if p.Key != "" {
			part = p.Key + ": " + part
		}
		g.parts = append(g.parts, part)
		g.failed = g.failed || !p.Warning
	}
	var out []string
	for _, g := range groups {
		line := strings.Join(g.parts, "; ")
		if g.src != (Source{}) {
			line = g.src.String() + ": " + line
		}
		if g.failed {
			line += " (" + g.src.cost() + ")"
		}
		out = append(out, cleanText(line))
	}
	return out
}

// cost says what an error in the source cost.
func (s Source) cost() string {
	switch s.Kind {
	case FromUserFile:
		return "so the whole file was ignored until it is fixed; only a baseURL in it still decides where requests go"
	case FromWorkspaceFile:
		return "so the whole file was ignored; the values it gave before, if any, stay in use until it is fixed"
	case FromEnv:
		if s.Name == "KIMI_BASE_URL" {
			return "nothing is sent until it is fixed, unless the editor settings set baseURL"
		}
		return "so " + s.Name + " was ignored"
	case FromEditor:
		return "so these settings were ignored; the previous ones stay in use until they are fixed"
	}
	return "ignored"
}
