package lsp

import (
	"encoding/json"
	"reflect"
	"testing"

	"go.lsp.dev/protocol"
)

// TestInitializeResultJSON holds the hand-written encoder to what
// encoding/json makes of the same struct tags, byte for byte, over every
// optional part.
func TestInitializeResultJSON(t *testing.T) {
	// plain has the fields and tags of initializeResult but not its
	// MarshalJSON, so encoding/json encodes it by reflection.
	type plain initializeResult
	base := func() initializeResult {
		return initializeResult{
			Capabilities: serverCapabilities{
				PositionEncoding:       "utf-16",
				TextDocumentSync:       protocol.TextDocumentSyncOptions{OpenClose: true, Change: protocol.TextDocumentSyncKindIncremental, Save: &protocol.SaveOptions{}},
				CodeActionProvider:     codeActionOptions{CodeActionKinds: codeActionKinds()},
				ExecuteCommandProvider: protocol.ExecuteCommandOptions{Commands: commandNames()},
				Workspace: workspaceServerCapabilities{WorkspaceFolders: workspaceFoldersServerCapabilities{
					Supported: true, ChangeNotifications: true,
				}},
			},
			ServerInfo: &protocol.ServerInfo{Name: "kimi-lsp", Version: "v1.2.3 (0e08bdbd2d07+dirty)"},
		}
	}
	variants := map[string]func(r *initializeResult){
		"as sent": func(*initializeResult) {},
		"utf-8, no save": func(r *initializeResult) {
			r.Capabilities.PositionEncoding = "utf-8"
			r.Capabilities.TextDocumentSync.Save = nil
		},
		"save with text": func(r *initializeResult) { r.Capabilities.TextDocumentSync.Save.IncludeText = true },
		"zero sync":      func(r *initializeResult) { r.Capabilities.TextDocumentSync = protocol.TextDocumentSyncOptions{} },
		"no lists": func(r *initializeResult) {
			r.Capabilities.CodeActionProvider.CodeActionKinds = nil
			r.Capabilities.ExecuteCommandProvider.Commands = []string{}
		},
		"resolve, no folders": func(r *initializeResult) {
			r.Capabilities.CodeActionProvider.ResolveProvider = true
			r.Capabilities.Workspace = workspaceServerCapabilities{}
		},
		"inline completion": func(r *initializeResult) { r.Capabilities.InlineCompletionProvider = true },
		"completion items": func(r *initializeResult) {
			r.Capabilities.CompletionProvider = &completionOptions{TriggerCharacters: completionTriggers}
		},
		"completion, no triggers": func(r *initializeResult) {
			r.Capabilities.CompletionProvider = &completionOptions{ResolveProvider: true}
		},
		"no version":  func(r *initializeResult) { r.ServerInfo.Version = "" },
		"no info":     func(r *initializeResult) { r.ServerInfo = nil },
		"odd strings": func(r *initializeResult) { r.ServerInfo.Name = "a\"b\\c<d>&\u2028\x01é\xff" },
	}
	for name, change := range variants {
		r := base()
		change(&r)
		got, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(plain(r))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\ngot  %s\nwant %s", name, got, want)
		}
	}
}

// TestInitializeResultFields fails when a field is added to a type the
// hand-written encoder covers: the encoder must learn it (and the variants
// above must set it) first.
func TestInitializeResultFields(t *testing.T) {
	for _, c := range []struct {
		v any
		n int
	}{
		{initializeResult{}, 2}, {serverCapabilities{}, 7}, {protocol.TextDocumentSyncOptions{}, 5}, {protocol.SaveOptions{}, 1},
		{codeActionOptions{}, 2}, {protocol.ExecuteCommandOptions{}, 1}, {workspaceServerCapabilities{}, 1},
		{workspaceFoldersServerCapabilities{}, 2}, {completionOptions{}, 2}, {protocol.ServerInfo{}, 2},
	} {
		v, n := c.v, c.n
		if got := reflect.TypeOf(v).NumField(); got != n {
			t.Errorf("%T has %d fields, the encoder knows %d: teach initializeResult.MarshalJSON the new one", v, got, n)
		}
	}
}
