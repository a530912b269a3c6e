package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/kimi-lsp/kimi-lsp/workspace/rulefile"
)

// maxFileBytes bounds the configuration files read: a larger file is
// refused whole, with a problem naming the cap.
const maxFileBytes = 1 << 20

// stack holds the last good layer of every source, in increasing
// precedence. Its slices are replaced, never modified in place.
type stack struct {
	user      *layer
	workspace []*layer
	env       []*layer
	init      *layer // the editor's initializationOptions
	editor    *layer // the editor's settings (workspace/configuration, didChangeConfiguration)
}

func (s stack) layers() []*layer {
	var out []*layer
	if s.user != nil {
		out = append(out, s.user)
	}
	out = append(out, s.workspace...)
	out = append(out, s.env...)
	if s.init != nil {
		out = append(out, s.init)
	}
	if s.editor != nil {
		out = append(out, s.editor)
	}
	return out
}

// UserFilePath returns the user configuration file's path:
// $XDG_CONFIG_HOME/kimi-lsp/config.toml when XDG_CONFIG_HOME is an absolute
// path, else $HOME/.config/kimi-lsp/config.toml, else "" (no user file).
// env looks up environment variables (os.Getenv in production).
func UserFilePath(env func(string) string) string {
	if env == nil {
		return ""
	}
	if x := env("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "kimi-lsp", "config.toml")
	}
	if h := env("HOME"); h != "" {
		return filepath.Join(h, ".config", "kimi-lsp", "config.toml")
	}
	return ""
}

// WorkspaceFile returns the path of the workspace-local file of the
// workspace folder root (root/.kimi-lsp.toml).
func WorkspaceFile(root string) string { return filepath.Join(root, WorkspaceFileName) }

// Load returns the defaults overlaid with the user file (userFile; "" for
// none; a missing file is not an error) and the environment (env looks up a
// variable: os.Getenv in production, nil for none). Every problem is
// returned; a user file with errors is not applied at all, an invalid
// environment variable is ignored, and the result is always usable.
func Load(env func(string) string, userFile string) (Config, []error) {
	c, errs := Default().WithUserFile(userFile)
	c, errs2 := c.WithEnv(env)
	return c, append(errs, errs2...)
}

// WithUserFile returns c with its user-file source replaced by the file at
// path ("" or a missing file: no user file). If the file cannot be read or
// has errors, the result keeps the user file's previous good values and the
// errors say why.
func (c Config) WithUserFile(path string) (Config, []error) {
	if path == "" {
		st := c.stack
		st.user = nil
		return build(st, nil)
	}
	src := Source{Kind: FromUserFile, Name: path}
	l, errs := readTOML(path, src)
	st := c.stack
	if HasErrors(errs) {
		if _, ok := l.baseURL(); !ok {
			return c.keep(errs)
		}
		l = endpointOf(st.user, l)
	}
	st.user = l
	n, w := build(st, l)
	return n, c.redact(append(errs, w...))
}

// endpointOf is the layer kept for a refused source (one with errors)
// whose new text sets baseURL: its previous good layer (old, nil for none)
// with the new baseURL, valid or not. A refused source keeps its last good
// values, but not its last endpoint: the endpoint it names now is the one
// the user chose, and an invalid one stops every request (BaseURLError)
// instead of letting a lower source's or the default endpoint receive the
// code and the key.
func endpointOf(old, parsed *layer) *layer {
	n := &layer{src: parsed.src, vals: map[string]any{}}
	if old != nil {
		for k, v := range old.vals {
			n.vals[k] = v
		}
	}
	n.vals["baseURL"] = parsed.vals["baseURL"]
	return n
}

// WithWorkspaceFiles returns c with its workspace sources replaced by the
// files at paths (usually WorkspaceFile of each workspace folder; missing
// files are skipped; a later path takes precedence over an earlier one). A
// file with errors keeps its previous good values (from c) if it had any.
// A workspace file never sets apiKey or baseURL: such keys are ignored with
// a warning.
func (c Config) WithWorkspaceFiles(paths ...string) (Config, []error) {
	var errs []error
	var ls []*layer
	for _, path := range paths {
		src := Source{Kind: FromWorkspaceFile, Name: path}
		l, perrs := readTOML(path, src)
		errs = append(errs, perrs...)
		if HasErrors(perrs) {
			l = nil
			for _, old := range c.stack.workspace {
				if old.src == src {
					l = old
				}
			}
		}
		if l != nil {
			ls = append(ls, l)
		}
	}
	st := c.stack
	st.workspace = ls
	n, w := build(st, ls...)
	return n, c.redact(append(errs, w...))
}

// WithEnv returns c with its environment source replaced by the variables
// KIMI_API_KEY, KIMI_BASE_URL and KIMI_MODEL looked up with env (nil: none).
// An empty variable is unset; an invalid one is ignored with an error.
func (c Config) WithEnv(env func(string) string) (Config, []error) {
	var errs []error
	var ls []*layer
	for _, v := range envVars {
		val := ""
		if env != nil {
			val = env(v.name)
		}
		if strings.TrimSpace(val) == "" {
			continue
		}
		l, perrs := parseSection(map[string]any{v.key: val}, Source{Kind: FromEnv, Name: v.name})
		errs = append(errs, perrs...)
		// An invalid KIMI_BASE_URL is kept as such (BaseURLError): it
		// must not leave the requests to the default endpoint.
		if e, _ := l.baseURL(); !HasErrors(perrs) || e.err != nil {
			ls = append(ls, l)
		}
	}
	st := c.stack
	st.env = ls
	n, w := build(st, ls...)
	return n, c.redact(append(errs, w...))
}

// WithEditor returns c with its editor-settings source replaced by raw, the
// "kimi" settings of a workspace/configuration result or of
// workspace/didChangeConfiguration: either {"kimi": {...}} (other sections
// are ignored) or the bare section, or a one-element array of either. A
// null, absent or empty section ({}, [], {"kimi": null}, {"kimi": []} —
// Neovim 0.7 encodes an empty table as a list) means "nothing from this
// source": it clears what this source said before and never what another
// source says (initializationOptions, see WithInitOptions, stay). Keys
// with null or "" values count as unset. If raw has errors, the result
// keeps this source's previous good settings.
func (c Config) WithEditor(raw json.RawMessage) (Config, []error) {
	return c.withEditor(raw, false)
}

// WithInitOptions is WithEditor for the editor's other source, the
// initialize request's initializationOptions. Editor settings (WithEditor)
// take precedence over it key by key; a null or empty answer from one
// source leaves the other's values in place.
func (c Config) WithInitOptions(raw json.RawMessage) (Config, []error) {
	return c.withEditor(raw, true)
}

func (c Config) withEditor(raw json.RawMessage, init bool) (Config, []error) {
	src := Source{Kind: FromEditor}
	if init {
		src.Name = "initializationOptions"
	}
	m, err := decodeEditor(raw)
	if err != nil {
		return c.keep([]error{&Problem{Source: src, Message: err.Error()}})
	}
	l, errs := parseSection(m, src)
	st := c.stack
	if HasErrors(errs) {
		if _, ok := l.baseURL(); !ok {
			return c.keep(errs)
		}
		old := st.editor
		if init {
			old = st.init
		}
		l = endpointOf(old, l)
	}
	if init {
		st.init = l
	} else {
		st.editor = l
	}
	n, w := build(st, l)
	return n, c.redact(append(errs, w...))
}

// keep returns c unchanged with errs, for a source that was refused.
func (c Config) keep(errs []error) (Config, []error) {
	if c.src == nil { // the zero Config: start from the defaults
		n, _ := build(c.stack)
		return n, c.redact(errs)
	}
	return c, c.redact(errs)
}

// redact removes every known API key from the problems' messages. Messages
// are built not to contain it; this is a second line of defence.
func (c Config) redact(errs []error) []error {
	var keys []string
	if c.APIKey.IsSet() {
		keys = append(keys, c.APIKey.Reveal())
	}
	for _, l := range c.stack.layers() {
		if k, ok := l.vals["apiKey"].(Secret); ok {
			keys = append(keys, k.Reveal())
		}
	}
	strike(errs, keys...)
	return errs
}

// readTOML reads a configuration file through rulefile.Read: opened without
// blocking, a regular file of at most maxFileBytes. The workspace file must
// stay inside its folder (a link pointing out, to /dev/stdin for one, is
// refused); the user's own file may be a link anywhere, to a regular file.
func readTOML(path string, src Source) (*layer, []error) {
	links := rulefile.Inside
	if src.Kind == FromUserFile {
		links = rulefile.ToRegular
	}
	data, err := rulefile.Read(filepath.Dir(path), filepath.Base(path), maxFileBytes, links)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{&Problem{Source: src, Message: "cannot read: " + readError(path, err)}}
	}
	return parseTOML(data, src)
}

// readError is err of rulefile.Read without the path, which the Problem's
// source names.
func readError(path string, err error) string {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err.Error()
	}
	msg, _ := strings.CutPrefix(err.Error(), path+": ")
	return msg
}

// parseTOML parses a TOML configuration file. The file holds the section's
// keys at the top level; a file that wraps them all in a [kimi] table is
// accepted too.
func parseTOML(data []byte, src Source) (*layer, []error) {
	var m map[string]any
	if _, err := toml.Decode(string(data), &m); err != nil {
		pr := &Problem{Source: src, Message: tomlError(data, err)}
		if src.Kind == FromWorkspaceFile {
			return nil, []error{pr} // it may not set baseURL anyway
		}
		return unreadEndpoint(data, pr), []error{pr}
	}
	if k, ok := m["kimi"].(map[string]any); ok && len(m) == 1 {
		m = k
	}
	return parseSection(m, src)
}

// baseURLLine matches where a file sets baseURL: at the start of a line
// (in a [kimi] table or as kimi.baseURL too) or in an inline table
// (kimi = { baseURL = … }), the key bare or quoted.
// (compiled on first use, as the parser's patterns).
var baseURLLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)(?:^[ \t]*(?:"?kimi"?[ \t]*\.[ \t]*)?|[{,][ \t]*)["']?baseURL["']?[ \t]*=[ \t]*("[^"\n]*"|'[^'\n]*'|[^,}\n]*)`)
})

// unreadEndpoint returns, for a file that is not valid TOML but has a line
// setting baseURL, a layer holding only that endpoint, invalid (pr says
// why): the user chose an endpoint that cannot be read, so nothing may go
// to the default one. It returns nil when no line sets baseURL.
func unreadEndpoint(data []byte, pr *Problem) *layer {
	m := baseURLLine().FindSubmatch(data)
	if m == nil {
		return nil
	}
	shown := shownURL(strings.Trim(strings.TrimSpace(string(m[1])), `"'`))
	if strings.Contains(strings.ToLower(shown), "apikey") || shown == "" {
		shown = "(unreadable)"
	}
	return &layer{src: pr.Source, vals: map[string]any{"baseURL": endpoint{url: shown, err: &Problem{Source: pr.Source, Key: "baseURL",
		Message: "the file sets it but is not valid TOML, so it was not read"}}}}
}

// tomlError formats a TOML syntax error as "line L, column C: message". The
// parser's message may quote the offending text; when the line holds the
// API key, only the position is given.
func tomlError(data []byte, err error) string {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return "invalid TOML: " + err.Error()
	}
	line := ""
	if lines := bytes.Split(data, []byte("\n")); pe.Position.Line >= 1 && pe.Position.Line <= len(lines) {
		line = string(lines[pe.Position.Line-1])
	}
	if strings.Contains(strings.ToLower(line), "apikey") {
		return fmt.Sprintf("invalid TOML at line %d, column %d (the line sets apiKey, so the text is not shown; is the value in double quotes?)",
			pe.Position.Line, pe.Position.Col)
	}
	return fmt.Sprintf("invalid TOML at line %d, column %d: %s", pe.Position.Line, pe.Position.Col, pe.Message)
}

// decodeEditor extracts the "kimi" section from raw editor settings.
func decodeEditor(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, jsonError(raw, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the settings object")
	}
	if a, ok := v.([]any); ok {
		i := slices.IndexFunc(a, func(e any) bool { return e != nil })
		if i < 0 {
			return nil, nil
		}
		v = a[i]
	}
	switch t := v.(type) {
	case nil:
		return nil, nil
	case []any:
		if len(t) == 0 { // an empty Lua table, encoded as a list
			return nil, nil
		}
	case map[string]any:
		if k, ok := t["kimi"]; ok {
			switch kt := k.(type) {
			case nil:
				return nil, nil
			case []any:
				if len(kt) == 0 {
					return nil, nil
				}
			case map[string]any:
				return kt, nil
			}
			return nil, fmt.Errorf("kimi: got %s, want an object", typeName(k))
		}
		// What Copilot's clients send any server as its initialization
		// options (copilot.el): the editor's and the plugin's names, no
		// settings of ours.
		delete(t, "editorInfo")
		delete(t, "editorPluginInfo")
		return t, nil
	}
	return nil, fmt.Errorf("got %s, want an object with the kimi settings", typeName(v))
}

func jsonError(raw []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := 1, 1
		// Offset counts the bytes read, the offending one included.
		for _, b := range raw[:max(0, min(int(se.Offset)-1, len(raw)))] {
			if b == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		return fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, se.Error())
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("invalid JSON: unexpected end of input")
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// build composes the defaults and the stack's layers into a Config, and
// returns warnings about the changed layers' references to actions that do
// not exist.
func build(st stack, changed ...*layer) (Config, []error) {
	c := Default()
	c.stack = st
	for _, l := range st.layers() {
		c.apply(l)
	}
	c.Context.Exclude = slices.Clip(c.Context.Exclude)
	c.Context.Secrets = slices.Clip(c.Context.Secrets)
	var warns []error
	for _, l := range changed {
		if l == nil {
			continue
		}
		check := func(key string, names []string) {
			for _, n := range names {
				if n != "default" && !isBuiltin(n) && c.actionIndex(n) < 0 {
					warns = append(warns, &Problem{Source: l.src, Key: key + "." + n, Warning: true,
						Message: "no such action (built-ins: explain, fix, rewrite, document, tests; or a name from actions; or default)"})
				}
			}
		}
		for _, e := range schema {
			if v, ok := l.vals[e.path]; ok && e.ws == wsLowerOnly && l.src.Kind == FromWorkspaceFile && c.src[e.path] != l.src {
				warns = append(warns, &Problem{Source: l.src, Key: e.path, Warning: true,
					Message: fmt.Sprintf("ignored: a workspace file may lower %s, not raise it (%v is above %s from %s; 0 means no bound)",
						e.path, v, e.show(c), c.srcOf(e.path))})
			}
		}
		for _, key := range []string{"reasoningEffort", "maxCompletionTokens"} {
			switch v := l.vals[key].(type) {
			case perActionValue[Effort]:
				check(key, sortedKeys(v.m))
			case perActionValue[int]:
				check(key, sortedKeys(v.m))
			}
		}

	}
	return c, warns
}

// apply overlays one layer, key by key in schema order. Precondition:
// c's maps are its own.
func (c *Config) apply(l *layer) {
	for _, e := range schema {
		v, ok := l.vals[e.path]
		switch {
		case !ok:
		case e.ws == wsLowerOnly && l.src.Kind == FromWorkspaceFile && !e.lower(c, v):
			// A workspace file may not raise it: build warns.
		case e.merge != nil:
			e.merge(c, v, l.src)
		default:
			e.set(c, v)
			c.src[e.path] = l.src
		}
	}
}

// overlay applies a layer's per-action table to dst, recording sources in
// src under prefix+name. all: the layer gave one value for every action, so
// the entries of lower sources go.
func overlay[T any](dst, from map[string]T, all bool, src map[string]Source, prefix string, s Source) {
	if all {
		for k := range dst {
			delete(dst, k)
			delete(src, prefix+k)
		}
	}
	for k, v := range from {
		dst[k] = v
		src[prefix+k] = s
	}
}
