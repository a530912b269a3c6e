package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/tools"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// System is the agent's system message: constant, the first message of
// every request of every session.
const System = cache.DefaultSystem + `
You are working as a coding agent in the user's workspace folder, in a conversation of several turns.
How to work:
- Use list_files and search_files to find code, read_file to read it before you change it.
- Make changes with the edit tools (replace_text, create_file, delete_file, apply_diff). Your edits of a turn are pending until you answer: then the user sees their diff, the language's own checker verifies them, and they are applied together or not at all, only if the user allows it.
- Keep every change as small as the request needs; never write placeholders for unchanged code.
- When you are done, answer in a few sentences of Markdown: what you found or changed.
- If the request cannot be done safely, say why and make no change.
`

// Names of the agent's own tools.
const (
	ListFiles   = "list_files"
	SearchFiles = "search_files"
)

// Bounds of the agent's own tools' results.
const (
	maxListed      = 500
	maxMatches     = 100
	maxMatchLine   = 200
	maxPinnedFiles = 300
)

// Tools are the session's tool definitions: the edit tools
// (assist/tools), then list_files and search_files. The same bytes in
// every mode and turn: they open every request.
var Tools = sync.OnceValue(func() []model.Tool {
	f := false
	nullable := func(desc string) tools.Schema {
		return tools.Schema{Type: tools.Types{"string", "null"}, Description: desc}
	}
	obj := func(props ...tools.Property) json.RawMessage {
		req := make([]string, len(props))
		for i, p := range props {
			req[i] = p.Name
		}
		b, err := json.Marshal(tools.Schema{Type: tools.Types{"object"}, Properties: props, Required: req, AdditionalProperties: &f})
		if err != nil {
			panic("agent: schema does not marshal: " + err.Error()) // static values; a test covers them
		}
		return b
	}
	list := model.FunctionTool(ListFiles, "List the workspace's files (ignored and secret files left out), workspace-relative, sorted.",
		obj(tools.Property{Name: "directory", Schema: nullable("Only the files under this workspace-relative directory, or null for all.")}))
	search := model.FunctionTool(SearchFiles, "Search the workspace's files (ignored and secret files left out) for a text; answers path:line: text lines.",
		obj(tools.Property{Name: "query", Schema: tools.Schema{Type: tools.Types{"string"}, Description: "The text to find, or a regular expression (RE2) with regex true."}},
			tools.Property{Name: "regex", Schema: tools.Schema{Type: tools.Types{"boolean", "null"}, Description: "Whether query is a regular expression (null: a plain text)."}},
			tools.Property{Name: "directory", Schema: nullable("Only under this workspace-relative directory, or null for all.")}))
	list.Function.Strict, search.Function.Strict = true, true
	return append(tools.ModelTools(), list, search)
})

// pinned is the session's pinned context: the folder's name, languages
// and files, as the scan found them when the session started.
func pinned(folders *workspace.Folders) string {
	var b strings.Builder
	list := folders.List()
	if len(list) > 0 {
		fmt.Fprintf(&b, "The workspace folder is %q.\n", list[0].Name)
	}
	if langs := folders.Languages(); len(langs) > 0 {
		fmt.Fprintf(&b, "Its main languages: %s.\n", strings.Join(langs, ", "))
	}
	files := listed(folders, "")
	fmt.Fprintf(&b, "Its files (%d):\n", len(files))
	for i, f := range files {
		if i == maxPinnedFiles {
			fmt.Fprintf(&b, "… and %d more (list_files lists them)\n", len(files)-i)
			break
		}
		b.WriteString(f.Path + "\n")
	}
	return b.String()
}

// listed returns the files under the workspace-relative dir ("" for all)
// that are neither ignored nor secret.
func listed(folders *workspace.Folders, dir string) []workspace.FileInfo {
	dir = strings.Trim(path.Clean("/"+dir), "/")
	var out []workspace.FileInfo
	for _, v := range folders.Views() {
		for _, fi := range v.Files() {
			if dir != "" && !strings.HasPrefix(fi.Path, dir+"/") {
				continue
			}
			abs, err := fi.URI.Path()
			if err != nil || folders.IsSecret(abs) || folders.IsIgnored(abs) {
				continue
			}
			out = append(out, fi)
		}
	}
	return out
}

type listArgs struct {
	Directory *string `json:"directory"`
}

type searchArgs struct {
	Query     *string `json:"query"`
	Regex     *bool   `json:"regex"`
	Directory *string `json:"directory"`
}

// decode reads strict JSON arguments.
func decode(args string, v any) error {
	dec := json.NewDecoder(strings.NewReader(args))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// list runs list_files.
func (s *Session) list(args string) tools.Result {
	var a listArgs
	if err := decode(args, &a); err != nil {
		return fail("invalid arguments for list_files: %v", err)
	}
	files := listed(s.opts.Folders, deref(a.Directory))
	if len(files) == 0 {
		return tools.Result{Content: "no files"}
	}
	var b strings.Builder
	for i, f := range files {
		if i == maxListed {
			fmt.Fprintf(&b, "… and %d more: list a directory\n", len(files)-i)
			break
		}
		b.WriteString(f.Path + "\n")
	}
	return tools.Result{Content: b.String()}
}

// search runs search_files; found receives the bytes of each file its
// result quotes.
func (s *Session) search(ctx context.Context, args string, found func(path string, n int)) tools.Result {
	var a searchArgs
	if err := decode(args, &a); err != nil {
		return fail("invalid arguments for search_files: %v", err)
	}
	q := deref(a.Query)
	if q == "" {
		return fail("search_files needs a non-empty query")
	}
	match := func(line string) bool { return strings.Contains(line, q) }
	if a.Regex != nil && *a.Regex {
		re, err := regexp.Compile(q)
		if err != nil {
			return fail("query is not a valid RE2 regular expression: %v", err)
		}
		match = re.MatchString
	}
	var b strings.Builder
	n := 0
	for _, fi := range listed(s.opts.Folders, deref(a.Directory)) {
		if ctx.Err() != nil {
			return fail("cancelled")
		}
		rel := fi.Path
		abs, _ := fi.URI.Path()
		f, err := s.opts.Folders.ReadFile(abs)
		if err != nil {
			continue // too large, binary, gone: not searched
		}
		quoted := 0
		for i, line := range strings.Split(f.Text, "\n") {
			if !match(line) {
				continue
			}
			if n == maxMatches {
				fmt.Fprintf(&b, "… more matches: narrow the query or the directory\n")
				found(rel, quoted)
				return tools.Result{Content: b.String()}
			}
			line = oneLine(line, maxMatchLine)
			fmt.Fprintf(&b, "%s:%d: %s\n", rel, i+1, line)
			quoted += len(line) + 1
			n++
		}
		if quoted > 0 {
			found(rel, quoted)
		}
	}
	if n == 0 {
		return tools.Result{Content: "no match"}
	}
	return tools.Result{Content: b.String()}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func fail(format string, args ...any) tools.Result {
	return tools.Result{Content: "error: " + fmt.Sprintf(format, args...), IsError: true}
}
