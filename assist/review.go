package assist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
)

// Finding is one problem a review found, in the lines of the reviewed file
// (counted from 1, as the prompt shows them).
type Finding struct {
	StartLine, EndLine int
	Severity           Severity
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

// ParseFindings reads a review reply: the JSON object of reviewFormat, or
// for endpoints without structured output the same object in a fenced
// block or bare among other text. It is a parser of outside input: a
// finding whose lines are not inside 1..lines, whose severity is unknown or
// whose message is empty is dropped, and so is a repeat (the lines and
// message of an earlier finding); texts lose control and bidi
// characters, a message is cut to its first line and MaxFindingMessage
// runes. At most max findings are returned (max <= 0: no limit but
// maxRawFindings). An answer that is not such an object is ErrBadReview;
// dropped reports how many findings were left out as invalid.
func ParseFindings(text string, lines, max int) (out []Finding, dropped int, err error) {
	if len(text) > maxReviewReply {
		text = text[:maxReviewReply]
	}
	raw, ok := reviewJSON(text)
	if !ok {
		return nil, 0, ErrBadReview
	}
	var doc struct {
		Findings []json.RawMessage `json:"findings"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Findings == nil {
		return nil, 0, ErrBadReview
	}
	if max <= 0 || max > maxRawFindings {
		max = maxRawFindings
	}
	type place struct {
		start, end float64
		msg        string
	}
	seen := map[place]bool{}
	for _, r := range doc.Findings {
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
		msg := cleanText(firstLine(f.Message), MaxFindingMessage)
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
			Explanation: cleanText(f.Explanation, MaxFindingExplanation)})
	}
	return out, dropped, nil
}

// CleanMessage is s as a finding's message is shown (ParseFindings): its
// first line, without control and bidirectional-control characters, at
// most MaxFindingMessage runes. Other one-line texts of the model's that
// the editor shows (a next edit's summary) are cleaned by it, so that all
// follow the one rule.
func CleanMessage(s string) string { return cleanText(firstLine(s), MaxFindingMessage) }

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

func severityOf(s string) (Severity, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "error":
		return SeverityError, true
	case "warning":
		return SeverityWarning, true
	case "information", "info":
		return SeverityInformation, true
	case "hint":
		return SeverityHint, true
	}
	return 0, false
}

// SeverityName is the word for sev that the review shape and the command
// line use.
func SeverityName(sev Severity) string {
	switch sev {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInformation:
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

// cleanText drops control characters (but newlines and tabs) and the
// bidirectional controls that can make shown text read otherwise than it
// is, replaces invalid UTF-8, and cuts the text to max runes.
func cleanText(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if n == max {
			b.WriteString("…")
			break
		}
		switch {
		case r == '\n' || r == '\t':
		case unicode.IsControl(r), isBidiControl(r), r == '\u2028', r == '\u2029':
			continue
		}
		b.WriteRune(r)
		n++
	}
	return strings.TrimSpace(b.String())
}

func isBidiControl(r rune) bool {
	return r >= '\u202A' && r <= '\u202E' || r >= '\u2066' && r <= '\u2069' || r == '\u200E' || r == '\u200F' || r == '\u061C'
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
	return fmt.Sprintf("%s:%d: %s: %s", file, f.StartLine, SeverityName(f.Severity), f.Message)
}

// reviewOutcome reads the findings of a review's answer into out, in the
// lines of the whole file (the prompt's are a window's, with WindowLine).
func reviewOutcome(out *Outcome, t *Task, max int) error {
	found, dropped, err := ParseFindings(out.Text, lineCount(t.Active.Text), 0)
	if err != nil {
		return err
	}
	ranges := t.ReviewLines
	if len(ranges) == 0 {
		first := strings.Count(t.Active.Text[:t.Selection.Start], "\n") + 1
		last := first + strings.Count(t.Active.Text[t.Selection.Start:t.Selection.End], "\n")
		ranges = [][2]int{{first, last}}
	}
	for _, f := range found {
		if !touches(ranges, f.StartLine, f.EndLine) {
			dropped++
			continue
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

func touches(ranges [][2]int, start, end int) bool {
	for _, r := range ranges {
		if start <= r[1] && end >= r[0] {
			return true
		}
	}
	return false
}
