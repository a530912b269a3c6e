package corpus

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/patch/patchtest"
	"github.com/kimi-lsp/kimi-lsp/assist/tools"
)

// Repairable reports whether a case can go through a correction round: a
// one-file edit whose first answer our applier refuses, with a known right
// result (an APPLY case's After, or a REFUSE case's Intended).
func Repairable(c Case) bool {
	want := c.Intended
	if c.Expect == Apply {
		want = c.After
	}
	return len(c.Before) == 1 && len(want) == 1 && want[0].Path == c.Before[0].Path
}

// Repair runs a case through tools.Loop as the engine does (reply diffs
// applied, one correction round) with a scripted model: its first answer is
// the case's reply; its second answer is built from the correction prompt
// (see scriptedModel) as a diff, or as replace_text calls when the loop
// forces that tool. The verdict compares the files with the right result:
// Correct (repaired), Wrong (changed otherwise) or Refused (unchanged).
// rounds is the number of model requests the loop made.
func Repair(c Case, tmp string, mode tools.CorrectionMode, seed uint64) (v Verdict, rounds int, err error) {
	dir, err := os.MkdirTemp(tmp, "repair")
	if err != nil {
		return "", 0, err
	}
	defer os.RemoveAll(dir)
	if err := Materialize(c, dir); err != nil {
		return "", 0, err
	}
	d, err := patchtest.NewDir(dir)
	if err != nil {
		return "", 0, err
	}
	want := c.Intended
	if c.Expect == Apply {
		want = c.After
	}
	m := &scriptedModel{c: c, want: want[0].Text, r: rand.New(rand.NewPCG(seed, 7))}
	req := &model.Request{
		Model:      model.ModelPro,
		Messages:   []model.Message{model.SystemMessage("You edit code."), model.UserMessage("Make the change.")},
		Tools:      tools.ModelTools(),
		ToolChoice: model.ToolChoiceAuto,
	}
	x := tools.NewExecutor(patch.NewEditSet(d, patch.Options{}), nil)
	res, lerr := tools.Loop(context.Background(), m, req, x, tools.LoopOptions{ReplyDiff: true, DiffRetries: 1, Correction: mode})
	if lerr == nil {
		changes, cerr := x.Set().Changes()
		if cerr == nil {
			if err := d.Write(changes); err != nil {
				return "", 0, err
			}
		}
	}
	got, err := Snapshot(dir)
	if err != nil {
		return "", 0, err
	}
	switch {
	case same(got, want):
		v = Correct
	case same(got, c.Before):
		v = Refused
	default:
		v = Wrong
	}
	return v, res.Rounds, nil
}

// scriptedModel answers the loop. Round one: the case's reply. After a
// correction prompt it writes its intended change again, as a model that
// follows the prompt would: each hunk's context and removed lines are
// copied exactly from the lines the prompt quotes where it quotes them,
// and from memory elsewhere; it widens its context until the hunk's old
// lines occur once in the file (the prompt says when they did not). Its
// habits (see habits) are drawn independently per hunk. Any other turn
// ends with "Done.".
type scriptedModel struct {
	c      Case
	want   string
	r      *rand.Rand
	rounds int
}

var quoteRE = regexp.MustCompile(`^\s+(\d+) \| (.*)$`)

func (m *scriptedModel) Complete(_ context.Context, req *model.Request) (*model.Response, error) {
	m.rounds++
	last := req.Messages[len(req.Messages)-1]
	answer := func(msg model.Message) (*model.Response, error) {
		msg.Role = model.RoleAssistant
		return &model.Response{Message: msg, FinishReason: model.FinishStop}, nil
	}
	if m.rounds == 1 {
		return answer(model.Message{Content: m.c.Diff})
	}
	if last.Role != model.RoleUser || !strings.Contains(last.Content, "The edit was not applied") {
		return answer(model.Message{Content: "Done."})
	}
	quotes := map[int]string{}
	for _, l := range strings.Split(last.Content, "\n") {
		if q := quoteRE.FindStringSubmatch(l); q != nil {
			n, _ := strconv.Atoi(q[1])
			quotes[n] = q[2]
		}
	}
	path, before := m.c.Before[0].Path, m.c.Before[0].Text
	hunks := m.intent(before)
	forced := req.ToolChoice.Function == tools.ReplaceText
	var calls []model.ToolCall
	var diff strings.Builder
	fmt.Fprintf(&diff, "--- a/%s\n+++ b/%s\n", path, path)
	u := swapUnit(before)
	for i, h := range hunks {
		m.habits(h, quotes, u, forced)
		if forced {
			var oldT, newT strings.Builder
			for _, l := range h.lines {
				if l == "" {
					l = " "
				}
				if l[0] != '+' {
					oldT.WriteString(l[1:] + "\n")
				}
				if l[0] != '-' {
					newT.WriteString(l[1:] + "\n")
				}
			}
			args, _ := json.Marshal(map[string]string{"path": path, "old_text": oldT.String(), "new_text": newT.String()})
			calls = append(calls, model.ToolCall{ID: fmt.Sprintf("call_%d_%d", m.rounds, i), Type: "function",
				Function: model.FunctionCall{Name: tools.ReplaceText, Arguments: string(args)}})
			continue
		}
		d := &ddiff{hunks: []*dhunk{h}}
		diff.WriteString(d.render(numbered))
	}
	if forced {
		return answer(model.Message{ToolCalls: calls})
	}
	return answer(model.Message{Content: "Corrected:\n\n```diff\n" + diff.String() + "```\n"})
}

// intent returns the hunks of the intended change against the current file,
// each with the least context (three lines or more) under which every
// hunk's old lines occur once.
func (m *scriptedModel) intent(before string) []*dhunk {
	path := m.c.Before[0].Path
	var hs []*dhunk
	for ctx := 3; ctx <= 15; ctx++ {
		hs = parseUnified(patch.Unified(path, path, before, m.want, ctx)).hunks
		unique := true
		for _, h := range hs {
			if clearReading(before, h) != 1 {
				unique = false
			}
		}
		if unique {
			break
		}
	}
	return hs
}

// habits perturbs a second answer's hunk as models do, each habit with
// probability 1/3: lines not quoted by the prompt are written from memory
// with trailing whitespace or the other indentation style; leading or
// trailing context is trimmed; and, in a diff only, the header's counts
// are off, its numbers missing, or blank context lines lose their space.
// Quoted lines are copied exactly.
func (m *scriptedModel) habits(h *dhunk, quotes map[int]string, u string, tool bool) {
	p := func() bool { return m.r.IntN(3) == 0 }
	// Which old lines the prompt quoted (their file line numbers).
	quoted := make([]bool, len(h.lines))
	n := h.oldStart
	for k, l := range h.lines {
		if strings.HasPrefix(l, "+") {
			continue
		}
		if q, ok := quotes[n]; ok && q == l[1:] {
			quoted[k] = true
		}
		n++
	}
	if p() { // trailing whitespace on lines from memory
		for k, l := range h.lines {
			if !quoted[k] && !strings.HasPrefix(l, "+") && m.r.IntN(2) == 0 {
				h.lines[k] = l + " "
			}
		}
	}
	if p() && u != "" { // the other indentation style on lines from memory
		mem := &dhunk{}
		var idx []int
		for k, l := range h.lines {
			if !quoted[k] && !strings.HasPrefix(l, "+") {
				mem.lines = append(mem.lines, l)
				idx = append(idx, k)
			}
		}
		m.swapIndentOf(mem, u)
		for i, k := range idx {
			h.lines[k] = mem.lines[i]
		}
	}
	g := &gen{r: m.r}
	if p() {
		g.dropLead(h)
	}
	if p() {
		g.dropTrail(h)
	}
	if tool {
		return
	}
	if p() {
		g.countsOff(h)
	}
	if p() {
		g.numberless(h)
	}
	if p() {
		g.blanksUnmarked(h)
	}
}

func (m *scriptedModel) swapIndentOf(h *dhunk, u string) {
	(&gen{r: m.r}).swapIndent(h, u, false)
}
