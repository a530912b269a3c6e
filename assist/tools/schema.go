// Package tools offers the model its edit tools — read_file, replace_text,
// create_file, delete_file and apply_diff — as strict JSON Schemas, runs
// the model's calls against one pending patch.EditSet (applied by the
// caller at the end, all or nothing), and drives the bounded tool-call loop
// with the model client.
//
// The definitions are plain Go values serialised deterministically (struct
// field order, no maps), because they sit at the start of every prompt, in
// the part the provider's prefix cache must see byte-identical.
//
// Failed edit calls are never hidden. Each edit call is all or nothing; a
// failed one leaves nothing in the set and is recorded (Executor.Failed).
// It counts as redone once an edit call of the same file succeeds in a
// later round, after the model saw the failure. When the model ends the
// conversation with a failed call not redone, Loop tells it which calls
// failed and asks once more; if it still has not redone them, Loop returns
// a *FailedEditsError naming every such call and the caller applies none
// of the edits. Redone failures stay listed in LoopResult.Failed so that
// the caller can mention them.
//
// What goes back to the model names files the way it names them: error
// results, failed-call reasons and correction messages have the absolute
// paths of workspace folders rewritten as workspace-relative paths, and any
// other path under the user's home directory as "~/…" (patch.RelativeText).
package tools

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
)

// Types is a JSON Schema "type": one name, or several (e.g. a nullable
// integer, as strict mode writes optional parameters).
type Types []string

// MarshalJSON writes a single type as a string, several as an array.
func (t Types) MarshalJSON() ([]byte, error) {
	if len(t) == 1 {
		return json.Marshal(t[0])
	}
	return json.Marshal([]string(t))
}

// Schema is the subset of JSON Schema the tools use.
type Schema struct {
	Type                 Types      `json:"type"`
	Description          string     `json:"description,omitempty"`
	Properties           Properties `json:"properties,omitempty"`
	Required             []string   `json:"required,omitempty"`
	AdditionalProperties *bool      `json:"additionalProperties,omitempty"`
	Minimum              *int       `json:"minimum,omitempty"`
	// Items is an array's element schema.
	Items *Schema `json:"items,omitempty"`
}

// Property is one named property of an object schema.
type Property struct {
	Name   string
	Schema Schema
}

// Properties is an ordered set of properties, written as a JSON object in
// the order given.
type Properties []Property

// MarshalJSON writes the properties as an object, in order.
func (ps Properties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(p.Name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(p.Schema)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Definition is one tool offered to the model.
type Definition struct {
	Name        string
	Description string
	Parameters  Schema
}

// ParametersJSON returns the parameter schema as JSON, byte-identical on
// every call.
func (d Definition) ParametersJSON() json.RawMessage {
	b, err := json.Marshal(d.Parameters)
	if err != nil {
		panic("tools: schema does not marshal: " + err.Error()) // static values; a test covers them
	}
	return b
}

// Names of the tools.
const (
	ReadFile    = "read_file"
	ReplaceText = "replace_text"
	CreateFile  = "create_file"
	DeleteFile  = "delete_file"
	ApplyDiff   = "apply_diff"
)

func str(desc string) Schema { return Schema{Type: Types{"string"}, Description: desc} }

func object(props ...Property) Schema {
	f := false
	req := make([]string, len(props))
	for i, p := range props {
		req[i] = p.Name
	}
	// Strict mode: every property required, optional ones nullable.
	return Schema{Type: Types{"object"}, Properties: props, Required: req, AdditionalProperties: &f}
}

var one = 1

// definitions are the tools' definitions, built on first use: nothing
// before the initialize reply needs them (their composite literal was 30
// allocations at package init).
var definitions = sync.OnceValue(func() []Definition {
	return []Definition{
		{
			Name: ReadFile,
			Description: "Read a file of the workspace, or a range of its lines, as it stands with the edits " +
				"made so far in this conversation. Use it to see code you were not shown before editing it.",
			Parameters: object(
				Property{"path", str("Path relative to the workspace root.")},
				Property{"start_line", Schema{Type: Types{"integer", "null"}, Minimum: &one,
					Description: "First line to read (1-based), or null for the start of the file."}},
				Property{"end_line", Schema{Type: Types{"integer", "null"}, Minimum: &one,
					Description: "Last line to read (inclusive), or null for the end of the file."}},
			),
		},
		{
			Name: ReplaceText,
			Description: "Replace one exact piece of text in a file. old_text must occur exactly once in the file; " +
				"copy it verbatim, including indentation, with enough surrounding lines to be unique.",
			Parameters: object(
				Property{"path", str("Path relative to the workspace root.")},
				Property{"old_text", str("The text to replace, exactly as it appears in the file.")},
				Property{"new_text", str("The replacement text, written out in full (no placeholders for unchanged code).")},
			),
		},
		{
			Name:        CreateFile,
			Description: "Create a new file with the given content. Fails if the file exists.",
			Parameters: object(
				Property{"path", str("Path relative to the workspace root.")},
				Property{"content", str("The whole content of the new file.")},
			),
		},
		{
			Name:        DeleteFile,
			Description: "Delete a file of the workspace.",
			Parameters: object(
				Property{"path", str("Path relative to the workspace root.")},
			),
		},
		{
			Name: ApplyDiff,
			Description: "Apply a unified diff to one or more files (--- a/path and +++ b/path headers, @@ hunks with " +
				"context lines copied exactly from the files; /dev/null to create or delete a file). All hunks of all " +
				"files apply, or none.",
			Parameters: object(
				Property{"diff", str("The unified diff.")},
			),
		},
	}
})

// ModelTools returns the definitions as the model client's strict function
// tools, ready for model.Request.Tools.
func ModelTools() []model.Tool {
	defs := definitions()
	out := make([]model.Tool, len(defs))
	for i, d := range defs {
		t := model.FunctionTool(d.Name, d.Description, d.ParametersJSON())
		t.Function.Strict = true
		out[i] = t
	}
	return out
}
