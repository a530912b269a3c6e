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
