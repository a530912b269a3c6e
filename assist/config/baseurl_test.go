package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
)

// badURLs are baseURL values that cannot be used (#21.1).
var badURLs = []string{"127.0.0.1:8011", "ftp://x", "http://", "%%garbage", "localhost:8080", "https://x.example/?q=1",
	"https://:443", "http://:8011/v1", "https://x.example:99999", "https://x.example:0", "javascript:alert(1)", "http://ex ample.com"}

// TestInvalidBaseURLFailsClosed (#21.1): an invalid baseURL from any
// source is not replaced by a lower source's or the default: the
// configuration holds it with an error naming the value and the source,
// and no fallback.
func TestInvalidBaseURLFailsClosed(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range badURLs {
		sources := []struct {
			name string // how the source is named in the error
			make func() (Config, []error)
		}{
			{"user file", func() (Config, []error) {
				return Default().WithUserFile(writeFile(t, dir, "config.toml", "baseURL = "+strconv.Quote(bad)+"\n"))
			}},
			{"KIMI_BASE_URL", func() (Config, []error) {
				return Load(envOf(map[string]string{"KIMI_API_KEY": testKey, "KIMI_BASE_URL": bad}), "")
			}},
			{"editor initializationOptions", func() (Config, []error) {
				return Default().WithInitOptions(json.RawMessage(`{"kimi": {"baseURL": ` + strconv.Quote(bad) + `}}`))
			}},
			{"editor settings", func() (Config, []error) {
				good, _ := Default().WithEditor(json.RawMessage(`{"baseURL": "http://127.0.0.1:9999"}`))
				return good.WithEditor(json.RawMessage(`{"baseURL": ` + strconv.Quote(bad) + `}`))
			}},
		}
		for _, src := range sources {
			c, errs := src.make()
			if !HasErrors(errs) {
				t.Errorf("%s %q: no error", src.name, bad)
			}
			err := c.BaseURLError()
			if err == nil {
				t.Errorf("%s %q: BaseURLError() is nil; BaseURL %q, fallback %q", src.name, bad, c.BaseURL, c.FallbackURL())
				continue
			}
			if !errors.Is(err, ErrInvalidBaseURL) || !strings.Contains(err.Error(), strconv.Quote(bad)) || !strings.Contains(err.Error(), src.name) {
				t.Errorf("%s %q: error %q does not name the value and the source", src.name, bad, err)
			}
			if c.FallbackURL() != "" || c.BaseURL == model.DefaultBaseURL || c.BaseURL == model.DefaultFallbackURL {
				t.Errorf("%s %q: BaseURL %q, fallback %q", src.name, bad, c.BaseURL, c.FallbackURL())
			}
		}
	}
}

// TestBaseURLPrecedence (#21.1): the highest source that sets baseURL
// decides it, valid or not.
func TestBaseURLPrecedence(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "config.toml", "baseURL = \"http://127.0.0.1:8011\"\n")
	// A good editor value over a bad environment one: usable.
	c, _ := Load(envOf(map[string]string{"KIMI_BASE_URL": "127.0.0.1:8011"}), user)
	if c.BaseURLError() == nil {
		t.Errorf("a bad KIMI_BASE_URL over a good user file: usable (BaseURL %q)", c.BaseURL)
	}
	c2, _ := c.WithEditor(json.RawMessage(`{"baseURL": "http://127.0.0.1:9000"}`))
	if err := c2.BaseURLError(); err != nil || c2.BaseURL != "http://127.0.0.1:9000" {
		t.Errorf("editor over a bad KIMI_BASE_URL: BaseURL %q, err %v", c2.BaseURL, err)
	}
	// The editor drops its value: the bad variable decides again.
	c3, _ := c2.WithEditor(json.RawMessage(`{}`))
	if c3.BaseURLError() == nil {
		t.Errorf("after the editor's value is removed: usable (BaseURL %q)", c3.BaseURL)
	}
	// Fixed: usable again.
	c4, _ := c3.WithEnv(envOf(map[string]string{"KIMI_BASE_URL": "http://127.0.0.1:8012/v1"}))
	if err := c4.BaseURLError(); err != nil || c4.BaseURL != "http://127.0.0.1:8012" {
		t.Errorf("after the fix: BaseURL %q, err %v", c4.BaseURL, err)
	}
}

// TestRefusedFileKeepsItsEndpoint (#21.1): a user file refused for another
// value still decides the endpoint; one that is not valid TOML but sets
// baseURL stops every request rather than leave them to the default.
func TestRefusedFileKeepsItsEndpoint(t *testing.T) {
	dir := t.TempDir()
	c, errs := Default().WithUserFile(writeFile(t, dir, "a.toml", "baseURL = \"http://localhost:11434\"\njobs.maxConcurrent = 0\n"))
	if !HasErrors(errs) || c.BaseURL != "http://localhost:11434" || c.BaseURLError() != nil || c.FallbackURL() != "" {
		t.Errorf("refused file: BaseURL %q, err %v, fallback %q, errs %v", c.BaseURL, c.BaseURLError(), c.FallbackURL(), errs)
	}
	if c.Jobs.MaxConcurrent != DefaultMaxConcurrentJobs {
		t.Errorf("refused file applied jobs.maxConcurrent = %d", c.Jobs.MaxConcurrent)
	}
	c, errs = Default().WithUserFile(writeFile(t, dir, "b.toml", "baseURL = \"http://localhost:11434\"\nmodel = \"x\n"))
	err := c.BaseURLError()
	if !HasErrors(errs) || err == nil || !strings.Contains(err.Error(), "not valid TOML") || c.FallbackURL() != "" {
		t.Errorf("unreadable file setting baseURL: BaseURL %q, err %v, errs %v", c.BaseURL, err, errs)
	}
	// The same in the other spellings TOML has for it: a [kimi] table, an
	// inline table, a quoted key.
	for i, text := range []string{
		"[kimi]\nbaseURL = \"http://localhost:11434\"\nmodel = \"x\n",
		"kimi = { model = \"x\", baseURL = \"http://localhost:11434\" }\nmodel = \"x\n",
		"kimi = {baseURL=\"http://localhost:11434\"}\ncacheTTL = 7m\n",
		"\"baseURL\" = \"http://localhost:11434\"\nmodel = \"x\n",
	} {
		c, errs = Default().WithUserFile(writeFile(t, dir, fmt.Sprintf("b%d.toml", i), text))
		if err := c.BaseURLError(); err == nil || !strings.Contains(err.Error(), "not valid TOML") || c.FallbackURL() != "" {
			t.Errorf("unreadable file %q: BaseURL %q, err %v, errs %v", text, c.BaseURL, err, errs)
		}
	}
	// Not valid TOML and no baseURL in it (a comment naming it aside): the
	// default endpoint stays.
	c, _ = Default().WithUserFile(writeFile(t, dir, "d.toml", "# baseURL = \"http://localhost:11434\"\nmodel = \"x\n"))
	if c.BaseURLError() != nil || c.BaseURL != model.DefaultBaseURL {
		t.Errorf("unreadable file with baseURL in a comment: BaseURL %q, err %v", c.BaseURL, c.BaseURLError())
	}
	c, _ = Default().WithUserFile(writeFile(t, dir, "c.toml", "model = \"x\n"))
	if c.BaseURLError() != nil || c.BaseURL != model.DefaultBaseURL {
		t.Errorf("unreadable file without baseURL: BaseURL %q, err %v", c.BaseURL, c.BaseURLError())
	}
}

// TestInvalidBaseURLHidesPassword: an invalid URL with a password is shown
// without it, in the error and in the listing.
func TestInvalidBaseURLHidesPassword(t *testing.T) {
	c, errs := Default().WithEditor(json.RawMessage(`{"baseURL": "ftp://me:hunter2@example.com"}`))
	for _, text := range []string{c.Redacted(), c.BaseURLError().Error(), errs[0].Error()} {
		if strings.Contains(text, "hunter2") {
			t.Errorf("password shown: %s", text)
		}
	}
}

// TestMissingSchemeHint: a URL without its scheme gets a suggestion.
func TestMissingSchemeHint(t *testing.T) {
	c, _ := Load(envOf(map[string]string{"KIMI_BASE_URL": "127.0.0.1:8011"}), "")
	if err := c.BaseURLError(); err == nil || !strings.Contains(err.Error(), `did you mean "http://127.0.0.1:8011"`) {
		t.Errorf("err %v", err)
	}
}

// TestBaseURLOfAnotherTypeFailsClosed (#21.1): a baseURL that is not a
// string (baseURL = 8011, a list, a table, a boolean) is as invalid as a bad
// string: from the editor or the user file it stops every request, naming
// the source and what is wrong, instead of leaving them to the default
// endpoint. A workspace file still cannot set baseURL at all, so its
// value of another type changes nothing.
func TestBaseURLOfAnotherTypeFailsClosed(t *testing.T) {
	dir := t.TempDir()
	for _, v := range [][2]string{{`8011`, `8011`}, {`["http://127.0.0.1:8011"]`, `["http://127.0.0.1:8011"]`}, {`{"url": "x"}`, `{ url = "x" }`}, {`true`, `true`}} {
		json1, toml1 := v[0], v[1]
		for _, src := range []struct {
			name string
			make func() (Config, []error)
		}{
			{"editor settings", func() (Config, []error) { return Default().WithEditor(json.RawMessage(`{"baseURL": ` + json1 + `}`)) }},
			{"editor initializationOptions", func() (Config, []error) {
				return Default().WithInitOptions(json.RawMessage(`{"kimi": {"baseURL": ` + json1 + `}}`))
			}},
			{"user file", func() (Config, []error) {
				return Default().WithUserFile(writeFile(t, dir, "config.toml", "baseURL = "+toml1+"\n"))
			}},
		} {
			c, errs := src.make()
			err := c.BaseURLError()
			if !HasErrors(errs) || err == nil || !errors.Is(err, ErrInvalidBaseURL) || !strings.Contains(err.Error(), src.name) || !strings.Contains(err.Error(), "want a string") {
				t.Errorf("%s baseURL %s: BaseURL %q, err %v, problems %v", src.name, json1, c.BaseURL, err, errs)
			}
			if c.BaseURL == model.DefaultBaseURL || c.FallbackURL() != "" {
				t.Errorf("%s baseURL %s: BaseURL %q, fallback %q", src.name, json1, c.BaseURL, c.FallbackURL())
			}
		}
		c, _ := Default().WithWorkspaceFiles(writeFile(t, dir, ".kimi-lsp.toml", "baseURL = "+toml1+"\n"))
		if c.BaseURLError() != nil || c.BaseURL != model.DefaultBaseURL {
			t.Errorf("workspace file baseURL %s: BaseURL %q, err %v", toml1, c.BaseURL, c.BaseURLError())
		}
	}
}
