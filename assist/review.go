package assist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/cache"
)

// Finding is one problem a review found, in the lines of the reviewed file
// (counted from 1, as the prompt shows them).
type Finding struct {
	StartLine, EndLine int
	Severity           cache.Severity
	// Message is one line, at most MaxFindingMessage runes.
	Message string
	// Explanation is optional, at most MaxFindingExplanation runes.
	Explanation string
}

// Caps of a finding's texts, in runes: a diagnostic's message is shown in
// a hover or a status line, and the model's reply is outside input.
const (
	MaxFindingMessage     = 200
	MaxFindingExplanation = 2000
	// maxReviewReply bounds the reply text the parser reads at all.
	maxReviewReply = 1 << 20
	// maxRawFindings bounds the findings read from one reply, before the
	// configured review.maxFindings keeps the first ones.
	maxRawFindings = 1000
)

// ErrBadReview: the model's reply holds no review in the expected shape.
var ErrBadReview = errors.New("the model's review is not in the expected JSON shape")

// reviewSchema is the JSON Schema of a review answer, strict: every
// property required (explanation may be ""), no others.
const reviewSchema = `{"type":"object","properties":{"findings":{"type":"array","items":{"type":"object","properties":{` +
	`"startLine":{"type":"integer","minimum":1},"endLine":{"type":"integer","minimum":1},` +
	`"severity":{"type":"string","enum":["error","warning","information","hint"]},` +
	`"message":{"type":"string"},"explanation":{"type":"string"}},` +
	`"required":["startLine","endLine","severity","message","explanation"],"additionalProperties":false}}},` +
	`"required":["findings"],"additionalProperties":false}`

// reviewFormat is the response_format of a review request.
func reviewFormat() *model.ResponseFormat {
	strict := true
	return &model.ResponseFormat{Type: "json_schema", JSONSchema: &model.JSONSchema{
		Name: "review", Strict: &strict, Schema: json.RawMessage(reviewSchema)}}
}

// reviewInstruction is the instruction of a review; diff reviews add a
// note naming the lines under review.
const reviewInstruction = "Review the selected lines of the active file as a careful senior reviewer: bugs, wrong edge cases, " +
	"races, leaks, security problems, misleading names or comments. Report only real problems, most important first; none is a fine answer. " +
	"Answer with JSON only, in this shape: " +
	`{"findings": [{"startLine": 5, "endLine": 6, "severity": "warning", "message": "one line", "explanation": "optional, may be empty"}]}` +
	". Lines are counted from 1 in the active file; severity is error, warning, information or hint; the message is one short line."

// parseFindings reads a review reply: the JSON object of reviewFormat, or
// for endpoints without structured output the same object in a fenced
// block or bare among other text. It is a parser of outside input: a
// finding whose lines are not inside 1..lines, whose severity is unknown or
// whose message is empty is dropped, and so is a repeat (the lines and
// message of an earlier finding); texts lose escape sequences, control,
// zero-width and bidi characters (cleanText), a message is cut to its
// first line and MaxFindingMessage runes. At most max findings are returned (max <= 0: no limit but
// maxRawFindings). An answer that is not such an object is ErrBadReview;
// dropped reports how many findings were left out as invalid.
//
// Of an answer over maxReviewReply (1 MiB) only the findings that end in
// its first MiB are read; those after are counted apart, in cut.
// (ParseFindings, in export_test.go, is its form for the tests.)
func parseFindings(text string, lines, max int) (out []Finding, dropped, cut int, err error) {
	var raws []json.RawMessage
	if len(text) > maxReviewReply {
		var ok bool
		if raws, cut, ok = firstFindings(text, maxReviewReply); !ok {
			return nil, 0, 0, ErrBadReview
		}
	} else {
		raw, ok := reviewJSON(text)
		if !ok {
			return nil, 0, 0, ErrBadReview
		}
		var doc struct {
			Findings []json.RawMessage `json:"findings"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil || doc.Findings == nil {
			return nil, 0, 0, ErrBadReview
		}
		raws = doc.Findings
	}
	if max <= 0 || max > maxRawFindings {
		max = maxRawFindings
	}
	type place struct {
		start, end float64
		msg        string
	}
	seen := map[place]bool{}
	for _, r := range raws {
		var f struct {
			StartLine   *float64 `json:"startLine"`
			EndLine     *float64 `json:"endLine"`
			Severity    string   `json:"severity"`
			Message     string   `json:"message"`
			Explanation string   `json:"explanation"`
		}
		if json.Unmarshal(r, &f) != nil || f.StartLine == nil {
			dropped++
			continue
		}
		start := *f.StartLine
		end := start
		if f.EndLine != nil {
			end = *f.EndLine
		}
		sev, ok := severityOf(f.Severity)
		msg := cleanText(firstLine(f.Message), MaxFindingMessage, false)
		if !ok || msg == "" || !wholeLine(start) || !wholeLine(end) || start < 1 || end < start || end > float64(lines) {
			dropped++
			continue
		}
		if p := (place{start, end, msg}); seen[p] {
			dropped++ // a repeat, whatever its severity: shown once
			continue
		} else {
			seen[p] = true
		}
		if len(out) == max {
			continue
		}
		out = append(out, Finding{StartLine: int(start), EndLine: int(end), Severity: sev, Message: msg,
			Explanation: cleanText(f.Explanation, MaxFindingExplanation, true)})
	}
	return out, dropped, cut, nil
}

// firstFindings reads the findings array of an answer longer than limit
// bytes (a review object, bare or in a fence, that the parser will not
// read whole): the findings that end within its first limit bytes, and
// how many follow them (cut), counted as far as the answer is well-formed.
// ok is false when no findings array starts in the first limit bytes.
func firstFindings(text string, limit int) (raws []json.RawMessage, cut int, ok bool) {
	k := strings.Index(text, `"findings"`)
	if k < 0 || k >= limit {
		return nil, 0, false
	}
	i := strings.LastIndexByte(text[:k], '{')
	if i < 0 {
		return nil, 0, false
	}
	dec := json.NewDecoder(strings.NewReader(text[i:]))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, 0, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, 0, false
		}
		if key != "findings" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil, 0, false
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil, 0, false
		}
		for dec.More() {
			var r json.RawMessage
			if dec.Decode(&r) != nil {
				break // the answer was cut off: what follows is not counted
			}
			if int64(i)+dec.InputOffset() <= int64(limit) {
				raws = append(raws, r)
			} else {
				cut++
			}
		}
		return raws, cut, true
	}
	return nil, 0, false
}

// CutNote words the findings of an over-size answer that were not read
// (Outcome.Cut), for the server's end of a review and the command line.
func CutNote(cut int) string {
	return fmt.Sprintf("%d more %s not read: the model's answer was over %d MiB", cut, plural(cut, "finding", "findings"), maxReviewReply>>20)
}

// CleanMessage is s as a finding's message is shown (parseFindings): its
// first line, without control and bidirectional-control characters, at
// most MaxFindingMessage runes. Other one-line texts of the model's that
// the editor shows (a next edit's summary) are cleaned by it, so that all
// follow the one rule.
func CleanMessage(s string) string { return cleanText(firstLine(s), MaxFindingMessage, false) }

// reviewJSON finds the review object in a reply: the whole text, a fenced
// block, or the first '{' to the last '}'.
func reviewJSON(text string) ([]byte, bool) {
	t := strings.TrimSpace(text)
	if json.Valid([]byte(t)) && strings.HasPrefix(t, "{") {
		return []byte(t), true
	}
	for rest := t; ; {
		i := strings.Index(rest, "```")
		if i < 0 {
			break
		}
		rest = rest[i+3:]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			break
		}
		body := rest[nl+1:]
		j := strings.Index(body, "```")
		if j < 0 {
			break
		}
		if b := bytes.TrimSpace([]byte(body[:j])); len(b) > 0 && b[0] == '{' && json.Valid(b) {
			return b, true
		}
		rest = body[j+3:]
	}
	i, j := strings.IndexByte(t, '{'), strings.LastIndexByte(t, '}')
	if i >= 0 && j > i && json.Valid([]byte(t[i:j+1])) {
		return []byte(t[i : j+1]), true
	}
	return nil, false
}

func wholeLine(f float64) bool { return f == float64(int64(f)) && f < 1<<31 }

func severityOf(s string) (cache.Severity, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "error":
		return cache.SeverityError, true
	case "warning":
		return cache.SeverityWarning, true
	case "information", "info":
		return cache.SeverityInformation, true
	case "hint":
		return cache.SeverityHint, true
	}
	return 0, false
}

// SeverityName is the word for sev that the review shape and the command
// line use.
func SeverityName(sev cache.Severity) string {
	switch sev {
	case cache.SeverityError:
		return "error"
	case cache.SeverityWarning:
		return "warning"
	case cache.SeverityInformation:
		return "information"
	}
	return "hint"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}

// cleanText is text from the model shown as a message: config.CleanText
// (one line) or, with lines, config.CleanLines — the one cleaning of every
// text from outside that is shown, which removes escape sequences whole,
// control, zero-width, bidi and other format characters — cut to max
// runes.
func cleanText(s string, max int, lines bool) string {
	if lines {
		s = config.CleanLines(s)
	} else {
		s = config.CleanText(s)
	}
	if utf8.RuneCountInString(s) > max {
		s = strings.TrimSpace(string([]rune(s)[:max])) + "…"
	}
	return s
}

// lineCount is the number of lines of text as the prompt counts them.
func lineCount(text string) int {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	return max(n, 1)
}

// FormatFinding is a finding as the command line prints it:
// "FILE:LINE: severity: message".
func FormatFinding(file string, f Finding) string {
	return fmt.Sprintf("%s:%d: %s: %s", config.CleanText(file), f.StartLine, SeverityName(f.Severity), f.Message)
}

// reviewOutcome reads the findings of a review's answer into out, in the
// lines of the whole file (the prompt's are a window's, with WindowLine).
func reviewOutcome(out *Outcome, t *Task, max int) error {
	found, dropped, cut, err := parseFindings(out.Text, lineCount(t.Active.Text), 0)
	if err != nil {
		return err
	}
	out.Cut = cut
	ranges := t.ReviewLines
	if len(ranges) == 0 {
		first := strings.Count(t.Active.Text[:t.Selection.Start], "\n") + 1
		last := first + strings.Count(t.Active.Text[t.Selection.Start:t.Selection.End], "\n")
		ranges = [][2]int{{first, last}}
	}
	var lines []string // the active text's, split once if a finding needs them
	for _, f := range found {
		if !touches(ranges, f.StartLine, f.EndLine) {
			if lines == nil && len(t.ReviewNames) > 0 {
				lines = strings.Split(t.Active.Text, "\n")
			}
			if !usesAny(lines, f.StartLine, f.EndLine, t.ReviewNames) {
				dropped++
				continue
			}
		}
		if max > 0 && len(out.Findings) == max {
			dropped++ // the end of the job says so: review.maxFindings cut them
			continue
		}
		f.StartLine, f.EndLine = f.StartLine+t.WindowLine, f.EndLine+t.WindowLine
		out.Findings = append(out.Findings, f)
	}
	out.Dropped = dropped
	return nil
}

// usesAny reports whether lines start to end (from 1) hold one of names
// as a whole word.
func usesAny(lines []string, start, end int, names []string) bool {
	if len(names) == 0 || start < 1 || end < start {
		return false
	}
	for i := start - 1; i < min(end, len(lines)); i++ {
		for _, w := range identifiers(lines[i]) {
			if slices.Contains(names, w) {
				return true
			}
		}
	}
	return false
}

// identifiers returns the words of s that may be names: letters, digits
// and underscores, not starting with a digit.
func identifiers(s string) []string {
	var out []string
	start := -1
	for i, r := range s + " " {
		word := r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			if w := s[start:i]; !unicode.IsDigit(rune(w[0])) {
				out = append(out, w)
			}
			start = -1
		}
	}
	return out
}

func touches(ranges [][2]int, start, end int) bool {
	for _, r := range ranges {
		if start <= r[1] && end >= r[0] {
			return true
		}
	}
	return false
}
