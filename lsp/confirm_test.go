package lsp

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
)

const twoHunkDiff = "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -4,3 +4,3 @@\n func Sub(a, b int) int {\n-\treturn a + b\n+\treturn a - b\n }\n" +
	"@@ -9,3 +9,3 @@\n func Add(a, b int) int {\n-\treturn a - b\n+\treturn a + b\n }\n```\n"

type annotatedEditJSON struct {
	Range        rangeJSON `json:"range"`
	NewText      string    `json:"newText"`
	AnnotationID string    `json:"annotationId"`
}

type annotatedApply struct {
	Edit struct {
		DocumentChanges []struct {
			TextDocument struct {
				URI     string `json:"uri"`
				Version int32  `json:"version"`
			} `json:"textDocument"`
			Edits []annotatedEditJSON `json:"edits"`
		} `json:"documentChanges"`
		ChangeAnnotations map[string]struct {
			Label             string `json:"label"`
			NeedsConfirmation bool   `json:"needsConfirmation"`
		} `json:"changeAnnotations"`
	} `json:"edit"`
}

// applyLineEdits applies single-line-range edits to text (the test's
// edits replace whole line ranges).
func applyLineEdits(text string, edits []annotatedEditJSON) string {
	sort.Slice(edits, func(i, j int) bool { return edits[i].Range.Start.Line > edits[j].Range.Start.Line })
	lines := strings.SplitAfter(text, "\n")
	off := func(l, c uint32) int {
		n := 0
		for i := 0; i < int(l) && i < len(lines); i++ {
			n += len(lines[i])
		}
		return n + int(c)
	}
	for _, e := range edits {
		s, en := off(e.Range.Start.Line, e.Range.Start.Character), off(e.Range.End.Line, e.Range.End.Character)
		text = text[:s] + e.NewText + text[en:]
		lines = strings.SplitAfter(text, "\n")
	}
	return text
}

// TestConfirmHunkByHunk is #26's check: with edits.confirm = "always" and a
// client declaring change annotations, the applyEdit carries one
// annotation per hunk with needsConfirmation; the editor applies one of
// two and the job says so.
func TestConfirmHunkByHunk(t *testing.T) {
	params := lsptest.DefaultInitializeParams("")
	params["rootUri"] = inJobDir
	ws := params["capabilities"].(map[string]any)["workspace"].(map[string]any)
	ws["workspaceEdit"].(map[string]any)["changeAnnotationSupport"] = map[string]any{"groupsOnLabel": false}
	js := newJobSession(t, params, modeltest.Rule{Match: `action="fix"`, Content: twoHunkDiff})
	js.settings(map[string]any{"edits": map[string]any{"confirm": "always"}}, func(s *Server) bool { return s.config().Edits.Confirm == "always" })
	uri := js.file("calc.go", reviewCalc)
	var got annotatedApply
	js.ed.Handle("workspace/applyEdit", func(raw json.RawMessage) (any, *lsptest.ResponseError) {
		json.Unmarshal(raw, &got)
		dc := got.Edit.DocumentChanges[0]
		// The user keeps the first hunk only.
		var keep []annotatedEditJSON
		for _, e := range dc.Edits {
			if e.AnnotationID == dc.Edits[0].AnnotationID {
				keep = append(keep, e)
			}
		}
		text := applyLineEdits(reviewCalc, keep)
		go js.ed.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": dc.TextDocument.Version + 1},
			"contentChanges": []any{map[string]any{"text": text}},
		})
		return map[string]any{"applied": true}, nil
	})
	js.run("kimi.fix", map[string]any{"uri": uri, "range": map[string]any{"start": map[string]any{"line": 3, "character": 0}, "end": map[string]any{"line": 10, "character": 1}}}, "c1")
	end := js.progressEnd(`"c1"`)
	if len(got.Edit.ChangeAnnotations) != 2 {
		t.Fatalf("annotations %+v (end %q)", got.Edit.ChangeAnnotations, end)
	}
	for id, a := range got.Edit.ChangeAnnotations {
		if !a.NeedsConfirmation || !strings.Contains(a.Label, "calc.go:") {
			t.Fatalf("annotation %s %+v", id, a)
		}
	}
	edits := got.Edit.DocumentChanges[0].Edits
	if len(edits) != 2 || edits[0].AnnotationID == edits[1].AnnotationID || edits[0].AnnotationID == "" {
		t.Fatalf("edits %+v", edits)
	}
	if !strings.Contains(end, "1 of 2 hunks applied") {
		t.Fatalf("end %q", end)
	}
}

// TestConfirmWithoutAnnotationSupport: a client without change
// annotations gets the edit whole, as before.
func TestConfirmWithoutAnnotationSupport(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: `action="fix"`, Content: twoHunkDiff})
	js.settings(map[string]any{"edits": map[string]any{"confirm": "always"}}, func(s *Server) bool { return s.config().Edits.Confirm == "always" })
	le := js.liveEditor()
	uri := le.open("calc.go", reviewCalc)
	var raw json.RawMessage
	js.ed.Handle("workspace/applyEdit", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		raw = append(json.RawMessage(nil), p...)
		return le.applyEdit(p)
	})
	js.run("kimi.fix", map[string]any{"uri": uri, "range": map[string]any{"start": map[string]any{"line": 3, "character": 0}, "end": map[string]any{"line": 10, "character": 1}}}, "c1")
	if end := js.progressEnd(`"c1"`); !strings.Contains(end, "2 edits applied") {
		t.Fatalf("end %q", end)
	}
	if strings.Contains(string(raw), "changeAnnotations") || strings.Contains(string(raw), "annotationId") {
		t.Fatalf("annotated edit to a client without support: %s", raw)
	}
}
