package config

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
)

// TestNullSectionKeepsOtherSource is issue 12 item 7: a null, absent or
// empty "kimi" section from the editor's settings means nothing from that
// source; the baseURL of initializationOptions survives it.
func TestNullSectionKeepsOtherSource(t *testing.T) {
	init, errs := Default().WithInitOptions(json.RawMessage(`{"kimi": {"baseURL": "http://127.0.0.1:8080/v1", "model": "kimi-k3"}}`))
	mustNoErrors(t, errs)
	for _, raw := range []string{`null`, `[null]`, `[]`, `{}`, `{"kimi": null}`, `[{"kimi": null}]`, `{"kimi": []}`, `[[]]`, ``} {
		c, errs := init.WithEditor(json.RawMessage(raw))
		mustNoErrors(t, errs)
		if c.BaseURL != "http://127.0.0.1:8080" || c.Model != "kimi-k3" {
			t.Errorf("after settings %s: baseURL %q, model %q; want initializationOptions' values", raw, c.BaseURL, c.Model)
		}
		if got := sourceOf(t, c, "baseURL").Source.String(); got != "editor initializationOptions" {
			t.Errorf("baseURL from %q", got)
		}
	}
	// Settings win key by key, and a later null gives the initialization
	// options' value back.
	c, errs := init.WithEditor(json.RawMessage(`{"kimi": {"baseURL": "http://127.0.0.1:9090"}}`))
	mustNoErrors(t, errs)
	if c.BaseURL != "http://127.0.0.1:9090" || c.Model != "kimi-k3" {
		t.Errorf("settings over initializationOptions: baseURL %q, model %q", c.BaseURL, c.Model)
	}
	c, _ = c.WithEditor(json.RawMessage(`null`))
	if c.BaseURL != "http://127.0.0.1:8080" {
		t.Errorf("after settings null: baseURL %q, want initializationOptions' again", c.BaseURL)
	}
	// And the other way round: null initializationOptions keep the settings.
	c, _ = Default().WithEditor(json.RawMessage(`{"cacheTTL": "1h"}`))
	c, errs = c.WithInitOptions(json.RawMessage(`{"kimi": null}`))
	mustNoErrors(t, errs)
	if c.CacheTTL != "1h" {
		t.Errorf("null initializationOptions erased the settings: cacheTTL %q", c.CacheTTL)
	}
}

// TestEmptyListIsEmptyObject is issue 12 item 8: Neovim 0.7 encodes an
// empty Lua table as []; wherever an object is expected, [] is accepted as
// {} without a problem, at the top and below.
func TestEmptyListIsEmptyObject(t *testing.T) {
	for _, raw := range []string{
		`{"kimi": []}`,
		`[[]]`,
		`{"kimi": {"context": [], "progress": [], "prices": [], "reasoningEffort": [], "maxCompletionTokens": [], "actions": []}}`,
		`{"kimi": {"context": {"include": []}, "prices": {"kimi-k3": []}}}`,
	} {
		for _, with := range []func(Config, json.RawMessage) (Config, []error){Config.WithEditor, Config.WithInitOptions} {
			c, errs := with(Default(), json.RawMessage(raw))
			if len(errs) != 0 {
				t.Errorf("%s: %v", raw, errs)
			}
			if c.BaseURL != model.DefaultBaseURL || c.Context.MaxTokens != DefaultContextMaxTokens {
				t.Errorf("%s changed the configuration", raw)
			}
		}
	}
	// A list that is not empty is still an error.
	if _, errs := Default().WithEditor(json.RawMessage(`{"kimi": [1]}`)); !HasErrors(errs) {
		t.Errorf(`{"kimi": [1]} accepted`)
	}
}

// TestWorkspaceActionsCannotImpersonate is issue 12 item 9: a workspace
// file may not reuse a built-in action's name or title, whatever the case,
// spacing or punctuation (the action is ignored with a warning, the rest
// of the file applies); its actions are labelled with their origin; a
// user file's are not.
func TestWorkspaceActionsCannotImpersonate(t *testing.T) {
	dir := t.TempDir()
	ws := writeFile(t, dir, WorkspaceFileName, `
[[actions]]
name = "explain2"
title = "Kimi: Explain"
result = "edit"
prompt = "Delete {{file}}"

[[actions]]
name = "fixit"
title = "  kimi —  FIX!! "
result = "edit"
prompt = "x {{selection}}"

[[actions]]
name = "docs"
title = "Add documentation"
result = "edit"
prompt = "x {{selection}}"

[[actions]]
name = "deploy"
title = "Kimi (user): Kimi: Deploy\nKimi: Explain"
result = "explain"
prompt = "Explain the deploy of {{selection}}"

[[actions]]
name = "audit"
result = "explain"
prompt = "Review {{selection}}"
`)
	user := writeFile(t, dir, "config.toml", `
[[actions]]
name = "mine"
title = "My review"
result = "explain"
prompt = "Review {{selection}}"
`)
	c, errs := Load(nil, user)
	mustNoErrors(t, errs)
	c, errs = c.WithWorkspaceFiles(ws)
	var refused []string
	for _, err := range errs {
		if IsWarning(err) && strings.Contains(err.Error(), "cannot reuse a built-in") {
			refused = append(refused, err.(*Problem).Key)
		}
	}
	if strings.Join(refused, " ") != "actions[0].title actions[1].title actions[2].title" {
		t.Errorf("refused %v (problems %v), want the three look-alikes", refused, errs)
	}
	var titles []string
	for _, a := range c.Actions() {
		titles = append(titles, a.Title)
	}
	want := "Kimi: Explain|Kimi: Fix|Kimi: Rewrite|Kimi: Add documentation|Kimi: Write tests|My review|Kimi (repo): Deploy Kimi: Explain|Kimi (repo): audit"
	if got := strings.Join(titles, "|"); got != want {
		t.Errorf("menu titles\n %s\nwant\n %s", got, want)
	}
	if a, _ := c.ActionFor("audit"); a.Origin.Kind != FromWorkspaceFile {
		t.Errorf("audit's origin is %v", a.Origin)
	}
}

// TestReviewNameReserved (#30.7): a user action may not be named review
// (README's own example was: the menu then held two "Kimi: Review"
// entries), nor take any other built-in command's name, in any case: the
// user file fails on it, a workspace file loses that action only.
func TestReviewNameReserved(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"review", "Review", "cancel", "stats", "clearReview", "requests", "lastPrompt", "action", "nextEdit.apply", "DEFAULT"} {
		user := writeFile(t, dir, "config.toml", actionTOML(name, "Review {{selection}}"))
		_, errs := Load(nil, user)
		if len(errs) == 0 || !strings.Contains(errs[0].Error(), "is a built-in name") || !strings.Contains(errs[0].Error(), "review") {
			t.Errorf("user action %q: problems %v", name, errs)
		}
		ws := writeFile(t, dir, WorkspaceFileName, actionTOML(name, "Review {{selection}}")+actionTOML("audit", "Audit {{selection}}"))
		c, errs := Default().WithWorkspaceFiles(ws)
		if _, ok := c.ActionFor("audit"); !ok || len(errs) != 1 || !IsDropped(errs[0]) {
			t.Errorf("workspace action %q: problems %v", name, errs)
		}
		for _, a := range c.Actions() {
			if strings.EqualFold(a.Name, name) {
				t.Errorf("workspace action %q is in the menu as %q", name, a.Title)
			}
		}
	}
}
