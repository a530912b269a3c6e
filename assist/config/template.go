package config

import (
	"fmt"
	"strings"
)

// PromptVars are the values substituted into a prompt template.
type PromptVars struct {
	Selection   string // the selected text (or the cursor window)
	File        string // the file's path relative to its workspace folder
	Language    string // the LSP language id, e.g. "go"
	Diagnostics string // the diagnostics in the range, one per line
	Instruction string // the user's instruction, if any
}

// ExpandPrompt substitutes the placeholders of tmpl ({{selection}},
// {{file}}, {{language}}, {{diagnostics}}, {{instruction}}; spaces inside
// the braces allowed) in one pass: text coming from vars is never expanded
// again. Anything else between {{ and }} is left as it is.
func ExpandPrompt(tmpl string, vars PromptVars) string {
	var b strings.Builder
	b.Grow(len(tmpl) + len(vars.Selection) + len(vars.Diagnostics))
	tail := eachBraced(tmpl, func(before, name string) bool {
		var val string
		switch name {
		case "selection":
			val = vars.Selection
		case "file":
			val = vars.File
		case "language":
			val = vars.Language
		case "diagnostics":
			val = vars.Diagnostics
		case "instruction":
			val = vars.Instruction
		default:
			b.WriteString(before + "{{")
			return false
		}
		b.WriteString(before)
		b.WriteString(val)
		return true
	})
	b.WriteString(tail)
	return b.String()
}

// eachBraced walks tmpl as ExpandPrompt reads it, in one pass: for every
// {{name}} (spaces inside the braces trimmed) it calls take with the text
// since the previous taken placeholder and the name. When take returns
// false the braces are literal text, and the walk goes on just after the
// "{{" (so "{{a {{file}}" still finds {{file}}). It returns the text after
// the last taken placeholder.
func eachBraced(tmpl string, take func(before, name string) bool) (tail string) {
	rest := tmpl
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			return rest
		}
		j := strings.Index(rest[i+2:], "}}")
		if j < 0 {
			return rest
		}
		if take(rest[:i], strings.TrimSpace(rest[i+2:i+2+j])) {
			rest = rest[i+2+j+2:]
		} else {
			rest = rest[i+2:]
		}
	}
}

// checkTemplate reports placeholders that look like names ({{word}}) but
// are not one of Placeholders, so that a typo such as {{selecton}} is caught
// when the configuration is read. Other uses of braces ({{ .X }}, {{a|b}})
// are left alone as literal text.
func checkTemplate(tmpl string) error {
	var bad []string
	eachBraced(tmpl, func(_, name string) bool {
		if isWord(name) && !isPlaceholder(name) {
			bad = append(bad, "{{"+name+"}}")
			return true
		}
		return false
	})
	if len(bad) > 0 {
		s := "s"
		if len(bad) == 1 {
			s = ""
		}
		return fmt.Errorf("unknown placeholder%s %s; known: %s", s, quote(strings.Join(bad, ", ")), placeholderList())
	}
	return nil
}

// largePlaceholders are the placeholders whose value may be large: the
// selection (up to context.maxFileSize), the diagnostics, the user's
// instruction.
var largePlaceholders = []string{"selection", "diagnostics", "instruction"}

// MaxLargePlaceholderUses is how many times a template from a workspace
// file may use each of {{selection}}, {{diagnostics}} and {{instruction}}:
// the template's own cap bounds its text, not what it expands to, and 1,200
// {{selection}} fit in 16 KiB.
const MaxLargePlaceholderUses = 2

// repeatedPlaceholder returns the first of largePlaceholders that tmpl
// uses more than MaxLargePlaceholderUses times (as ExpandPrompt reads it),
// and how many times.
func repeatedPlaceholder(tmpl string) (string, int) {
	uses := map[string]int{}
	eachBraced(tmpl, func(_, name string) bool {
		if isPlaceholder(name) {
			uses[name]++
			return true
		}
		return false
	})
	for _, name := range largePlaceholders {
		if uses[name] > MaxLargePlaceholderUses {
			return name, uses[name]
		}
	}
	return "", 0
}

func isPlaceholder(name string) bool {
	for _, p := range Placeholders {
		if p == name {
			return true
		}
	}
	return false
}

func isWord(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func placeholderList() string {
	parts := make([]string, len(Placeholders))
	for i, p := range Placeholders {
		parts[i] = "{{" + p + "}}"
	}
	return strings.Join(parts, ", ")
}
