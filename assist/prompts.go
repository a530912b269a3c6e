package assist

import (
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/cache"
)

// System is the system message of every request: the cache package's
// layout description followed by how to answer with edits. It is a
// constant — byte-identical in every request of every session — because it
// opens the cached prefix; the action-specific wording goes in the
// instruction at the end of the prompt.
const System = cache.DefaultSystem + `
How to answer:
- For an explanation, answer in Markdown, concisely, for a developer reading the code. Quote code only where it helps.
- For a change, answer with exactly one fenced block of type diff holding a unified diff against the current text of the files: "--- a/PATH" and "+++ b/PATH" headers with workspace-relative paths ("/dev/null" for a created or deleted file), hunks with "@@" headers, two or three unchanged context lines around each change, every removed line with "-" and every added line with "+". Write out every line you keep or add: never a placeholder such as "// ... existing code ...". After the block, add at most one sentence saying what changed.
- You may instead use the edit tools (replace_text, create_file, delete_file, apply_diff); use read_file to see a file that is not shown. Do not both call edit tools and write a diff for the same change.
- If the request cannot be done safely, say why in one or two sentences and make no change.
`

// Default instruction of Rewrite when neither the user nor a kimi: comment
// gives one.
const DefaultRewriteInstruction = "Improve this code: make it clearer and simpler without changing its behaviour."

// instructionFor returns the request's instruction for action a: the
// built-in wording, or the user's template with its placeholders filled.
func instructionFor(a config.Action, t *Task) string {
	if !a.Builtin {
		return config.ExpandPrompt(a.Prompt, config.PromptVars{
			Selection:   t.selectedText(),
			File:        t.Active.Path,
			Language:    t.Active.Language,
			Diagnostics: diagnosticsText(t.Diagnostics),
			Instruction: t.Instruction,
		}) + resultHint(a.Result)
	}
	switch a.Name {
	case config.ActionReview:
		return reviewInstruction
	case config.ActionExplain:
		s := "Explain the selected code: what it does, how it works, and anything surprising or risky in it. Answer in Markdown. Do not propose changes."
		if t.Instruction != "" {
			s += "\nThe user asks: " + t.Instruction
		}
		return s
	case config.ActionFix:
		if len(t.Diagnostics) > 0 {
			return "Fix the problems listed in <diagnostics> with the smallest correct change. Answer with a unified diff."
		}
		return "Find and fix the bug in the selected code with the smallest correct change. Answer with a unified diff."
	case config.ActionRewrite:
		in := t.Instruction
		if in == "" {
			in = DefaultRewriteInstruction
		}
		return "Rewrite the selected code as the user asks, changing nothing outside what that needs. Answer with a unified diff.\nThe user asks: " + in
	case config.ActionDocument:
		return "Add documentation comments to the declarations in the selection, in the idiomatic style of the language (doc comments, docstrings, JSDoc…). Do not change any code. Answer with a unified diff."
	case config.ActionTests:
		return "Write tests for the selected code, in the style and framework the project already uses, in the conventional test file for this file (create it with /dev/null as the old file if it does not exist; add to it if it does). Cover normal cases, edge cases and errors. Answer with a unified diff."
	}
	return t.Instruction
}

// resultHint reminds the model of the answer form for user-defined
// actions, whose templates may not say it.
func resultHint(r config.Result) string {
	if r == config.ResultEdit {
		return "\nAnswer with a unified diff."
	}
	return ""
}

func diagnosticsText(ds []cache.Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.Severity.String())
		if d.Source != "" {
			b.WriteString(" (" + d.Source + ")")
		}
		b.WriteString(": ")
		b.WriteString(strings.TrimSpace(d.Message))
		b.WriteString("\n")
	}
	return b.String()
}

// RewriteInstruction finds an instruction written in the selection as a
// comment line starting with "kimi:" (after the comment marker: //, #, --,
// ;, /*, <!--, or *), and returns it and true.
func RewriteInstruction(selection string) (string, bool) {
	for _, line := range strings.Split(selection, "\n") {
		l := strings.TrimSpace(line)
		for _, marker := range []string{"//", "#", "--", ";", "/*", "<!--", "*"} {
			if rest, ok := strings.CutPrefix(l, marker); ok {
				rest = strings.TrimSpace(rest)
				if in, ok := strings.CutPrefix(rest, "kimi:"); ok {
					in = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(in), "*/"), "-->"))
					if in != "" {
						return in, true
					}
				}
				break
			}
		}
	}
	return "", false
}
