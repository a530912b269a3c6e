package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/complete"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/workspace"
	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

// An answerer is what the provider answers for a case: the stand-in's
// scripted answers (the oracle and its perturbations). The real model
// has none: it answers itself.
type answerer func(f File, c Case, t texts) string

// unified is the answer a model is asked for: a unified diff of the file,
// 3 lines of context.
// crossDocuments is more than the next-edit gate's window for changes to
// two documents that are one edit (assist/complete, 300 ms).
const crossDocuments = 350 * time.Millisecond

func unified(f File, before, after string) string {
	return patch.Unified("a/"+f.Path, "b/"+f.Path, before, after, 3)
}

// hunkHeader matches a hunk header's two starts.
var hunkHeader = regexp.MustCompile(`(?m)^@@ -(\d+)((?:,\d+)?) \+(\d+)((?:,\d+)?) @@`)

// shift moves every hunk of a diff by lines (not before line 1): the
// answer of a model that miscounted.
func shift(diff string, lines int) string {
	return hunkHeader.ReplaceAllStringFunc(diff, func(h string) string {
		m := hunkHeader.FindStringSubmatch(h)
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[3])
		return fmt.Sprintf("@@ -%d%s +%d%s @@", max(a+lines, 1), m[2], max(b+lines, 1), m[4])
	})
}

// answerers are the stand-in's answers: the oracle (the true next hunk,
// nothing on a quiet case) and its perturbations.
var answerers = map[string]answerer{
	"oracle": oracle,
	// The oracle's hunks without their ---/+++ file header, as models
	// often answer.
	"bare": func(f File, c Case, t texts) string {
		d := oracle(f, c, t)
		if i := strings.Index(d, "@@"); i > 0 {
			d = d[i:]
		}
		return d
	},
	// The next hunk as a diff of the text before the user's edit (a stale
	// base): its line numbers, and its context where the hunks are close,
	// are those of a text that is gone.
	"pre-edit base": func(f File, c Case, t texts) string {
		if c.Next == nil {
			return ""
		}
		only, err := applyHunks(t.base, *c.Next)
		if err != nil {
			return ""
		}
		return unified(f, t.base, only)
	},
	// No context lines (diff -U0): placed by its line numbers alone.
	"no context": func(f File, _ Case, t texts) string {
		if !t.follows {
			return ""
		}
		return patch.Unified("a/"+f.Path, "b/"+f.Path, t.doc, t.want, 0)
	},
	// Hunk headers whose line counts are one too many, as models often
	// miscount.
	"miscounted": func(f File, c Case, t texts) string {
		return hunkHeader.ReplaceAllStringFunc(oracle(f, c, t), func(h string) string {
			m := hunkHeader.FindStringSubmatch(h)
			return fmt.Sprintf("@@ -%s,%d +%s,%d @@", m[1], count(m[2])+1, m[3], count(m[4])+1)
		})
	},
	// Context lines indented with spaces where the file has tabs, as a
	// model may write them.
	"spaces for tabs": func(f File, c Case, t texts) string {
		lines := strings.SplitAfter(oracle(f, c, t), "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, " ") {
				body := strings.TrimLeft(l[1:], "\t")
				lines[i] = " " + strings.Repeat("    ", len(l)-1-len(body)) + body
			}
		}
		return strings.Join(lines, "")
	},
	// A predictor of one rule, the baseline a model must beat: when the
	// user's edit replaced names one for one, the same replacement on the
	// nearest other line that has an old name; else nothing.
	"rename baseline": renameBaseline,
	// Undoing the user's edit: never to be shown.
	"reverse": func(f File, _ Case, t texts) string { return unified(f, t.doc, t.base) },
}

// ident matches an identifier.
var ident = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// renameBaseline is the "rename baseline" answer.
func renameBaseline(f File, c Case, t texts) string {
	base := linediff.SplitLines(t.base)
	was := ident.FindAllString(strings.Join(base[c.User.Line:c.User.Line+c.User.Del], ""), -1)
	now := ident.FindAllString(strings.Join(c.User.Add, "\n"), -1)
	if len(was) != len(now) {
		return ""
	}
	renames := map[string]string{}
	for i := range was {
		if p, ok := renames[was[i]]; ok && p != now[i] {
			return "" // not one for one
		}
		if was[i] != now[i] {
			renames[was[i]] = now[i]
		}
	}
	if len(renames) == 0 {
		return ""
	}
	// The line nearest the user's (the one below first) that has an old
	// name: one edit, the next one.
	lines := linediff.SplitLines(t.doc)
	from, to := c.User.Line, c.User.Line+len(c.User.Add) // the user's lines
	for d := 1; from-d >= 0 || to-1+d < len(lines); d++ {
		for _, i := range []int{to - 1 + d, from - d} {
			if i < 0 || i >= len(lines) {
				continue
			}
			l := ident.ReplaceAllStringFunc(lines[i], func(w string) string { return cmp.Or(renames[w], w) })
			if l != lines[i] {
				lines[i] = l
				return unified(f, t.doc, strings.Join(lines, ""))
			}
		}
	}
	return ""
}

// count is a hunk range's count (",N"; 1 when it is not written).
func count(s string) int {
	if s == "" {
		return 1
	}
	n, _ := strconv.Atoi(s[1:])
	return n
}

// answererOf returns the answer named name: one of answerers, or
// "shift+N" / "shift-N", the oracle's hunks placed N lines too low or too
// high (a model that miscounted).
func answererOf(name string) answerer {
	if a := answerers[name]; a != nil {
		return a
	}
	n, err := strconv.Atoi(strings.TrimPrefix(name, "shift"))
	if !strings.HasPrefix(name, "shift") || err != nil || n == 0 {
		return nil
	}
	return func(f File, c Case, t texts) string { return shift(oracle(f, c, t), n) }
}

// oracle answers the true next hunk, nothing on a quiet case.
func oracle(f File, _ Case, t texts) string {
	if !t.follows {
		return ""
	}
	return unified(f, t.doc, t.want)
}

// followUps are what the user does while the oracle is asked or after
// its suggestion is shown, and what the pipeline must do with it.
var followUps = []string{typedWhileAsked, "accept", "edit above", "edit inside"}

// typedWhileAsked is the follow-up of a user who types a line at the top
// of the file while the request is out: it is hung up, asked again, and
// answered with a diff of the text before that line.
const typedWhileAsked = "types a line above while asked"

// aboveLine is the line the user types at the top of the file.
const aboveLine = "// edited above\n"

// runner drives the real complete.NextEdits on a case set.
type runner struct {
	set  *CaseSet
	srv  *modeltest.Server // the stand-in; nil against a real endpoint
	next *complete.NextEdits
	why  *whyLog
	wait time.Duration // for one answer
	// warm asks once before each case's edit (warmUp): "near" the edit,
	// at the file's "end", or not ("").
	warm string

	// mu guards cfg, which NextEdits reads from its timers' goroutines.
	mu  sync.Mutex
	cfg config.Config
}

func (r *runner) config() config.Config {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cfg
}

// asking turns requests on or off: a follow-up edit is placed against the
// suggestion shown, and asks for nothing (a request of its own could end
// after the case and be counted for the next).
func (r *runner) asking(on bool) {
	r.mu.Lock()
	r.cfg.NextEdit.Enable = on
	r.mu.Unlock()
}

// newRunner returns a runner asking baseURL with key (the stand-in's
// when srv is set).
func newRunner(set *CaseSet, srv *modeltest.Server, env map[string]string, settings string, wait time.Duration) (*runner, error) {
	cfg, errs := config.Default().WithEnv(func(k string) string { return env[k] })
	if config.HasErrors(errs) {
		return nil, errors.Join(errs...)
	}
	if cfg, errs = cfg.WithEditor(json.RawMessage(settings)); config.HasErrors(errs) {
		return nil, errors.Join(errs...)
	}
	why := &whyLog{}
	svc := complete.NewServices(complete.ServicesOptions{Logger: slog.New(why)})
	r := &runner{set: set, cfg: cfg, srv: srv, why: why, wait: wait}
	r.next = complete.NewNextEdits(complete.NextOptions{Config: r.config, Services: svc})
	return r, nil
}

// settled is the count of answers judged one way or another.
func settled(st complete.NextStats) int64 {
	return st.Shown + st.Refused + st.Empty + st.Failed + st.Stale
}

// outcome is what the pipeline did with one case.
type outcome struct {
	score
	why  string // why an answer was not shown ("" for shown or empty)
	fail bool   // the request failed or no answer came
	// follow is what became of the suggestion after a follow-up:
	// "accepted", "kept", "re-placed", "dropped", "lost".
	follow string
	// asked is set when the stand-in received the request, showsEdit
	// when its prompt showed the user's edit (showsEdit).
	asked, showsEdit bool
}

// one runs case i: the user's edit, the pause, the request (answered by
// answer on the stand-in), and the follow-up, if any.
func (r *runner) one(ctx context.Context, i int, answer answerer, follow string) (outcome, error) {
	c := r.set.Cases[i]
	f := r.set.Files[c.File]
	t, err := r.set.textsOf(c)
	if err != nil {
		return outcome{}, err
	}
	uri := workspace.FileURI(fmt.Sprintf("/eval/%d/%s", i, f.Path))
	key := string(uri)
	defer r.next.Forget(key)
	prev := workspace.NewSnapshot(uri, "go", 2, t.base)
	doc := workspace.NewSnapshot(uri, "go", 3, t.doc)
	req := complete.NextRequest{Key: key, Path: f.Path, Language: "go", Project: f.Module, Doc: doc, Prev: prev}
	if r.warm != "" {
		line := c.User.Line
		if r.warm == "end" {
			line = strings.Count(t.base, "\n")
		}
		if err := r.warmUp(ctx, req, line); err != nil {
			return outcome{fail: true, why: err.Error()}, nil
		}
	}
	st0 := r.next.Stats()
	r.why.take()
	during := follow == typedWhileAsked
	if r.srv != nil {
		// A case's answers only: a rule left from the case before (a
		// request hung up before it reached the stand-in) goes.
		r.srv.Reset()
		if during {
			// The request after the user's line is answered with the diff
			// of the text before it (a stale base); the first, the same
			// diff, late: the user's line hangs it up before.
			r.srv.Push(modeltest.Rule{MatchPrompt: aboveLine, Content: answer(f, c, t)},
				modeltest.Rule{Content: answer(f, c, t), DelayMS: 10_000})
		} else {
			r.srv.Push(modeltest.Rule{Content: answer(f, c, t)})
		}
	}
	// Each case is another document: a change to one less than the
	// gate's window after a change to another, neither a keystroke, reads
	// as one edit of another server's (D79) and asks nothing. The user of
	// a case types it on its own.
	time.Sleep(crossDocuments)
	r.next.Edited(req)
	if during {
		if err := r.until(ctx, func(st complete.NextStats) bool { return st.Requested > st0.Requested }); err != nil {
			return outcome{fail: true, why: err.Error()}, nil
		}
		// The user types a line at the top while the request is out.
		t.doc = aboveLine + t.doc
		if !c.Quiet() {
			t.want = aboveLine + t.want
		}
		req.Prev, req.Doc = doc, workspace.NewSnapshot(uri, "go", 4, t.doc)
		r.next.Edited(req)
	}
	if err := r.answered(ctx, st0); err != nil {
		return outcome{fail: true, why: err.Error()}, nil
	}
	st := r.next.Stats()
	o := outcome{why: r.why.take(), fail: st.Failed > st0.Failed}
	if o.why == "" && st.Refused > st0.Refused {
		// NextEdits counts a refusal, then logs its reason: wait for it.
		o.why = r.why.await(ctx, r.wait)
	}
	sug := r.next.Current(key)
	pred := t.doc
	if sug != nil {
		if pred, err = patch.ApplyEdits(t.doc, sug.Edits); err != nil {
			return outcome{}, fmt.Errorf("%s: the suggestion does not apply to the text it was placed on: %w", r.set.name(c), err)
		}
	}
	o.score = scoreCase(t, sug != nil, pred)
	if r.srv != nil && follow == "" {
		prompt, ok := r.lastPrompt()
		o.asked, o.showsEdit = ok, ok && showsEdit(t.base, t.doc, prompt)
	}
	switch {
	case during && c.Quiet():
	case during && st.Cancelled == st0.Cancelled:
		o.follow = "not hung up"
	case during && o.exact:
		o.follow = "re-placed"
	case during && sug != nil:
		o.follow = "lost"
	case during:
		o.follow = "dropped"
	case sug != nil && follow != "":
		o.follow = r.followUp(key, uri, t, sug, pred, follow)
	}
	return o, nil
}

// warmUp makes an edit before the case's (a blank line deleted before
// line, leaving the case's text) and waits for its request,
// so that the case's request is the document's second: the prompt of a
// document's first request shows no edit log (issue 32 item 1), a later
// one shows the edits since the one before. Its suggestion, if any, is
// dismissed; on the stand-in it is answered with nothing.
func (r *runner) warmUp(ctx context.Context, req complete.NextRequest, line int) error {
	if r.srv != nil {
		r.srv.Reset()
	}
	st0 := r.next.Stats()
	base := req.Prev.Text()
	at := 0
	for range line {
		at += strings.IndexByte(base[at:], '\n') + 1
	}
	w := req
	w.Prev, w.Doc = workspace.NewSnapshot(req.Prev.URI, "go", 1, base[:at]+"\n"+base[at:]), req.Prev
	time.Sleep(crossDocuments) // as for the case's edit (run)
	r.next.Edited(w)
	if err := r.answered(ctx, st0); err != nil {
		return fmt.Errorf("warming up: %w", err)
	}
	r.next.Dismiss(req.Key, 0)
	return nil
}

// lastPrompt returns the text of the messages of the last request the
// stand-in received.
func (r *runner) lastPrompt() (string, bool) {
	var last *modeltest.Request
	reqs := r.srv.Requests()
	for i := range reqs {
		if reqs[i].Parsed != nil && (last == nil || reqs[i].Seq > last.Seq) {
			last = &reqs[i]
		}
	}
	if last == nil {
		return "", false
	}
	var b strings.Builder
	for _, m := range last.Parsed.Messages {
		b.WriteString(m.Text())
		b.WriteByte('\n')
	}
	return b.String(), true
}

// showsEdit reports whether a prompt shows the user's edit from base to
// doc as a diff: each line it writes as a "+" line, each it removes as a
// "-" line (blank lines aside). The system prompt says the second message
// shows them.
func showsEdit(base, doc, prompt string) bool {
	for l := range changedLines(base, doc) {
		if strings.TrimSpace(l[1:]) != "" && !strings.Contains(prompt, "\n"+l+"\n") {
			return false
		}
	}
	return true
}

// askWait bounds the wait for an edit's request to be made (the pause is
// 0 ms): none by then means none will be (no key, a refused one, a rate
// limit's pause, a budget spent).
const askWait = 10 * time.Second

// answered waits for the answer to the request an edit made after the
// counts st0: an error if none was asked (saying why, as the pipeline's
// log does) or none came in r.wait.
func (r *runner) answered(ctx context.Context, st0 complete.NextStats) error {
	asked := func(st complete.NextStats) bool { return st.Requested > st0.Requested || settled(st) > settled(st0) }
	if err := r.untilFor(ctx, askWait, asked); err != nil {
		return fmt.Errorf("not asked: %s", cmp.Or(r.why.take(), "no request made"))
	}
	return r.until(ctx, func(st complete.NextStats) bool { return settled(st) > settled(st0) })
}

// until waits for the pipeline's counts to satisfy done, at most r.wait.
func (r *runner) until(ctx context.Context, done func(complete.NextStats) bool) error {
	return r.untilFor(ctx, r.wait, done)
}

func (r *runner) untilFor(ctx context.Context, wait time.Duration, done func(complete.NextStats) bool) error {
	deadline := time.Now().Add(wait)
	for !done(r.next.Stats()) {
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer in %v", wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	return nil
}

// followUp makes the user's next edit after suggestion sug (leaving pred)
// is shown on t.doc, and says what the pipeline made of the suggestion.
func (r *runner) followUp(key string, uri workspace.URI, t texts, sug *complete.NextSuggestion, pred, follow string) string {
	prev := workspace.NewSnapshot(uri, "go", 3, t.doc)
	r.asking(false)
	defer r.asking(true)
	edit := func(text string) *complete.NextSuggestion {
		r.next.Edited(complete.NextRequest{Key: key, Path: "", Language: "go", Doc: workspace.NewSnapshot(uri, "go", 4, text), Prev: prev})
		return r.next.Current(key)
	}
	switch follow {
	case "accept":
		before := r.next.Stats().Accepted
		if s := edit(pred); s == nil && r.next.Stats().Accepted == before+1 {
			return "accepted"
		}
		return "lost"
	case "edit above":
		// A comment line at the top of the file: the suggestion moves down
		// a line, unless it is within a line of the top (next to it).
		line := aboveLine
		s := edit(line + t.doc)
		near := strings.Count(t.doc[:sug.Start], "\n") <= 1
		switch {
		case s == nil && near:
			return "dropped"
		case s == nil:
			return "lost"
		}
		got, err := patch.ApplyEdits(line+t.doc, s.Edits)
		if err == nil && got == line+pred {
			return "re-placed"
		}
		return "lost"
	case "edit inside":
		// A character typed at the start of the suggestion's first line.
		lineStart := strings.LastIndexByte(t.doc[:sug.Start], '\n') + 1
		if s := edit(t.doc[:lineStart] + "x" + t.doc[lineStart:]); s == nil {
			return "dropped"
		}
		return "kept"
	}
	return "lost"
}

// whyLog is a slog handler that keeps the last "why" of NextEdits' debug
// records (why an answer was not shown).
type whyLog struct {
	mu  sync.Mutex
	why string
}

func (w *whyLog) Enabled(context.Context, slog.Level) bool { return true }
func (w *whyLog) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *whyLog) WithGroup(string) slog.Handler            { return w }
func (w *whyLog) Handle(_ context.Context, rec slog.Record) error {
	rec.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "why", "error":
			w.mu.Lock()
			w.why = a.Value.String()
			w.mu.Unlock()
		}
		return true
	})
	return nil
}

// await waits, at most wait, for a why and takes it ("" if none came).
func (w *whyLog) await(ctx context.Context, wait time.Duration) string {
	deadline := time.Now().Add(wait)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if s := w.take(); s != "" {
			return s
		}
		time.Sleep(2 * time.Millisecond)
	}
	return ""
}

// take returns the last why and forgets it.
func (w *whyLog) take() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.why
	w.why = ""
	return s
}
