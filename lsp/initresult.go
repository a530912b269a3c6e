package lsp

import (
	"encoding/json"
	"strconv"
)

// MarshalJSON encodes the initialize result field by field, as
// encoding/json would from the struct tags (TestInitializeResultJSON
// holds it to that, byte for byte). encoding/json builds its encoders for
// a type by reflection on first use; for this result's eleven struct
// types that was the largest part of the instructions between reading
// initialize and writing its reply (bench/README.md, "Read loop, start-up
// and memory"). The result goes to jsonrpc2 as json.RawMessage, which its
// codec (segmentio) passes on without building one for these types. A
// field added to these types must be added here too; the test fails until
// it is.
func (r *initializeResult) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 512)
	c := &r.Capabilities
	b = append(b, `{"capabilities":{"positionEncoding":`...)
	b = appendJSONString(b, c.PositionEncoding)

	b = append(b, `,"textDocumentSync":{`...)
	t := &c.TextDocumentSync
	first := true
	field := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
	}
	if t.OpenClose {
		field("openClose")
		b = append(b, "true"...)
	}
	if t.Change != 0 {
		field("change")
		b = strconv.AppendFloat(b, float64(t.Change), 'f', -1, 64) // a float64 kind
	}
	if t.WillSave {
		field("willSave")
		b = append(b, "true"...)
	}
	if t.WillSaveWaitUntil {
		field("willSaveWaitUntil")
		b = append(b, "true"...)
	}
	if t.Save != nil {
		field("save")
		b = append(b, '{')
		if t.Save.IncludeText {
			b = append(b, `"includeText":true`...)
		}
		b = append(b, '}')
	}
	b = append(b, '}')

	b = append(b, `,"codeActionProvider":{"codeActionKinds":`...)
	b = appendJSONStrings(b, c.CodeActionProvider.CodeActionKinds)
	b = append(b, `,"resolveProvider":`...)
	b = strconv.AppendBool(b, c.CodeActionProvider.ResolveProvider)
	b = append(b, `},"executeCommandProvider":{"commands":`...)
	b = appendJSONStrings(b, c.ExecuteCommandProvider.Commands)
	w := &c.Workspace.WorkspaceFolders
	b = append(b, `},"workspace":{"workspaceFolders":{"supported":`...)
	b = strconv.AppendBool(b, w.Supported)
	b = append(b, `,"changeNotifications":`...)
	b = strconv.AppendBool(b, w.ChangeNotifications)
	b = append(b, `}}`...)
	if c.InlineCompletionProvider {
		b = append(b, `,"inlineCompletionProvider":true`...)
	}
	if p := c.CompletionProvider; p != nil {
		b = append(b, `,"completionProvider":{`...)
		if len(p.TriggerCharacters) > 0 {
			b = append(b, `"triggerCharacters":`...)
			b = appendJSONStrings(b, p.TriggerCharacters)
			b = append(b, ',')
		}
		b = append(b, `"resolveProvider":`...)
		b = strconv.AppendBool(b, p.ResolveProvider)
		b = append(b, '}')
	}
	b = append(b, '}')
	if r.ServerInfo != nil {
		b = append(b, `,"serverInfo":{"name":`...)
		b = appendJSONString(b, r.ServerInfo.Name)
		if r.ServerInfo.Version != "" {
			b = append(b, `,"version":`...)
			b = appendJSONString(b, r.ServerInfo.Version)
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendJSONString appends s as a JSON string, as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // escapes as encoding/json does; a string never fails
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSONStrings appends a list of strings; nil is null.
func appendJSONStrings(b []byte, list []string) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}
