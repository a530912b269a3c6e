package config

import (
	"strconv"
	"strings"
	"testing"
)

// actionTOML is one [[actions]] entry with the given name and prompt.
func actionTOML(name, prompt string) string {
	return "[[actions]]\nname = " + strconv.Quote(name) + "\nresult = \"explain\"\nprompt = " + strconv.Quote(prompt) + "\n"
}

// TestTemplateCap (#21.6): a workspace file's template over 16 KiB, or a
// user file's over 64 KiB, drops that action with a message naming it,
// the size and the cap; the file's other actions stay.
func TestTemplateCap(t *testing.T) {
	dir := t.TempDir()
	at := func(n int) string { return "{{selection}}" + strings.Repeat("x", n-len("{{selection}}")) }
	ws := writeFile(t, dir, ".kimi-lsp.toml", actionTOML("huge", at(MaxWorkspaceTemplateBytes+1))+actionTOML("edge", at(MaxWorkspaceTemplateBytes))+
		"[context]\nmaxTokens = 2000\n")
	c, errs := Default().WithWorkspaceFiles(ws)
	if _, ok := c.ActionFor("huge"); ok {
		t.Errorf("a workspace template of %d bytes was accepted", MaxWorkspaceTemplateBytes+1)
	}
	if _, ok := c.ActionFor("edge"); !ok || c.Context.MaxTokens != 2000 {
		t.Errorf("the rest of the file was not applied: edge %v, maxTokens %d (%v)", ok, c.Context.MaxTokens, errs)
	}
	if HasErrors(errs) || len(errs) != 1 || !IsDropped(errs[0]) {
		t.Fatalf("want one dropped-action warning, got %v", errs)
	}
	for _, want := range []string{`"huge"`, strconv.Itoa(MaxWorkspaceTemplateBytes + 1), "16 KiB", "workspace file"} {
		if !strings.Contains(errs[0].Error(), want) {
			t.Errorf("message %q does not say %s", errs[0], want)
		}
	}
	user := writeFile(t, dir, "config.toml", actionTOML("big", at(MaxWorkspaceTemplateBytes+1))+actionTOML("huge", at(MaxTemplateBytes+1)))
	c, errs = Default().WithUserFile(user)
	if _, ok := c.ActionFor("big"); !ok {
		t.Errorf("a user template of %d bytes was refused: %v", MaxWorkspaceTemplateBytes+1, errs)
	}
	if _, ok := c.ActionFor("huge"); ok || len(errs) != 1 || !strings.Contains(errs[0].Error(), "64 KiB") {
		t.Errorf("a user template of %d bytes: accepted %v, problems %v", MaxTemplateBytes+1, ok, errs)
	}
}

// TestWorkspaceBuiltinNameDropsOneAction (#21.9): a workspace file's
// action named or titled like a built-in is dropped alone, with one
// message; the file's other actions and settings apply.
func TestWorkspaceBuiltinNameDropsOneAction(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{
		actionTOML("fix", "Fix {{selection}}"),
		actionTOML("default", "{{selection}}"),
		"[[actions]]\nname = \"myfix\"\ntitle = \"Kimi: Fix\"\nresult = \"edit\"\nprompt = \"{{selection}}\"\n",
		"[[actions]]\nname = \"myfix\"\ntitle = \"kimi - write TESTS\"\nresult = \"edit\"\nprompt = \"{{selection}}\"\n",
	} {
		ws := writeFile(t, dir, ".kimi-lsp.toml", actionTOML("audit", "Review {{selection}}")+bad+"[context]\nmaxTokens = 3000\n")
		c, errs := Default().WithWorkspaceFiles(ws)
		if _, ok := c.ActionFor("audit"); !ok || c.Context.MaxTokens != 3000 {
			t.Errorf("%q dropped the rest of the file: review %v, maxTokens %d, problems %v", bad, ok, c.Context.MaxTokens, errs)
		}
		if _, ok := c.ActionFor("myfix"); ok {
			t.Errorf("%q: the action titled like a built-in was kept", bad)
		}
		if a, _ := c.ActionFor("fix"); !a.Builtin || a.Prompt != "" {
			t.Errorf("%q replaced the built-in fix: %+v", bad, a)
		}
		if HasErrors(errs) || len(errs) != 1 || !IsDropped(errs[0]) || !strings.Contains(errs[0].Error(), "action") {
			t.Errorf("%q: want one message that the action was dropped, got %v", bad, errs)
		}
	}
}

// TestReport (#21.10): Report says what a problem cost: a user file with
// an error, a syntax error above all, is ignored as a whole.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	_, errs := Default().WithUserFile(writeFile(t, dir, "config.toml", "model = \"m\"\ncacheTTL = 7m\n"))
	lines := Report(errs)
	if len(lines) != 1 || !strings.Contains(lines[0], "invalid TOML at line 2, column") || !strings.Contains(lines[0], "the whole file was ignored") {
		t.Errorf("syntax error: %q", lines)
	}
	_, errs = Default().WithUserFile(writeFile(t, dir, "config.toml", "[jobs]\nmaxConcurrent = 0\nmodle = \"x\"\n"))
	lines = Report(errs)
	if len(lines) != 1 || !strings.Contains(lines[0], "jobs.maxConcurrent") || !strings.Contains(lines[0], "the whole file was ignored") || strings.Contains(lines[0], "modle") {
		t.Errorf("value error: %q", lines)
	}
	_, errs = Load(envOf(map[string]string{"KIMI_MODEL": "a b"}), "")
	if lines = Report(errs); len(lines) != 1 || !strings.Contains(lines[0], "so KIMI_MODEL was ignored") {
		t.Errorf("environment: %q", lines)
	}
}

// TestTemplatePlaceholderCap (#21.6): the size cap bounds a template's
// text, not what it expands to: 1,200 {{selection}} fit in 16 KiB and sent
// the selection 1,200 times with every run. A workspace file's template
// may use each of {{selection}}, {{diagnostics}} and {{instruction}} at
// most MaxLargePlaceholderUses times; that action alone is dropped, with a
// message naming it, the placeholder and the cap. The user's own file is
// the user's choice.
func TestTemplatePlaceholderCap(t *testing.T) {
	dir := t.TempDir()
	for _, ph := range []string{"selection", "diagnostics", "{{ instruction }}"} {
		if !strings.HasPrefix(ph, "{{") {
			ph = "{{" + ph + "}}"
		}
		amp := strings.Repeat(ph+" ", 800) // under 16 KiB
		ws := writeFile(t, dir, ".kimi-lsp.toml", actionTOML("amp", amp)+actionTOML("twice", "Before:\n{{selection}}\nAfter: {{ selection }} {{file}} {{file}} {{file}}")+"[context]\nmaxTokens = 2000\n")
		c, errs := Default().WithWorkspaceFiles(ws)
		if _, ok := c.ActionFor("amp"); ok {
			t.Errorf("%s: a workspace template using it 800 times was accepted", ph)
		}
		if _, ok := c.ActionFor("twice"); !ok || c.Context.MaxTokens != 2000 {
			t.Errorf("%s: the rest of the file was not applied (%v)", ph, errs)
		}
		if HasErrors(errs) || len(errs) != 1 || !IsDropped(errs[0]) {
			t.Fatalf("%s: want one dropped-action warning, got %v", ph, errs)
		}
		name := strings.Trim(ph, "{} ")
		for _, want := range []string{`"amp"`, "{{" + name + "}}", "800 times", strconv.Itoa(MaxLargePlaceholderUses)} {
			if !strings.Contains(errs[0].Error(), want) {
				t.Errorf("message %q does not say %s", errs[0], want)
			}
		}
		user := writeFile(t, dir, "config.toml", actionTOML("amp", amp))
		if c, errs := Default().WithUserFile(user); len(errs) != 0 {
			t.Errorf("%s: the user file's template was refused: %v", ph, errs)
		} else if _, ok := c.ActionFor("amp"); !ok {
			t.Errorf("%s: the user file's template is missing", ph)
		}
	}
}
