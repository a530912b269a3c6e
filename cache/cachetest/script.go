package cachetest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Editor makes small random edits the way a user types: insert or delete a
// line, type a few characters, rename a word. It is deterministic for a
// given random source.
type Editor struct {
	R *rand.Rand
}

// Edit makes 1-5 small edits near byte off of text and returns the new text
// and a new offset.
func (e Editor) Edit(text string, off int) (string, int) {
	n := 1 + e.R.IntN(5)
	for i := 0; i < n; i++ {
		lineStart := strings.LastIndexByte(text[:off], '\n') + 1
		// Move a few lines up or down.
		for j := e.R.IntN(3); j > 0 && lineStart > 0; j-- {
			lineStart = strings.LastIndexByte(text[:lineStart-1], '\n') + 1
		}
		lineEnd := len(text)
		if k := strings.IndexByte(text[lineStart:], '\n'); k >= 0 {
			lineEnd = lineStart + k
		}
		switch e.R.IntN(5) {
		case 0: // insert a line
			ins := fmt.Sprintf("\t// note %d\n", e.R.IntN(1000))
			text = text[:lineStart] + ins + text[lineStart:]
		case 1: // delete a line
			if lineEnd < len(text) {
				text = text[:lineStart] + text[lineEnd+1:]
			}
		case 2: // type a few characters mid-line
			at := lineStart + e.R.IntN(lineEnd-lineStart+1)
			text = text[:at] + "x1" + text[at:]
		case 3: // rename a word on the line
			line := text[lineStart:lineEnd]
			if i := strings.Index(line, "err"); i >= 0 {
				text = text[:lineStart+i] + "e2" + text[lineStart+i+3:]
			} else {
				text = text[:lineEnd] + " // ok" + text[lineEnd:]
			}
		case 4: // undo-like: delete a few characters
			if lineEnd-lineStart > 4 {
				text = text[:lineStart+1] + text[lineStart+3:]
			}
		}
		off = min(lineStart, len(text))
	}
	return text, off
}

// ScriptDoc is an open document of a scripted session.
type ScriptDoc struct {
	Path, Text string
	Version    int32
	// LastEdited is a sequence number of its last edit (larger is later).
	LastEdited int64
}

// ScriptAction is an action a step of a scripted session asks for.
type ScriptAction struct{ Name, Instruction string }

// ScriptActions are the actions a scripted session picks from.
var ScriptActions = []ScriptAction{
	{"explain", "Explain what the selected code does and why."},
	{"fix", "Fix the problem reported by the diagnostics in the selected code. Answer with a unified diff."},
	{"rewrite", "Rewrite the selected code to be clearer. Answer with a unified diff."},
	{"document", "Add a doc comment to the selected code. Answer with a unified diff."},
	{"tests", "Write table-driven tests for the selected code."},
}

// ScriptStep is one request of a scripted session: the documents after the
// step's edits, and the action asked on a range of the active one.
type ScriptStep struct {
	At     time.Time
	Docs   []ScriptDoc
	Active int // index in Docs
	// SelStart and SelEnd delimit the selection in Docs[Active].Text.
	SelStart, SelEnd int
	Action           ScriptAction
	// DiagLine is the 0-based line of a compiler error for "fix", else -1.
	DiagLine int
}

// Script makes an editing session over docs (which it does not modify):
// at every step, one time in four switch the active document to a random
// one and a random line (the first is docs[active]), type 1-5 small edits
// near the line, then ask for one of ScriptActions on 1-8 lines there. Gaps
// between steps are 10 s to 2 min (inside a 5 minute TTL), plus a 10 minute
// idle gap before step idleAt (-1 for none). The same arguments give the
// same session.
func Script(docs []ScriptDoc, active int, seed uint64, steps, idleAt int, start time.Time) []ScriptStep {
	docs = append([]ScriptDoc(nil), docs...)
	r := rand.New(rand.NewPCG(seed, 1))
	ed := Editor{r}
	off := len(docs[active].Text) / 3
	now := start
	var out []ScriptStep
	for i := 0; i < steps; i++ {
		if i > 0 && r.IntN(4) == 0 {
			active = r.IntN(len(docs))
			off = r.IntN(len(docs[active].Text))
		}
		docs[active].Text, off = ed.Edit(docs[active].Text, min(off, len(docs[active].Text)))
		docs[active].Version++
		docs[active].LastEdited = int64(100 + i)
		now = now.Add(time.Duration(10+r.IntN(110)) * time.Second)
		if i == idleAt {
			now = now.Add(10 * time.Minute)
		}
		text := docs[active].Text
		start := strings.LastIndexByte(text[:off], '\n') + 1
		end := start
		for n := 1 + r.IntN(8); n > 0 && end < len(text); n-- {
			if j := strings.IndexByte(text[end:], '\n'); j >= 0 {
				end += j + 1
			} else {
				end = len(text)
			}
		}
		st := ScriptStep{At: now, Docs: append([]ScriptDoc(nil), docs...), Active: active, SelStart: start, SelEnd: end,
			Action: ScriptActions[r.IntN(len(ScriptActions))], DiagLine: -1}
		if st.Action.Name == "fix" {
			st.DiagLine = strings.Count(text[:start], "\n")
		}
		out = append(out, st)
	}
	return out
}
