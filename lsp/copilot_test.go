package lsp

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// The clients here send exactly what the editors' next-edit plugins send
// (read at these commits):
//   - copilot-lsp (copilotlsp-nvim/copilot-lsp 1b6d827, lua/copilot-lsp/nes):
//     copilotInlineEdit with make_position_params(0, "utf-16") plus
//     textDocument.version; didShowInlineEdit {item: {command}} once shown;
//     the edit applied with apply_text_edits (one didChange); no command.
//   - sidekick.nvim (folke/sidekick.nvim 8ad0ede, lua/sidekick/nes): the
//     same request in the client's offset encoding plus context:
//     {triggerKind: 2}; a pending request cancelled when the user types;
//     the edit applied, then its command run through client:exec_cmd (a
//     workspace/executeCommand request); no didShowInlineEdit.
//   - copilot.el (copilot-emacs/copilot.el 277ca35, copilot-nes.el):
//     {textDocument: {uri, version}, position} in UTF-16 (it offers no
//     position encoding); didShowInlineEdit {item: {command}}; on accept
//     delete-region and insert, then workspace/executeCommand sent as a
//     notification with the command's command and arguments.

// copilotPause is the pause of these sessions: long enough that a
// copilotInlineEdit sent right after the edit arrives within it.
const copilotPause = 400

// neovimInit returns initialize params as Neovim sends them (the parts
// kimi-lsp reads), offering encodings, with kimi settings as
// initialization options (the documented setups' init_options).
func neovimInit(root string, encodings []string, settings map[string]any) map[string]any {
	p := lsptest.DefaultInitializeParams(root)
	p["clientInfo"] = map[string]any{"name": "Neovim", "version": "0.11.4"}
	caps := p["capabilities"].(map[string]any)
	caps["general"] = map[string]any{"positionEncodings": encodings}
	p["initializationOptions"] = map[string]any{"kimi": settings}
	return p
}

// copilotElInit returns initialize params exactly as copilot.el sends them
// (copilot--start-server, copilot--client-capabilities).
func copilotElInit(root string) map[string]any {
	return map[string]any{
		"processId": nil,
		"rootUri":   root,
		"capabilities": map[string]any{
			"workspace":    map[string]any{"workspaceFolders": true},
			"textDocument": map[string]any{"inlineCompletion": map[string]any{"dynamicRegistration": false}},
			"copilot":      map[string]any{"ipCodeCitation": true, "watchedFiles": false},
		},
		"workspaceFolders": []any{map[string]any{"uri": root, "name": filepath.Base(root)}},
		"initializationOptions": map[string]any{
			"editorInfo":       map[string]any{"name": "Emacs", "version": "30.1"},
			"editorPluginInfo": map[string]any{"name": "copilot.el", "version": "0.5"},
		},
	}
}

// copilotSession is a session with the stand-in provider whose editor
// initializes with init(root); userTOML is the user's configuration file.
func copilotSession(t *testing.T, init func(root string) map[string]any, userTOML string, rules ...modeltest.Rule) *compSession {
	t.Helper()
	cs := newCompProvider(t, rules...)
	dir := cs.dir
	cs.session = newSessionOpts(t, Options{Config: providerConfigFile(t, cs.prov, "[verify]\nenable = \"off\"\n"+userTOML)}, nil)
	cs.initialize(init(string(workspace.FileURI(dir))))
	return cs
}

// inlineEdits is copilotInlineEdit's answer as the plugins read it.
type inlineEdits struct {
	Edits []struct {
		Text         string `json:"text"`
		TextDocument struct {
			URI     string `json:"uri"`
			Version *int32 `json:"version"`
		} `json:"textDocument"`
		Range   rangeJSON       `json:"range"`
		Command json.RawMessage `json:"command"`
	} `json:"edits"`
}

// inlineEdit sends textDocument/copilotInlineEdit with params and returns
// its answer.
func (cs *compSession) inlineEdit(params map[string]any) inlineEdits {
	cs.t.Helper()
	var out inlineEdits
	if err := cs.ed.Call(ctxT(cs.t), methodCopilotInlineEdit, params, &out); err != nil {
		cs.t.Fatal(err)
	}
	if out.Edits == nil {
		cs.t.Fatalf("copilotInlineEdit answered no edits list")
	}
	return out
}

// inlineEditParams are copilot-lsp's and copilot.el's params.
func inlineEditParams(uri string, version int32, pos map[string]any) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": uri, "version": version}, "position": pos}
}

// lineOffset returns the byte offset of line (0-based) of text.
func lineOffset(text string, line uint32) int {
	off := 0
	for range line {
		off += strings.IndexByte(text[off:], '\n') + 1
	}
	return off
}

// applyLines applies an edit whose range starts and ends at line starts
// (next edits replace whole lines) to text.
func applyLines(t *testing.T, text string, r rangeJSON, newText string) string {
	t.Helper()
	if r.Start.Character != 0 || r.End.Character != 0 {
		t.Fatalf("range %+v does not start and end at line starts", r)
	}
	return text[:lineOffset(text, r.Start.Line)] + newText + text[lineOffset(text, r.End.Line):]
}

// renamedAt is renamedGo with the cursor after the renamed parameter.
var renamedAt = strings.Replace(renamedGo, "v int, k int", "v int, k| int", 1)

// TestCopilotInlineEditRenamed (issue 32's check, copilot-lsp's requests):
// textDocument/copilotInlineEdit at the renamed signature, sent within the
// pause after the rename, waits for the burst's one request and answers
// the suggestion with its text and range, the document's version and the
// accept command; didShowInlineEdit counts it displayed, the editor's
// didChange accepted.
func TestCopilotInlineEditRenamed(t *testing.T) {
	settings := map[string]any{"nextEdit": map[string]any{"debounceMs": copilotPause}}
	cs := copilotSession(t, func(root string) map[string]any {
		return neovimInit(root, []string{"utf-16"}, settings) // the documented copilot-lsp setup
	}, "", modeltest.Rule{Content: renameDiff})
	uri, _ := cs.file("main.go", scaleGo+"|")
	pos := cs.change(uri, renamedAt)
	got := cs.inlineEdit(inlineEditParams(uri, 2, pos))
	if len(got.Edits) != 1 {
		t.Fatalf("copilotInlineEdit = %+v, want the suggestion", got)
	}
	e := got.Edits[0]
	if e.Range.Start.Line != 3 || !strings.Contains(e.Text, "if k == 0") || !strings.Contains(e.Text, "return v * k") {
		t.Errorf("edit %+v, want the uses below the signature (line 3 on)", e)
	}
	if e.TextDocument.URI != uri || e.TextDocument.Version == nil || *e.TextDocument.Version != 2 {
		t.Errorf("edit's textDocument %+v, want %s version 2", e.TextDocument, uri)
	}
	if after := applyLines(t, renamedGo, e.Range, e.Text); after != renamedAll {
		t.Errorf("text over range gives\n%s\nwant\n%s", after, renamedAll)
	}
	var cmd inlineEditCommand
	if err := json.Unmarshal(e.Command, &cmd); err != nil || cmd.Command != cmdNextEditAccepted || len(cmd.Arguments) != 1 {
		t.Errorf("edit's command %s: want %s {uri, id}", e.Command, cmdNextEditAccepted)
	}
	if n := len(cs.prov.Requests()); n != 1 {
		t.Errorf("%d provider requests, want the burst's one", n)
	}
	// copilot-lsp once it displayed the edit, then apply_text_edits.
	if err := cs.ed.Notify(methodDidShowInlineEdit, map[string]any{"item": map[string]any{"command": e.Command}}); err != nil {
		t.Fatal(err)
	}
	cs.change(uri, renamedAll+"|")
	if st := cs.nextStats(); st.Shown != 1 || st.Displayed != 1 || st.Accepted != 1 || st.Stale != 0 {
		t.Errorf("kimi.stats nextEdit = %+v, want 1 shown, 1 displayed, 1 accepted", st)
	}
	// Asked again with no edit since: nothing, and no request.
	if again := cs.inlineEdit(inlineEditParams(uri, 3, map[string]any{"line": 3, "character": 0})); len(again.Edits) != 0 {
		t.Errorf("after the accept: %+v, want no edits", again)
	}
	if n := len(cs.prov.Requests()); n != 1 {
		t.Errorf("%d provider requests after the accept, want 1", n)
	}
}

// TestCopilotInlineEditSidekick (sidekick.nvim's requests, in the
// session Neovim's offer of UTF-8, UTF-16 and UTF-32 makes: UTF-16, D87): its extra context param is ignored; a request it cancels
// (the user typed) is answered cancelled and the next one gets the
// suggestion, with still one provider request; its accept command (a
// workspace/executeCommand request after the didChange that applied the
// edit) answers accepted and counts nothing twice.
func TestCopilotInlineEditSidekick(t *testing.T) {
	settings := map[string]any{"nextEdit": map[string]any{"debounceMs": copilotPause}}
	cs := copilotSession(t, func(root string) map[string]any {
		return neovimInit(root, []string{"utf-8", "utf-16", "utf-32"}, settings)
	}, "", modeltest.Rule{Content: renameDiff})
	uri, _ := cs.file("main.go", scaleGo+"|")
	if err := cs.ed.Notify("textDocument/didFocus", map[string]any{"textDocument": map[string]any{"uri": uri}}); err != nil {
		t.Fatal(err)
	}
	pos := cs.change(uri, renamedAt)
	params := inlineEditParams(uri, 2, pos)
	params["context"] = map[string]any{"triggerKind": 2}
	id := cs.ed.NextID()
	first, err := cs.ed.Send(id, methodCopilotInlineEdit, params)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.ed.Notify("$/cancelRequest", map[string]any{"id": json.RawMessage(id)}); err != nil {
		t.Fatal(err)
	}
	if m, err := lsptest.Await(ctxT(t), first); err != nil || m.Error == nil {
		t.Errorf("the cancelled request: %+v, %v; want an error", m, err)
	}
	got := cs.inlineEdit(params)
	if len(got.Edits) != 1 || got.Edits[0].Range.Start.Line != 3 {
		t.Fatalf("copilotInlineEdit = %+v, want the suggestion at line 3", got)
	}
	e := got.Edits[0]
	if after := applyLines(t, renamedGo, e.Range, e.Text); after != renamedAll {
		t.Errorf("text over range gives\n%s\nwant\n%s", after, renamedAll)
	}
	cs.change(uri, renamedAll+"|")
	var cmd inlineEditCommand
	if err := json.Unmarshal(e.Command, &cmd); err != nil {
		t.Fatal(err)
	}
	var reply copilotAcceptedReply
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": cmd.Command, "arguments": cmd.Arguments}, &reply); err != nil || !reply.Accepted {
		t.Errorf("the accept command: %+v, %v; want accepted", reply, err)
	}
	if st := cs.nextStats(); st.Requested != 1 || st.Shown != 1 || st.Accepted != 1 || st.Displayed != 0 {
		t.Errorf("kimi.stats nextEdit = %+v, want 1 request, 1 shown, 1 accepted", st)
	}
}

// TestCopilotInlineEditEmacs (copilot.el's requests): the suggestion in
// UTF-16, then the accept as an Emacs that reports the deletion and the
// insertion as two didChanges: the first takes the suggestion apart, and
// the accept command, sent as a notification, counts it accepted rather
// than stale and ends the pause those didChanges started (asked again, no
// second provider request goes out).
func TestCopilotInlineEditEmacs(t *testing.T) {
	// The default pause (1 s): the accept command comes well within the
	// one the didChanges start.
	cs := copilotSession(t, copilotElInit, "", modeltest.Rule{Content: renameDiff})
	uri, _ := cs.file("main.go", scaleGo+"|")
	pos := cs.change(uri, renamedAt)
	got := cs.inlineEdit(inlineEditParams(uri, 2, pos))
	if len(got.Edits) != 1 {
		t.Fatalf("copilotInlineEdit = %+v, want the suggestion", got)
	}
	e := got.Edits[0]
	if err := cs.ed.Notify(methodDidShowInlineEdit, map[string]any{"item": map[string]any{"command": e.Command}}); err != nil {
		t.Fatal(err)
	}
	// copilot-nes-accept: delete-region, then insert.
	start, end := lineOffset(renamedGo, e.Range.Start.Line), lineOffset(renamedGo, e.Range.End.Line)
	cs.change(uri, renamedGo[:start]+renamedGo[end:]+"|")
	cs.change(uri, renamedGo[:start]+e.Text+renamedGo[end:]+"|")
	var cmd inlineEditCommand
	if err := json.Unmarshal(e.Command, &cmd); err != nil {
		t.Fatal(err)
	}
	if err := cs.ed.Notify("workspace/executeCommand", map[string]any{"command": cmd.Command, "arguments": cmd.Arguments}); err != nil {
		t.Fatal(err)
	}
	if st := cs.nextStats(); st.Accepted != 1 || st.Stale != 0 || st.Displayed != 1 {
		t.Errorf("kimi.stats nextEdit = %+v, want 1 accepted, none stale, 1 displayed", st)
	}
	if again := cs.inlineEdit(inlineEditParams(uri, 4, pos)); len(again.Edits) != 0 {
		t.Errorf("after the accept: %+v, want no edits", again)
	}
	if n := len(cs.prov.Requests()); n != 1 {
		t.Errorf("%d provider requests, want 1: the accepted edit is no burst of the user's", n)
	}
	if log := cs.logbuf.String(); strings.Contains(log, "editorInfo") || strings.Contains(log, "editorPluginInfo") {
		t.Errorf("copilot.el's initializationOptions were taken for settings:\n%s", log)
	}
}

// TestCopilotInlineEditStale: a version that is not the document's
// answers no edits and starts nothing; a document that is not open, no
// edits; a request without uri or position, a clear error.
func TestCopilotInlineEditStale(t *testing.T) {
	settings := map[string]any{"nextEdit": map[string]any{"debounceMs": copilotPause}}
	cs := copilotSession(t, func(root string) map[string]any {
		return neovimInit(root, []string{"utf-16"}, settings)
	}, "", modeltest.Rule{Content: renameDiff})
	uri, _ := cs.file("main.go", scaleGo+"|")
	pos := cs.change(uri, renamedAt)
	if got := cs.inlineEdit(inlineEditParams(uri, 1, pos)); len(got.Edits) != 0 {
		t.Errorf("version 1 after version 2: %+v, want no edits", got)
	}
	if got := cs.inlineEdit(inlineEditParams(uri, 2, pos)); len(got.Edits) != 1 {
		t.Errorf("version 2: %+v, want the suggestion", got)
	}
	if got := cs.inlineEdit(inlineEditParams(uri+"x", 2, pos)); len(got.Edits) != 0 {
		t.Errorf("a document not open: %+v, want no edits", got)
	}
	for _, bad := range []map[string]any{
		{"position": pos},
		{"textDocument": map[string]any{"uri": uri, "version": 2}},
	} {
		err := cs.ed.Call(ctxT(t), methodCopilotInlineEdit, bad, nil)
		var re *lsptest.ResponseError
		if !errors.As(err, &re) || re.Code != -32602 {
			t.Errorf("params %v: %v, want invalid params", bad, err)
		}
	}
	if n := len(cs.prov.Requests()); n != 1 {
		t.Errorf("%d provider requests, want 1", n)
	}
}

// TestCopilotInlineEditEncoding: the range is in the session's position
// encoding. A suggestion that ends at the end of a file without a final
// newline, on a line holding "é", ends at character 12 in a UTF-8 session
// (sidekick.nvim converts with the negotiated encoding) and at 11 in a
// UTF-16 one (copilot-lsp's documented setup, copilot.el); applied in that
// encoding, its text gives the renamed file either way.
func TestCopilotInlineEditEncoding(t *testing.T) {
	text := scaleGo + "\n// é factor"
	want := strings.ReplaceAll(text, "factor", "k")
	diff := "--- a/main.go\n+++ b/main.go\n@@ -3,8 +3,8 @@\n func scale(v int, k int) int {\n-\tif factor == 0 {\n+\tif k == 0 {\n \t\treturn v\n \t}\n-\treturn v * factor\n+\treturn v * k\n }\n \n-// é factor\n\\ No newline at end of file\n+// é k\n\\ No newline at end of file\n"
	for _, tc := range []struct {
		offer   []string
		enc     string // the session's, negotiated from offer
		wantEnd uint32
	}{
		{[]string{"utf-8"}, "utf-8", 12},
		{[]string{"utf-16"}, "utf-16", 11},
		// Neovim 0.12's offer: UTF-16, the other servers' (D87).
		{[]string{"utf-8", "utf-16", "utf-32"}, "utf-16", 11},
	} {
		t.Run(strings.Join(tc.offer, ","), func(t *testing.T) {
			settings := map[string]any{"nextEdit": map[string]any{"debounceMs": copilotPause}}
			cs := copilotSession(t, func(root string) map[string]any {
				return neovimInit(root, tc.offer, settings)
			}, "", modeltest.Rule{Content: diff})
			uri, _ := cs.file("main.go", text+"|")
			pos := cs.change(uri, strings.Replace(text, "v int, factor int", "v int, k| int", 1))
			got := cs.inlineEdit(inlineEditParams(uri, 2, pos))
			if len(got.Edits) != 1 {
				t.Fatalf("copilotInlineEdit = %+v, want the suggestion", got)
			}
			e := got.Edits[0]
			if e.Range.Start.Line != 3 || e.Range.Start.Character != 0 || e.Range.End.Line != 9 || e.Range.End.Character != tc.wantEnd {
				t.Fatalf("range %+v, want 3:0 to 9:%d", e.Range, tc.wantEnd)
			}
			renamed := strings.Replace(text, "v int, factor int", "v int, k int", 1)
			last := lineOffset(renamed, 9)
			var end int // character wantEnd of the last line, in the encoding
			if tc.enc == "utf-8" {
				end = last + int(e.Range.End.Character)
			} else {
				end = last + len(string([]rune(renamed[last:])[:e.Range.End.Character]))
			}
			if after := renamed[:lineOffset(renamed, 3)] + e.Text + renamed[end:]; after != want {
				t.Errorf("text over range gives\n%q\nwant\n%q", after, want)
			}
		})
	}
}
