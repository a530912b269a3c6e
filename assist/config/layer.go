package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/redact"
)

// layer is what one source says, parsed and checked: the value of every
// key it sets, by schema path (see schema for each value's type). Layers
// are never modified after parsing, so Configs may share them.
type layer struct {
	src  Source
	vals map[string]any
}

type pricePatch struct {
	input, cachedRead, write5m, write1h, output *float64
}

// baseURL returns the layer's endpoint, if it sets one (l may be nil).
func (l *layer) baseURL() (endpoint, bool) {
	if l == nil {
		return endpoint{}, false
	}
	e, ok := l.vals["baseURL"].(endpoint)
	return e, ok
}

// Placeholders are the names a prompt template may use, each written as
// {{name}}.
var Placeholders = []string{"selection", "file", "language", "diagnostics", "instruction"}

const (
	effortValues = "low, high, max (or the aliases medium, xhigh, minimal, none)"
	kindValues   = "quickfix, refactor, refactor.extract, refactor.inline, refactor.rewrite, source, or a sub-kind of one of them (e.g. refactor.rewrite.kimi)"
	smallTokens  = 1024
)

// parser collects the problems of one source.
type parser struct {
	src    Source
	probs  []error
	failed bool
}

func (p *parser) fail(key, format string, args ...any) {
	p.failed = true
	p.probs = append(p.probs, &Problem{Source: p.src, Key: key, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) warn(key, format string, args ...any) {
	p.probs = append(p.probs, &Problem{Source: p.src, Key: key, Message: fmt.Sprintf(format, args...), Warning: true})
}

// drop reports an action left out while the rest of the source applies
// (a warning shown to the user, Problem.Dropped).
func (p *parser) drop(key, format string, args ...any) {
	p.probs = append(p.probs, &Problem{Source: p.src, Key: key, Message: fmt.Sprintf(format, args...), Warning: true, Dropped: true})
}

// parseSection turns a decoded "kimi" section (from TOML or JSON) into a
// layer. It reports every problem it finds, not just the first.
func parseSection(m map[string]any, src Source) (*layer, []error) {
	p := &parser{src: src}
	l := &layer{src: src, vals: map[string]any{}}
	p.walk(l, "", m)
	// Messages never quote the key; strike it anyway in case another value
	// repeats it (a second line of defence).
	if k, ok := m["apiKey"].(string); ok {
		strike(p.probs, strings.TrimSpace(k))
	}
	return l, p.probs
}

// perAction parses a per-action setting: a single value for every action
// (all is true: it replaces the entries of lower sources), or a table by
// action name, with "default" for the actions it does not list.
func perAction[T any](p *parser, k string, v any, one func(key string, v any) (T, bool)) (m map[string]T, all bool) {
	m = map[string]T{}
	if l, ok := v.([]any); ok && len(l) == 0 {
		return m, false // an empty table, encoded as a list
	}
	if tbl, ok := v.(map[string]any); ok {
		for _, name := range sortedKeys(tbl) {
			if x, ok := one(k+"."+name, tbl[name]); ok {
				m[name] = x
			}
		}
		return m, false
	}
	if x, ok := one(k, v); ok {
		m["default"] = x
		return m, true
	}
	return nil, false
}

// strike strikes keys from the problems' messages with the one redactor
// (assist/redact).
func strike(errs []error, keys ...string) {
	r := redact.New(keys...)
	for _, err := range errs {
		if p := (*Problem)(nil); errors.As(err, &p) {
			p.Message = r.String(p.Message)
		}
	}
}

func (p *parser) effort(key string, v any) (Effort, bool) {
	s, ok := p.str(key, v)
	if !ok {
		return "", false
	}
	e, ok := ParseEffort(s)
	if !ok {
		p.fail(key, "%s is not one of %s", quote(s), effortValues)
	}
	return e, ok
}

// duration reads a Go duration ("90s", "2m") or a number of seconds within
// [lo, hi].
func (p *parser) duration(key string, v any, lo, hi time.Duration) *time.Duration {
	var d time.Duration
	switch x := v.(type) {
	case string:
		var err error
		if d, err = time.ParseDuration(strings.TrimSpace(x)); err != nil {
			p.fail(key, "%s is not a duration such as 90s or 2m", quote(x))
			return nil
		}
	default:
		n, ok := p.number(key, v, lo.Seconds(), hi.Seconds())
		if !ok {
			return nil
		}
		d = time.Duration(n * float64(time.Second))
	}
	if d < lo || d > hi {
		p.fail(key, "%v is out of range: want %v to %v", d, lo, hi)
		return nil
	}
	return &d
}

func (p *parser) tokens(key string, v any) (int, bool) {
	n, ok := p.integer(key, v, 1, MaxCompletionTokensLimit)
	if ok && n < smallTokens {
		p.warn(key, "%d is very small: thinking counts against it and may leave no room for the answer", n)
	}
	return int(n), ok
}

func (p *parser) modelName(key string, v any) *string {
	s, ok := p.str(key, v)
	if !ok {
		return nil
	}
	if len(s) > 128 || strings.ContainsFunc(s, func(r rune) bool {
		return r <= ' ' || unicode.IsControl(r) || unicode.IsSpace(r) || unicode.Is(unicode.Cf, r)
	}) {
		p.fail(key, "%s is not a model name (no spaces, control or format characters, at most 128 bytes)", quote(s))
		return nil
	}
	return &s
}

func (p *parser) secret(key, s string) (Secret, bool) {
	if strings.HasPrefix(strings.ToLower(s), "bearer ") {
		p.fail(key, "give the key alone, without the \"Bearer \" prefix (value not shown)")
		return Secret{}, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			p.fail(key, "contains spaces, control or non-ASCII characters, which cannot go in an HTTP header (value not shown)")
			return Secret{}, false
		}
	}
	return NewSecret(s), true
}

func (p *parser) url(key, s string) (string, bool) {
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Hostname() == "" || u.Opaque != "" || !validPort(u.Port()):
		hint := ""
		if !strings.Contains(s, "://") && !strings.ContainsAny(s, " \t") {
			hint = fmt.Sprintf(" (the scheme is missing: did you mean %s?)", quote(shownURL("http://"+s)))
		}
		p.fail(key, "%s is not an absolute http or https URL such as %s%s", quote(shownURL(s)), model.DefaultBaseURL, hint)
		return "", false
	case u.Scheme != "https" && u.Scheme != "http":
		p.fail(key, "scheme %s is not one of https, http (in %s)", quote(u.Scheme), quote(shownURL(s)))
		return "", false
	case u.User != nil:
		p.fail(key, "must not contain a user name or password (value not shown); put the key in apiKey")
		return "", false
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		p.fail(key, "%s must not have a query or fragment", quote(shownURL(s)))
		return "", false
	}
	// The client appends /v1/chat/completions: drop a trailing slash and a
	// trailing /v1, which people often copy from other tools' settings.
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	out := strings.TrimRight(u.String(), "/")
	out = strings.TrimSuffix(out, "/v1")
	return strings.TrimRight(out, "/"), true
}

// validPort reports whether port (url.URL.Port: digits or "") is empty
// or a TCP port, 1 to 65535: "https://:443" has no host to send to, and
// "https://x:99999" none to connect to.
func validPort(port string) bool {
	if port == "" {
		return true
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}

// shownURL is a baseURL value as messages and doctor may show it: with
// any password replaced (url.URL.Redacted).
func shownURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
}

// The patterns are compiled on first use: compiling them (the {0,63}
// repetition especially) was half of the server's start-up instructions.
var (
	actionNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })
	kindRE       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(quickfix|refactor|source)(\.[A-Za-z0-9_-]+)*$`) })
)

var actionKeys = []string{"name", "title", "kind", "prompt", "model", "reasoningEffort", "maxCompletionTokens", "result"}

// actions parses the "actions" key: a list of tables (TOML [[actions]]), or
// a table of tables keyed by name (TOML [actions.review]).
func (p *parser) actions(k string, v any) []actionDef {
	entries, ok := p.actionEntries(k, v)
	if !ok {
		return nil
	}
	var out []actionDef
	seen := map[string]string{}
	for _, e := range entries {
		tbl, ok := p.table(e.key, e.tbl)
		if !ok {
			if e.tbl == nil {
				p.fail(e.key, "got null, want an action table")
			}
			continue
		}
		d, bad, tooBig := p.actionFields(e.key, tbl)
		if !p.actionNamed(e, &d, seen) {
			continue
		}
		seen[d.name] = e.key
		if p.actionFinished(e.key, &d, bad, tooBig) {
			out = append(out, d)
		}
	}
	return out
}

// actionEntry is one action table of the "actions" key, before it is read.
type actionEntry struct {
	key  string // where it is, for messages: actions[2], actions.review
	name string // its name as a table's key, "" in a list
	tbl  any
}

// actionEntries lists the action tables of the "actions" key k, in order:
// a list's by index, a table of tables' by name. A null value has none;
// another value fails and is not ok.
func (p *parser) actionEntries(k string, v any) ([]actionEntry, bool) {
	var entries []actionEntry
	switch x := v.(type) {
	case nil:
		return nil, false
	case []any:
		for i, e := range x {
			entries = append(entries, actionEntry{key: fmt.Sprintf("%s[%d]", k, i), tbl: e})
		}
	case []map[string]any:
		for i, e := range x {
			entries = append(entries, actionEntry{key: fmt.Sprintf("%s[%d]", k, i), tbl: e})
		}
	case map[string]any:
		for _, name := range sortedKeys(x) {
			entries = append(entries, actionEntry{key: k + "." + name, name: name, tbl: x[name]})
		}
	default:
		p.fail(k, "got %s, want a list of action tables ([[actions]] in TOML)", typeName(v))
		return nil, false
	}
	return entries, true
}

// actionFields reads the fields of the action table tbl at key, each
// checked alone. It returns the action, whether a field failed (bad), and
// the prompt's size when it is over maxTemplateBytes (the prompt then
// left out), else 0.
func (p *parser) actionFields(key string, tbl map[string]any) (d actionDef, bad bool, tooBig int) {
	d = actionDef{src: p.src}
	for _, f := range sortedKeys(tbl) {
		fk, fv := key+"."+f, tbl[f]
		switch f {
		case "name":
			d.name, _ = p.str(fk, fv)
		case "title":
			d.title, _ = p.str(fk, fv)
		case "kind":
			if s, ok := p.str(fk, fv); ok {
				if !kindRE().MatchString(s) {
					p.fail(fk, "%s is not a code action kind: use %s", quote(s), kindValues)
					bad = true
				}
				d.kind = s
			}
		case "prompt":
			if s, ok := p.str(fk, fv); ok {
				if max := maxTemplateBytes(p.src); len(s) > max {
					tooBig = len(s)
					continue
				}
				if err := checkTemplate(s); err != nil {
					p.fail(fk, "%v", err)
					bad = true
				}
				d.prompt = s
			}
		case "model":
			if s := p.modelName(fk, fv); s != nil {
				d.model = *s
			}
		case "reasoningEffort":
			d.effort, _ = p.effort(fk, fv)
		case "maxCompletionTokens":
			d.maxTokens, _ = p.tokens(fk, fv)
		case "result":
			if s, ok := p.str(fk, fv); ok {
				switch Result(s) {
				case ResultExplain, ResultEdit:
					d.result = Result(s)
				default:
					p.fail(fk, "%s is not one of explain, edit", quote(s))
					bad = true
				}
			}
		default:
			p.unknown(key, f, actionKeys)
		}
	}
	return d, bad, tooBig
}

// actionNamed settles the name of d, read from entry e: a table's key is
// its name (a name field must agree), and the name must be valid, not a
// built-in's and not one seen (name → the key that defined it) already.
// It reports whether d may go on; a workspace file's action with a
// built-in name is dropped alone, the other problems fail.
func (p *parser) actionNamed(e actionEntry, d *actionDef, seen map[string]string) bool {
	if e.name != "" {
		if d.name != "" && d.name != e.name {
			p.fail(e.key+".name", "%s differs from the table's name %s", quote(d.name), quote(e.name))
			return false
		}
		d.name = e.name
	}
	switch {
	case d.name == "":
		p.fail(e.key+".name", "missing: every action needs a name (letters, digits, _ . -)")
		return false
	case !actionNameRE().MatchString(d.name):
		p.fail(e.key+".name", "%s is not a valid action name: start with a letter or digit, then letters, digits, _ . - (at most 64)", quote(d.name))
		return false
	case Reserved(d.name) && p.src.Kind == FromWorkspaceFile:
		// A repository's file: that action goes, not the whole file.
		p.drop(e.key+".name", "action ignored: %s is a built-in name (%s), which a workspace file cannot reuse", quote(d.name), reservedList())
		return false
	case Reserved(d.name):
		p.fail(e.key+".name", "%s is a built-in name (%s); choose another", quote(d.name), reservedList())
		return false
	case seen[d.name] != "":
		p.fail(e.key+".name", "%s is already defined by %s", quote(d.name), seen[d.name])
		return false
	}
	return true
}

// actionFinished checks the named action d at key as a whole — its
// template's caps (a template over its source's cap, tooBig bytes, or with
// too many large placeholders drops the action alone), a prompt and a
// result present — and fills in its title and kind. It reports whether d
// is kept: not when it, or a field (bad), failed or it was dropped.
func (p *parser) actionFinished(key string, d *actionDef, bad bool, tooBig int) bool {
	if tooBig > 0 {
		max := maxTemplateBytes(p.src)
		p.drop(key+".prompt", "action %s ignored: its prompt template is %d bytes, over the cap of %d KiB (%d bytes) for %s (a template is sent with every run)",
			quote(d.name), tooBig, max>>10, max, templateCapFor(p.src))
		return false
	}
	if name, n := repeatedPlaceholder(d.prompt); n > 0 && p.src.Kind == FromWorkspaceFile {
		p.drop(key+".prompt", "action %s ignored: its prompt template uses {{%s}} %d times, over the cap of %d for an action from a workspace file (each use is sent with every run)",
			quote(d.name), name, n, MaxLargePlaceholderUses)
		return false
	}
	if d.prompt == "" && !bad {
		p.fail(key+".prompt", "missing: a user-defined action needs a prompt template (placeholders: %s)", placeholderList())
		bad = true
	}
	if d.result == "" && !bad {
		p.fail(key+".result", "missing: one of explain, edit")
		bad = true
	}
	if bad {
		return false
	}
	if d.title == "" {
		d.title = "Kimi: " + d.name
	}
	d.title = cleanTitle(d.title)
	if p.src.Kind == FromWorkspaceFile {
		if b, ok := builtinLike(d.title); ok {
			p.drop(key+".title", "action %s ignored: its title %s reads as the built-in action %s, and a workspace file cannot reuse a built-in's name or title", quote(d.name), quote(d.title), quote(b))
			return false
		}
	}
	if d.kind == "" {
		d.kind = "refactor.rewrite"
		if d.result == ResultExplain {
			d.kind = "refactor"
		}
	}
	return true
}

// Caps on an action's prompt template, which is sent with every run of the
// action: a repository's file may not make each run cost hundreds of
// thousands of tokens unannounced.
const (
	// MaxWorkspaceTemplateBytes caps a template from a workspace file
	// (.kimi-lsp.toml): 16 KiB, about 4,000 tokens.
	MaxWorkspaceTemplateBytes = 16 << 10
	// MaxTemplateBytes caps a template from the user file or the editor's
	// settings: 64 KiB.
	MaxTemplateBytes = 64 << 10
)

func maxTemplateBytes(src Source) int {
	if src.Kind == FromWorkspaceFile {
		return MaxWorkspaceTemplateBytes
	}
	return MaxTemplateBytes
}

func templateCapFor(src Source) string {
	if src.Kind == FromWorkspaceFile {
		return "an action from a workspace file"
	}
	return "an action"
}

// maxTitleRunes bounds an action's title in the menu.
const maxTitleRunes = 80

// cleanTitle makes a title safe to show in a one-line menu: escape
// sequences, format and bidirectional-control characters go, other control
// characters (a newline could push a fake entry onto its own line) become
// spaces, runs of spaces one (cleanText), and it is cut to maxTitleRunes.
func cleanTitle(t string) string {
	t = cleanText(t)
	if utf8.RuneCountInString(t) > maxTitleRunes {
		t = string([]rune(t)[:maxTitleRunes-1]) + "…"
	}
	return t
}

// kimiPrefix matches a title's "Kimi:" prefix, or "Kimi (user) -" and the
// like.
var kimiPrefix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\s*kimi\s*(\([^)]*\))?\s*[:\-–—|]\s*`)
})

// bareTitle is a title without its "Kimi:" prefixes (name when nothing
// is left).
func bareTitle(title, name string) string {
	for {
		loc := kimiPrefix().FindStringIndex(title)
		if loc == nil {
			break
		}
		title = title[loc[1]:]
	}
	if strings.TrimSpace(title) == "" {
		return name
	}
	return title
}

// builtinLike reports whether title, stripped of its "Kimi:" prefixes,
// case, spaces and punctuation, is a built-in action's name or title, and
// returns that built-in's title.
func builtinLike(title string) (string, bool) {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return unicode.ToLower(r)
			}
			return -1
		}, bareTitle(s, ""))
	}
	t := norm(title)
	for _, b := range builtins {
		if t == norm(b.title) || t == b.name {
			return b.title, true
		}
	}
	return "", false
}

func (p *parser) globs(key string, v any) []string {
	list, ok := p.list(key, v)
	if !ok {
		return nil
	}
	var out []string
	for i, e := range list {
		ek := fmt.Sprintf("%s[%d]", key, i)
		s, ok := p.str(ek, e)
		if !ok {
			if e == nil || e == "" {
				p.fail(ek, "empty glob")
			}
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			p.fail(ek, "%s is not a valid glob (use *, ?, [a-z] and ** with / separators)", quote(s))
			continue
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

var priceKeys = []string{"input", "cachedRead", "write5m", "write1h", "output"}

func (p *parser) prices(k string, v any) map[string]pricePatch {
	tbl, ok := p.table(k, v)
	if !ok {
		return nil
	}
	out := map[string]pricePatch{}
	for _, model := range sortedKeys(tbl) {
		mk := k + "." + model
		if p.modelName(mk, model) == nil {
			continue
		}
		fields, ok := p.table(mk, tbl[model])
		if !ok {
			continue
		}
		var pp pricePatch
		for _, f := range sortedKeys(fields) {
			fk := mk + "." + f
			var dst **float64
			switch f {
			case "input":
				dst = &pp.input
			case "cachedRead":
				dst = &pp.cachedRead
			case "write5m":
				dst = &pp.write5m
			case "write1h":
				dst = &pp.write1h
			case "output":
				dst = &pp.output
			default:
				p.unknown(mk, f, priceKeys)
				continue
			}
			if x, ok := p.number(fk, fields[f], 0, 10000); ok {
				*dst = &x
			}
		}
		out[model] = pp
	}
	return out
}

// --- typed access with messages that name the key and what is wanted ---

// str returns a non-empty string. An empty string or null means "not set"
// (editors often send "" for settings the user left alone).
func (p *parser) str(key string, v any) (string, bool) {
	switch s := v.(type) {
	case nil:
		return "", false
	case string:
		s = strings.TrimSpace(s)
		if !utf8.ValidString(s) {
			p.fail(key, "is not valid UTF-8")
			return "", false
		}
		return s, s != ""
	}
	p.fail(key, "got %s, want a string", typeName(v))
	return "", false
}

func (p *parser) boolean(key string, v any) *bool {
	switch b := v.(type) {
	case nil:
		return nil
	case bool:
		return &b
	}
	p.fail(key, "got %s, want true or false", typeName(v))
	return nil
}

func (p *parser) integer(key string, v any, lo, hi int64) (int64, bool) {
	var n int64
	switch x := v.(type) {
	case nil:
		return 0, false
	case int64:
		n = x
	case int:
		n = int64(x)
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || x < math.MinInt64 || x > math.MaxInt64 {
			p.fail(key, "%v is not a whole number between %d and %d", x, lo, hi)
			return 0, false
		}
		n = int64(x)
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			f, ferr := x.Float64()
			if ferr != nil || f != math.Trunc(f) || f < math.MinInt64 || f > math.MaxInt64 {
				p.fail(key, "%s is not a whole number between %d and %d", x.String(), lo, hi)
				return 0, false
			}
			i = int64(f)
		}
		n = i
	default:
		p.fail(key, "got %s, want a whole number between %d and %d", typeName(v), lo, hi)
		return 0, false
	}
	if n < lo || n > hi {
		p.fail(key, "%d is out of range: want %d to %d", n, lo, hi)
		return 0, false
	}
	return n, true
}

func (p *parser) number(key string, v any, lo, hi float64) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case nil:
		return 0, false
	case int64:
		f = float64(x)
	case int:
		f = float64(x)
	case float64:
		f = x
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			p.fail(key, "%s is not a number", x.String())
			return 0, false
		}
	default:
		p.fail(key, "got %s, want a number from %g to %g", typeName(v), lo, hi)
		return 0, false
	}
	if math.IsNaN(f) || f < lo || f > hi {
		p.fail(key, "%g is out of range: want %g to %g (USD per million tokens)", f, lo, hi)
		return 0, false
	}
	return f, true
}

// table returns a table (a JSON object). An empty list is an empty table:
// Lua, and so Neovim 0.7's settings, encodes {} as [].
func (p *parser) table(key string, v any) (map[string]any, bool) {
	switch t := v.(type) {
	case nil:
		return nil, false
	case map[string]any:
		return t, true
	case []any:
		if len(t) == 0 {
			return map[string]any{}, true
		}
	}
	p.fail(key, "got %s, want a table (an object in JSON)", typeName(v))
	return nil, false
}

func (p *parser) list(key string, v any) ([]any, bool) {
	switch t := v.(type) {
	case nil:
		return nil, false
	case []any:
		return t, true
	case []string:
		out := make([]any, len(t))
		for i, s := range t {
			out[i] = s
		}
		return out, true
	case string:
		// A single glob where a list is expected: accept it.
		return []any{t}, true
	}
	p.fail(key, "got %s, want a list of strings", typeName(v))
	return nil, false
}

// unknown warns about an unknown key, suggesting the closest known one.
func (p *parser) unknown(parent, k string, known []string) {
	key := k
	if parent != "" {
		key = parent + "." + k
	}
	msg := "unknown key (ignored)"
	if s := closest(k, known); s != "" {
		msg += "; did you mean " + s + "?"
	} else {
		msg += "; known keys: " + strings.Join(known, ", ")
	}
	p.warn(key, "%s", msg)
}

// closest returns the known key nearest to k when it is a likely typo.
func closest(k string, known []string) string {
	best, bestD := "", 3
	for _, c := range known {
		if strings.EqualFold(c, k) {
			return c
		}
		if d := editDistance(strings.ToLower(k), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, float64, json.Number:
		return "a number"
	case map[string]any:
		return "a table"
	case []any, []map[string]any, []string:
		return "a list"
	case time.Time:
		return "a date"
	}
	return fmt.Sprintf("a %T", v)
}

// quote quotes a value for a message, shortened so that a pasted blob does
// not flood the editor.
func quote(s string) string {
	const max = 60
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = string(r[:max]) + "…"
	}
	return strconv.Quote(s)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
