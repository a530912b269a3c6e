package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
)

const testKey = "sk-test-0123456789abcdefWXYZ"

// writeFile writes content to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func mustNoErrors(t *testing.T, errs []error) {
	t.Helper()
	for _, err := range errs {
		t.Errorf("unexpected problem: %v", err)
	}
}

func sourceOf(t *testing.T, c Config, key string) Setting {
	t.Helper()
	for _, s := range c.Sources() {
		if s.Key == key {
			return s
		}
	}
	t.Fatalf("no setting %q in Sources()", key)
	return Setting{}
}

// TestPrecedence sets model (and apiKey) in every subset of the four
// non-default sources and checks that the highest one wins:
// defaults < user file < workspace file < environment < editor.
func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	for mask := 0; mask < 16; mask++ {
		file, ws, env, editor := mask&1 != 0, mask&2 != 0, mask&4 != 0, mask&8 != 0
		t.Run(fmt.Sprintf("file=%v,ws=%v,env=%v,editor=%v", file, ws, env, editor), func(t *testing.T) {
			userFile := filepath.Join(dir, fmt.Sprintf("absent-%d.toml", mask))
			if file {
				userFile = writeFile(t, dir, fmt.Sprintf("user-%d.toml", mask),
					"model = \"from-file\"\napiKey = \"sk-file-00000000000000001111\"\ncacheTTL = \"1h\"\n")
			}
			var wsFiles []string
			if ws {
				wsFiles = append(wsFiles, writeFile(t, dir, fmt.Sprintf("ws-%d.toml", mask), "model = \"from-workspace\"\n"))
			}
			vars := map[string]string{}
			if env {
				vars["KIMI_MODEL"] = "from-env"
				vars["KIMI_API_KEY"] = "sk-env-000000000000000002222"
			}
			raw := json.RawMessage(`{"kimi": {}}`)
			if editor {
				raw = json.RawMessage(`{"kimi": {"model": "from-editor", "apiKey": "sk-editor-0000000000000003333", "cacheTTL": "5m"}}`)
			}
			// Apply in a scrambled order: precedence must not depend on it.
			c, errs := Default().WithEditor(raw)
			mustNoErrors(t, errs)
			c, errs = c.WithWorkspaceFiles(wsFiles...)
			mustNoErrors(t, errs)
			c, errs = c.WithEnv(envOf(vars))
			mustNoErrors(t, errs)
			c, errs = c.WithUserFile(userFile)
			mustNoErrors(t, errs)

			wantModel, wantModelSrc := DefaultModel, FromDefault
			wantKey, wantKeySrc := "", FromDefault
			wantTTL, wantTTLSrc := "5m", FromDefault
			if file {
				wantModel, wantModelSrc = "from-file", FromUserFile
				wantKey, wantKeySrc = "sk-file-00000000000000001111", FromUserFile
				wantTTL, wantTTLSrc = "1h", FromUserFile
			}
			if ws {
				wantModel, wantModelSrc = "from-workspace", FromWorkspaceFile
			}
			if env {
				wantModel, wantModelSrc = "from-env", FromEnv
				wantKey, wantKeySrc = "sk-env-000000000000000002222", FromEnv
			}
			if editor {
				wantModel, wantModelSrc = "from-editor", FromEditor
				wantKey, wantKeySrc = "sk-editor-0000000000000003333", FromEditor
				wantTTL, wantTTLSrc = "5m", FromEditor
			}
			if c.Model != wantModel || sourceOf(t, c, "model").Source.Kind != wantModelSrc {
				t.Errorf("model = %q from %v, want %q from kind %d", c.Model, sourceOf(t, c, "model").Source, wantModel, wantModelSrc)
			}
			if c.APIKey.Reveal() != wantKey || sourceOf(t, c, "apiKey").Source.Kind != wantKeySrc {
				t.Errorf("apiKey = %v from %v, want source kind %d", c.APIKey, sourceOf(t, c, "apiKey").Source, wantKeySrc)
			}
			if c.CacheTTL != wantTTL || sourceOf(t, c, "cacheTTL").Source.Kind != wantTTLSrc {
				t.Errorf("cacheTTL = %q from %v, want %q", c.CacheTTL, sourceOf(t, c, "cacheTTL").Source, wantTTL)
			}
		})
	}
}

func TestProvenance(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "config.toml", `
fastModel = "kimi-k3"
[context]
maxTokens = 32000
exclude = ["vendor/**"]
[prices."kimi-k3.1-pro"]
output = 9.5
`)
	root := filepath.Join(dir, "repo")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := writeFile(t, root, WorkspaceFileName, `
[context]
exclude = ["*.pb.go", "vendor/**"]
[[actions]]
name = "audit"
result = "explain"
prompt = "Review {{selection}}"
`)
	c, errs := Load(envOf(map[string]string{"KIMI_API_KEY": testKey}), user)
	mustNoErrors(t, errs)
	c, errs = c.WithWorkspaceFiles(WorkspaceFile(root))
	mustNoErrors(t, errs)
	c, errs = c.WithEditor(json.RawMessage(`{"reasoningEffort": {"explain": "xhigh"}}`))
	mustNoErrors(t, errs)

	userSrc := "user file " + user
	wsSrc := "workspace file " + ws
	tests := []struct{ key, value, source string }{
		{"apiKey", "sk-…WXYZ", "KIMI_API_KEY"},
		{"baseURL", `"https://direct.evolink.ai"`, "default"},
		{"baseURL.fallback", `"https://api.evolink.ai"`, "default"},
		{"model", `"kimi-k3.1-pro"`, "default"},
		{"fastModel", `"kimi-k3"`, userSrc},
		{"reasoningEffort.explain", `"max"`, "editor settings"},
		{"reasoningEffort.fix", `"high"`, "default"},
		// review runs on kimi-k3, which accepts max only (seed 003: "kimi-k3
		// 仅支持 max"); the default low would be refused by the provider.
		{"reasoningEffort.audit", `"max"`, "the model kimi-k3, which accepts reasoning_effort max only"},
		{"maxCompletionTokens.explain", "8192", "default"},
		{"maxCompletionTokens.tests", "32768", "default"},
		{"actions.audit", `{title = "Kimi (repo): audit", kind = "refactor", result = "explain", model = "kimi-k3"}`, wsSrc},
		{"context.maxTokens", "32000", userSrc},
		{"context.maxFileSize", "1048576", "default"},
		{"prices.kimi-k3.1-pro.output", "9.5", userSrc},
		{"prices.kimi-k3.1-pro.input", "2", "default"},
		{"cacheTTL", `"5m"`, "default"},
		{"waitTimeout", `"1m30s"`, "default"},
	}
	got := map[string]Setting{}
	for _, s := range c.Sources() {
		if _, dup := got[s.Key]; !dup {
			got[s.Key] = s
		}
	}
	for _, tt := range tests {
		s, ok := got[tt.key]
		if !ok {
			t.Errorf("%s: missing from Sources()", tt.key)
			continue
		}
		if s.Value != tt.value || s.Source.String() != tt.source {
			t.Errorf("%s = %s (from %s), want %s (from %s)", tt.key, s.Value, s.Source, tt.value, tt.source)
		}
	}
	// Lists accumulate, one setting per element, each with its source.
	var excl []string
	for _, s := range c.Sources() {
		if s.Key == "context.exclude" {
			excl = append(excl, s.Value+" from "+s.Source.String())
		}
	}
	want := []string{`"vendor/**" from ` + userSrc, `"*.pb.go" from ` + wsSrc}
	if !reflect.DeepEqual(excl, want) {
		t.Errorf("context.exclude settings = %q, want %q", excl, want)
	}
	line := sourceOf(t, c, "apiKey").String()
	if line != "apiKey = sk-…WXYZ (from KIMI_API_KEY)" {
		t.Errorf("apiKey line = %q", line)
	}
	if strings.Contains(c.Redacted(), testKey) {
		t.Errorf("Redacted() contains the key")
	}
}

func TestWorkspaceFileRefusesKeyAndURL(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "config.toml", "apiKey = \""+testKey+"\"\n")
	ws := writeFile(t, dir, WorkspaceFileName, `
apiKey = "sk-attacker-0000000000000000"
baseURL = "https://evil.example.com"
webSearch = true
allowInvalidGo = true
[context]
maxTokens = 2000
`)
	c, errs := Load(nil, user)
	mustNoErrors(t, errs)
	c, errs = c.WithWorkspaceFiles(ws)
	if HasErrors(errs) {
		t.Fatalf("refused keys must be warnings, got errors: %v", errs)
	}
	warned := map[string]string{}
	for _, err := range errs {
		var p *Problem
		if !errors.As(err, &p) || !p.Warning {
			t.Errorf("want warnings only, got %v", err)
			continue
		}
		warned[p.Key] = err.Error()
	}
	for _, k := range []string{"apiKey", "baseURL", "webSearch", "allowInvalidGo"} {
		if _, ok := warned[k]; !ok {
			t.Errorf("no warning for %s in %v", k, errs)
		}
	}
	if msg := warned["apiKey"]; !strings.Contains(msg, "cannot set apiKey") || !strings.Contains(msg, "another host") || !strings.Contains(msg, ws) {
		t.Errorf("apiKey warning not clear: %q", msg)
	}
	for _, msg := range warned {
		if strings.Contains(msg, "sk-attacker") || strings.Contains(msg, "evil.example.com") {
			t.Errorf("warning echoes the refused value: %q", msg)
		}
	}
	if c.APIKey.Reveal() != testKey || sourceOf(t, c, "apiKey").Source.Kind != FromUserFile {
		t.Errorf("apiKey = %v from %v, want the user file's", c.APIKey, sourceOf(t, c, "apiKey").Source)
	}
	if c.BaseURL != model.DefaultBaseURL || c.WebSearch || c.AllowInvalidGo {
		t.Errorf("workspace file changed refused keys: baseURL %q webSearch %v allowInvalidGo %v", c.BaseURL, c.WebSearch, c.AllowInvalidGo)
	}
	if c.Context.MaxTokens != 2000 {
		t.Errorf("context.maxTokens = %d, want the workspace file's 2000", c.Context.MaxTokens)
	}
	// The same keys in the user file are honoured.
	user2 := writeFile(t, dir, "config2.toml", "baseURL = \"http://localhost:11434/v1/\"\nwebSearch = true\n")
	c2, errs := Load(nil, user2)
	mustNoErrors(t, errs)
	if c2.BaseURL != "http://localhost:11434" || !c2.WebSearch || c2.FallbackURL() != "" {
		t.Errorf("user file: baseURL %q webSearch %v fallback %q", c2.BaseURL, c2.WebSearch, c2.FallbackURL())
	}
}

// TestInvalidValues checks that each invalid value is reported with its key
// and the accepted values, and that the previous good configuration stays.
func TestInvalidValues(t *testing.T) {
	good, errs := Default().WithEditor(json.RawMessage(`{"kimi": {"model": "good-model", "cacheTTL": "1h", "apiKey": "` + testKey + `"}}`))
	mustNoErrors(t, errs)
	tests := []struct {
		name string
		raw  string
		want []string // substrings of the (single) error
	}{
		{"cacheTTL", `{"cacheTTL": "2h"}`, []string{`cacheTTL: "2h" is not one of 5m, 1h`}},
		{"cacheTTL type", `{"cacheTTL": 5}`, []string{"cacheTTL: got a number, want a string"}},
		{"waitTimeout", `{"waitTimeout": "soon"}`, []string{`waitTimeout: "soon" is not a duration such as 90s or 2m`}},
		{"waitTimeout short", `{"waitTimeout": "1s"}`, []string{"waitTimeout: 1s is out of range: want 5s to 30m0s"}},
		{"waitTimeout seconds", `{"waitTimeout": 1}`, []string{"waitTimeout: 1 is out of range"}},
		{"effort", `{"reasoningEffort": "extreme"}`, []string{`reasoningEffort: "extreme" is not one of low, high, max`, "medium, xhigh, minimal, none"}},
		{"effort per action", `{"reasoningEffort": {"fix": "hard"}}`, []string{`reasoningEffort.fix: "hard" is not one of low, high, max`}},
		{"tokens zero", `{"maxCompletionTokens": 0}`, []string{"maxCompletionTokens: 0 is out of range: want 1 to 1048576"}},
		{"tokens big", `{"maxCompletionTokens": {"explain": 2000000}}`, []string{"maxCompletionTokens.explain: 2000000 is out of range: want 1 to 1048576"}},
		{"tokens fraction", `{"maxCompletionTokens": 10.5}`, []string{"maxCompletionTokens: 10.5 is not a whole number"}},
		{"tokens string", `{"maxCompletionTokens": "lots"}`, []string{"maxCompletionTokens: got a string, want a whole number between 1 and 1048576"}},
		{"baseURL scheme", `{"baseURL": "ftp://example.com"}`, []string{`baseURL: scheme "ftp" is not one of https, http`}},
		{"baseURL relative", `{"baseURL": "example.com/v1"}`, []string{"baseURL:", "is not an absolute http or https URL"}},
		{"baseURL userinfo", `{"baseURL": "https://me:hunter2@example.com"}`, []string{"baseURL: must not contain a user name or password"}},
		{"apiKey bearer", `{"apiKey": "Bearer sk-abc0000000000000"}`, []string{"apiKey: give the key alone"}},
		{"apiKey space", `{"apiKey": "sk-abc 0000000000000"}`, []string{"apiKey: contains spaces"}},
		{"logLevel", `{"logLevel": "loud"}`, []string{`logLevel: "loud" is not one of debug, info, warn, error`}},
		{"webSearch", `{"webSearch": "yes"}`, []string{"webSearch: got a string, want true or false"}},
		{"model space", `{"model": "kimi k3"}`, []string{`model: "kimi k3" is not a model name`}},
		{"context maxTokens", `{"context": {"maxTokens": 10}}`, []string{"context.maxTokens: 10 is out of range: want 1000 to 1048576"}},
		{"context include", `{"context": {"include": {"related": "yes"}}}`, []string{"context.include.related: got a string, want true or false"}},
		{"context exclude glob", `{"context": {"exclude": ["ok/**", "bad["]}}`, []string{`context.exclude[1]: "bad[" is not a valid glob`}},
		{"context secrets type", `{"context": {"secrets": 3}}`, []string{"context.secrets: got a number, want a list of strings"}},
		{"context type", `{"context": [1]}`, []string{"context: got a list, want a table"}},
		{"progress rate", `{"progress": {"maxReportsPerSecond": 0}}`, []string{"progress.maxReportsPerSecond: 0 is out of range: want 1 to 100"}},
		{"jobs maxConcurrent", `{"jobs": {"maxConcurrent": 0}}`, []string{"jobs.maxConcurrent: 0 is out of range: want 1 to 64"}},
		{"price negative", `{"prices": {"kimi-k3.1-pro": {"output": -1}}}`, []string{"prices.kimi-k3.1-pro.output: -1 is out of range"}},
		{"action no name", `{"actions": [{"prompt": "x {{selection}}", "result": "edit"}]}`, []string{"actions[0].name: missing"}},
		{"action bad name", `{"actions": [{"name": "has space", "prompt": "x", "result": "edit"}]}`, []string{`actions[0].name: "has space" is not a valid action name`}},
		{"action builtin", `{"actions": [{"name": "explain", "prompt": "x", "result": "edit"}]}`, []string{`actions[0].name: "explain" is a built-in name`}},
		{"action duplicate", `{"actions": [{"name": "a", "prompt": "x", "result": "edit"}, {"name": "a", "prompt": "y", "result": "edit"}]}`, []string{`actions[1].name: "a" is already defined by actions[0]`}},
		{"action placeholder", `{"actions": [{"name": "a", "prompt": "Fix {{selecton}} in {{file}}", "result": "edit"}]}`, []string{`actions[0].prompt: unknown placeholder "{{selecton}}"; known: {{selection}}, {{file}}, {{language}}, {{diagnostics}}, {{instruction}}`}},
		{"action kind", `{"actions": [{"name": "a", "kind": "magic", "prompt": "x", "result": "edit"}]}`, []string{`actions[0].kind: "magic" is not a code action kind: use quickfix, refactor`}},
		{"action result", `{"actions": [{"name": "a", "prompt": "x", "result": "patch"}]}`, []string{`actions[0].result: "patch" is not one of explain, edit`}},
		{"action no result", `{"actions": [{"name": "a", "prompt": "x"}]}`, []string{"actions[0].result: missing: one of explain, edit"}},
		{"action no prompt", `{"actions": [{"name": "a", "result": "edit"}]}`, []string{"actions[0].prompt: missing"}},
		{"action effort", `{"actions": [{"name": "a", "prompt": "x", "result": "edit", "reasoningEffort": "turbo"}]}`, []string{`actions[0].reasoningEffort: "turbo" is not one of low, high, max`}},
		{"actions type", `{"actions": "review"}`, []string{"actions: got a string, want a list of action tables"}},
		{"kimi not object", `{"kimi": 3}`, []string{"kimi: got a number, want an object"}},
		{"not object", `"hello"`, []string{"got a string, want an object with the kimi settings"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := good.WithEditor(json.RawMessage(tt.raw))
			if !HasErrors(errs) {
				t.Fatalf("no error for %s", tt.raw)
			}
			var msgs []string
			for _, err := range errs {
				if !IsWarning(err) {
					msgs = append(msgs, err.Error())
				}
			}
			if len(msgs) != 1 {
				t.Errorf("got %d errors, want 1: %q", len(msgs), msgs)
			}
			for _, w := range tt.want {
				if !strings.Contains(msgs[0], w) {
					t.Errorf("error %q does not contain %q", msgs[0], w)
				}
			}
			if !strings.HasPrefix(msgs[0], "editor settings: ") {
				t.Errorf("error %q does not name its source", msgs[0])
			}
			for _, secret := range []string{testKey, "sk-abc", "hunter2"} {
				if strings.Contains(msgs[0], secret) {
					t.Errorf("error %q echoes a secret", msgs[0])
				}
			}
			// A refused section keeps its last good values, all but the
			// endpoint: an invalid baseURL stops every request (#21.1).
			if withoutEndpoint(got.Redacted()) != withoutEndpoint(good.Redacted()) || got.APIKey != good.APIKey {
				t.Errorf("configuration changed after an invalid editor section:\n%s\nwant\n%s", got.Redacted(), good.Redacted())
			}
			if bad := strings.HasPrefix(tt.name, "baseURL"); bad != (got.BaseURLError() != nil) {
				t.Errorf("BaseURLError() = %v after %s", got.BaseURLError(), tt.raw)
			}
			if strings.Contains(got.Redacted(), "hunter2") {
				t.Errorf("the configuration shows a password:\n%s", got.Redacted())
			}
		})
	}
}

func TestAllErrorsReturned(t *testing.T) {
	raw := `{"cacheTTL": "2h", "logLevel": "loud", "context": {"maxTokens": "x", "exclude": ["["]}, "modle": "x"}`
	_, errs := Default().WithEditor(json.RawMessage(raw))
	var keys []string
	for _, err := range errs {
		var p *Problem
		if !errors.As(err, &p) {
			t.Fatalf("%v is not a *Problem", err)
		}
		keys = append(keys, fmt.Sprintf("%s/%v", p.Key, p.Warning))
	}
	want := []string{"cacheTTL/false", "context.exclude[0]/false", "context.maxTokens/false", "logLevel/false", "modle/true"}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("problems = %q, want %q", keys, want)
	}
	for _, err := range errs {
		if strings.HasPrefix(err.Error(), "warning: editor settings: modle:") && !strings.Contains(err.Error(), "did you mean model?") {
			t.Errorf("typo warning without a suggestion: %v", err)
		}
	}
}

func TestLastGoodPerSource(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "config.toml", "model = \"model-a\"\ncacheTTL = \"1h\"\n")
	c, errs := Load(envOf(map[string]string{"KIMI_API_KEY": testKey}), user)
	mustNoErrors(t, errs)
	c, errs = c.WithEditor(json.RawMessage(`{"kimi": {"fastModel": "fast-a"}}`))
	mustNoErrors(t, errs)

	// The user file becomes invalid: its previous values stay, and so do
	// the other sources.
	writeFile(t, dir, "config.toml", "model = \"model-b\"\ncacheTTL = \"2h\"\n")
	c2, errs := c.WithUserFile(user)
	if !HasErrors(errs) || !strings.Contains(errs[0].Error(), `cacheTTL: "2h" is not one of 5m, 1h`) {
		t.Fatalf("errs = %v", errs)
	}
	if c2.Model != "model-a" || c2.CacheTTL != "1h" || c2.FastModel != "fast-a" || c2.APIKey.Reveal() != testKey {
		t.Errorf("after a bad user file: model %q cacheTTL %q fastModel %q key %v", c2.Model, c2.CacheTTL, c2.FastModel, c2.APIKey)
	}
	// A valid editor change applies on top of the kept user layer.
	c3, errs := c2.WithEditor(json.RawMessage(`{"kimi": {"fastModel": "fast-b"}}`))
	mustNoErrors(t, errs)
	if c3.Model != "model-a" || c3.FastModel != "fast-b" {
		t.Errorf("model %q fastModel %q", c3.Model, c3.FastModel)
	}
	// The user removes the editor setting: it falls back to the default.
	c4, errs := c3.WithEditor(json.RawMessage(`{"kimi": {}}`))
	mustNoErrors(t, errs)
	if c4.FastModel != DefaultFastModel {
		t.Errorf("fastModel = %q after removing it from the editor, want %q", c4.FastModel, DefaultFastModel)
	}
	// The receivers were not modified.
	if c.FastModel != "fast-a" || c3.FastModel != "fast-b" {
		t.Errorf("a With method modified its receiver")
	}
	// Fixing the file applies it.
	writeFile(t, dir, "config.toml", "model = \"model-b\"\n")
	c5, errs := c4.WithUserFile(user)
	mustNoErrors(t, errs)
	if c5.Model != "model-b" || c5.CacheTTL != "5m" {
		t.Errorf("model %q cacheTTL %q after fixing the file", c5.Model, c5.CacheTTL)
	}
	// Deleting it removes its values.
	os.Remove(user)
	c6, errs := c5.WithUserFile(user)
	mustNoErrors(t, errs)
	if c6.Model != DefaultModel {
		t.Errorf("model %q after deleting the file", c6.Model)
	}
}

func TestWorkspaceFileLastGood(t *testing.T) {
	dir := t.TempDir()
	ws := writeFile(t, dir, WorkspaceFileName, "[context]\nmaxTokens = 5000\n")
	c, errs := Default().WithWorkspaceFiles(ws)
	mustNoErrors(t, errs)
	writeFile(t, dir, WorkspaceFileName, "[context]\nmaxTokens = 5\n")
	c2, errs := c.WithWorkspaceFiles(ws)
	if !HasErrors(errs) || c2.Context.MaxTokens != 5000 {
		t.Errorf("maxTokens %d errs %v: want the previous 5000 and an error", c2.Context.MaxTokens, errs)
	}
	// A fresh configuration has no previous layer for it: defaults.
	c3, errs := Default().WithWorkspaceFiles(ws)
	if !HasErrors(errs) || c3.Context.MaxTokens != DefaultContextMaxTokens {
		t.Errorf("maxTokens %d, want default", c3.Context.MaxTokens)
	}
}

// TestEnvInvalidVariableIgnored: an empty variable is unset; an invalid
// KIMI_BASE_URL is not replaced by the default endpoint (#21.1): the
// configuration says why nothing may be sent.
func TestEnvInvalidVariableIgnored(t *testing.T) {
	c, errs := Load(envOf(map[string]string{
		"KIMI_API_KEY":  testKey,
		"KIMI_BASE_URL": "not a url",
		"KIMI_MODEL":    "  ",
	}), "")
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "KIMI_BASE_URL: baseURL: ") {
		t.Fatalf("errs = %v", errs)
	}
	if c.APIKey.Reveal() != testKey || c.BaseURL == model.DefaultBaseURL || c.Model != DefaultModel {
		t.Errorf("key %v baseURL %q model %q", c.APIKey, c.BaseURL, c.Model)
	}
	if err := c.BaseURLError(); err == nil || !strings.Contains(err.Error(), `"not a url"`) || !strings.Contains(err.Error(), "KIMI_BASE_URL") {
		t.Errorf("BaseURLError() = %v", err)
	}
}

// withoutEndpoint drops the baseURL lines of a Redacted listing.
func withoutEndpoint(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "baseURL") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestSyntaxErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content string
		want          []string
		notWant       string
	}{
		{"unterminated", "model = \"x\ncacheTTL = \"5m\"\n", []string{"invalid TOML at line 1, column"}, ""},
		{"bare key", "\n\nmodel = kimi\n", []string{"invalid TOML at line 3, column", "expected value"}, ""},
		{"unquoted key", "apiKey = sk-secret-0000111122223333\n", []string{"invalid TOML at line 1", "the line sets apiKey", "double quotes"}, "sk-secret"},
		{"duplicate", "model = \"a\"\nmodel = \"b\"\n", []string{"invalid TOML at line 2"}, ""},
		{"type", "cacheTTL = 2023-01-01\n", []string{"cacheTTL: got a date, want a string"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, dir, tt.name+".toml", tt.content)
			_, errs := Load(nil, p)
			if !HasErrors(errs) {
				t.Fatalf("no error")
			}
			msg := errs[0].Error()
			if !strings.HasPrefix(msg, "user file "+p+": ") {
				t.Errorf("%q does not name the file", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not contain %q", msg, w)
				}
			}
			if tt.notWant != "" && strings.Contains(msg, tt.notWant) {
				t.Errorf("%q contains %q", msg, tt.notWant)
			}
		})
	}

	jsonTests := []struct{ raw, want string }{
		{"{\n  \"model\": \"a\",\n  \"cacheTTL\": 5m\n}", "editor settings: invalid JSON at line 3, column 16: invalid character 'm'"},
		{`{"model": "a"`, "editor settings: invalid JSON: unexpected end of input"},
		{`{"model": "a"} {}`, "editor settings: invalid JSON: data after the settings object"},
	}
	for _, tt := range jsonTests {
		_, errs := Default().WithEditor(json.RawMessage(tt.raw))
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.want) {
			t.Errorf("WithEditor(%q) = %v, want %q", tt.raw, errs, tt.want)
		}
	}
}

func TestUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	_, errs := Load(nil, dir) // a directory
	if !HasErrors(errs) || !strings.Contains(errs[0].Error(), "cannot read") {
		t.Errorf("errs = %v", errs)
	}
}

func TestEditorShapes(t *testing.T) {
	tests := []struct {
		name, raw, model string
	}{
		{"wrapped", `{"kimi": {"model": "m1"}, "editor": {"tabSize": 4}}`, "m1"},
		{"bare", `{"model": "m2"}`, "m2"},
		{"configuration result", `[{"model": "m3"}]`, "m3"},
		{"configuration result null", `[null]`, DefaultModel},
		{"null", `null`, DefaultModel},
		{"empty", ``, DefaultModel},
		{"kimi null", `{"kimi": null}`, DefaultModel},
		{"empty strings unset", `{"kimi": {"model": "", "apiKey": "", "baseURL": "", "cacheTTL": null}}`, DefaultModel},
		{"toml wrapper", ``, DefaultModel},
	}
	for _, tt := range tests {
		c, errs := Default().WithEditor(json.RawMessage(tt.raw))
		mustNoErrors(t, errs)
		if c.Model != tt.model {
			t.Errorf("%s: model = %q, want %q", tt.name, c.Model, tt.model)
		}
	}
	// Empty strings do not override the environment.
	c, _ := Load(envOf(map[string]string{"KIMI_API_KEY": testKey}), "")
	c, errs := c.WithEditor(json.RawMessage(`{"kimi": {"apiKey": ""}}`))
	mustNoErrors(t, errs)
	if c.APIKey.Reveal() != testKey {
		t.Errorf("an empty editor apiKey overrode KIMI_API_KEY")
	}
	// A TOML file may wrap its keys in [kimi].
	p := writeFile(t, t.TempDir(), "c.toml", "[kimi]\nmodel = \"m4\"\n")
	c, errs = Load(nil, p)
	mustNoErrors(t, errs)
	if c.Model != "m4" {
		t.Errorf("[kimi] table: model = %q", c.Model)
	}
}

func TestActionFor(t *testing.T) {
	c := Default()
	tests := []struct {
		name   string
		model  string
		effort Effort
		tokens int
		result Result
	}{
		{ActionExplain, DefaultFastModel, EffortLow, DefaultExplainTokens, ResultExplain},
		{ActionFix, DefaultModel, EffortHigh, DefaultEditTokens, ResultEdit},
		{ActionRewrite, DefaultModel, EffortHigh, DefaultEditTokens, ResultEdit},
		{ActionDocument, DefaultModel, EffortHigh, DefaultEditTokens, ResultEdit},
		{ActionTests, DefaultModel, EffortHigh, DefaultEditTokens, ResultEdit},
	}
	for _, tt := range tests {
		a, ok := c.ActionFor(tt.name)
		if !ok || !a.Builtin || a.Model != tt.model || a.ReasoningEffort != tt.effort || a.MaxCompletionTokens != tt.tokens || a.Result != tt.result {
			t.Errorf("ActionFor(%q) = %+v, %v", tt.name, a, ok)
		}
	}
	if _, ok := c.ActionFor("nope"); ok {
		t.Errorf("ActionFor(nope) found an action")
	}

	c, errs := c.WithEditor(json.RawMessage(`{
		"reasoningEffort": {"fix": "minimal", "mine": "medium"},
		"maxCompletionTokens": {"default": 20000},
		"actions": [
			{"name": "mine", "prompt": "p {{selection}}", "result": "edit", "reasoningEffort": "max", "maxCompletionTokens": 4096},
			{"name": "talk", "prompt": "t", "result": "explain", "model": "kimi-k3", "title": "Talk"},
			{"name": "plain", "prompt": "t", "result": "edit"}
		]}`))
	mustNoErrors(t, errs)
	ed := Source{Kind: FromEditor}
	want := map[string]Action{
		"explain": {Name: "explain", Title: "Kimi: Explain", Kind: "refactor", Model: DefaultFastModel, ReasoningEffort: EffortLow, MaxCompletionTokens: 20000, Result: ResultExplain, Builtin: true},
		"fix":     {Name: "fix", Title: "Kimi: Fix", Kind: "quickfix", Model: DefaultModel, ReasoningEffort: EffortLow, MaxCompletionTokens: 20000, Result: ResultEdit, Builtin: true},
		// table entry beats the action's own effort; the action's own tokens beat the table default
		"mine": {Name: "mine", Title: "Kimi: mine", Kind: "refactor.rewrite", Prompt: "p {{selection}}", Model: DefaultModel, ReasoningEffort: EffortHigh, MaxCompletionTokens: 4096, Result: ResultEdit, Origin: ed},
		// kimi-k3 accepts max only (seed 003): the default low is not sent
		"talk":  {Name: "talk", Title: "Talk", Kind: "refactor", Prompt: "t", Model: "kimi-k3", ReasoningEffort: EffortMax, MaxCompletionTokens: 20000, Result: ResultExplain, Origin: ed},
		"plain": {Name: "plain", Title: "Kimi: plain", Kind: "refactor.rewrite", Prompt: "t", Model: DefaultModel, ReasoningEffort: EffortHigh, MaxCompletionTokens: 20000, Result: ResultEdit, Origin: ed},
	}
	for name, w := range want {
		a, ok := c.ActionFor(name)
		if !ok || a != w {
			t.Errorf("ActionFor(%q) =\n %+v\nwant\n %+v", name, a, w)
		}
	}
	var names []string
	for _, a := range c.Actions() {
		names = append(names, a.Name)
	}
	if got := strings.Join(names, ","); got != "explain,fix,rewrite,document,tests,mine,talk,plain" {
		t.Errorf("Actions() order = %s", got)
	}

	// A single value replaces every per-action entry of lower sources.
	c2, errs := c.WithEditor(json.RawMessage(`{"reasoningEffort": "xhigh", "actions": [{"name": "mine", "prompt": "p", "result": "edit", "reasoningEffort": "low"}]}`))
	mustNoErrors(t, errs)
	for _, name := range []string{"explain", "fix", "tests", "plain"} {
		// "plain" is gone: the editor layer was replaced.
		a, ok := c2.ActionFor(name)
		if name == "plain" {
			if ok {
				t.Errorf("action plain survived the editor layer's replacement")
			}
			continue
		}
		if a.ReasoningEffort != EffortMax {
			t.Errorf("%s effort = %s, want max", name, a.ReasoningEffort)
		}
	}
	if a, _ := c2.ActionFor("mine"); a.ReasoningEffort != EffortLow {
		t.Errorf("mine effort = %s, want its own low over the single value", a.ReasoningEffort)
	}
}

func TestActionsAcrossSources(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "config.toml", `
[actions.audit]
result = "explain"
prompt = "Review {{ selection }}"

[actions.port]
result = "edit"
prompt = "Port to {{instruction}}"
`)
	ws := writeFile(t, dir, WorkspaceFileName, `
[[actions]]
name = "audit"
result = "explain"
prompt = "Review per our CONTRIBUTING.md: {{selection}}"
`)
	c, errs := Load(nil, user)
	mustNoErrors(t, errs)
	c, errs = c.WithWorkspaceFiles(ws)
	mustNoErrors(t, errs)
	a, _ := c.ActionFor("audit")
	if !strings.Contains(a.Prompt, "CONTRIBUTING") || sourceOf(t, c, "actions.audit").Source.Kind != FromWorkspaceFile {
		t.Errorf("audit = %+v, want the workspace file's", a)
	}
	if _, ok := c.ActionFor("port"); !ok {
		t.Errorf("port from the user file lost")
	}
	// A table key naming no action is a warning.
	_, errs = c.WithEditor(json.RawMessage(`{"reasoningEffort": {"reveiw": "max"}}`))
	if len(errs) != 1 || !IsWarning(errs[0]) || !strings.Contains(errs[0].Error(), "reasoningEffort.reveiw: no such action") {
		t.Errorf("errs = %v", errs)
	}
}

func TestSecretsAccumulate(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "config.toml", "[context]\nsecrets = [\"*.gpg\"]\n")
	ws := writeFile(t, dir, WorkspaceFileName, "[context]\nsecrets = []\nexclude = \"gen/**\"\n")
	c, errs := Load(nil, user)
	mustNoErrors(t, errs)
	c, errs = c.WithWorkspaceFiles(ws)
	mustNoErrors(t, errs)
	if !reflect.DeepEqual(c.Context.Secrets, []string{"*.gpg"}) || !reflect.DeepEqual(c.Context.Exclude, []string{"gen/**"}) {
		t.Errorf("secrets %q exclude %q", c.Context.Secrets, c.Context.Exclude)
	}
}

func TestNoKeyAndFallback(t *testing.T) {
	c := Default()
	if _, err := c.Key(); !errors.Is(err, ErrNoAPIKey) || !strings.Contains(err.Error(), "KIMI_API_KEY") {
		t.Errorf("Key() error = %v", err)
	}
	if c.FallbackURL() != model.DefaultFallbackURL {
		t.Errorf("FallbackURL() = %q", c.FallbackURL())
	}
	c, _ = Load(envOf(map[string]string{"KIMI_API_KEY": testKey, "KIMI_BASE_URL": "https://direct.evolink.ai/"}), "")
	if k, err := c.Key(); err != nil || k != testKey {
		t.Errorf("Key() = %v", err)
	}
	if c.FallbackURL() != model.DefaultFallbackURL {
		t.Errorf("the default URL written out loses the fallback: %q", c.FallbackURL())
	}
	c, _ = Load(envOf(map[string]string{"KIMI_BASE_URL": "https://api.openai.com/v1"}), "")
	if c.BaseURL != "https://api.openai.com" || c.FallbackURL() != "" {
		t.Errorf("baseURL %q fallback %q", c.BaseURL, c.FallbackURL())
	}
}

// TestEffortForKimiK3: kimi-k3 gets max whatever was configured, for
// built-in and user actions, explain and edits alike (seed 003); other
// models keep the configured effort.
func TestEffortForKimiK3(t *testing.T) {
	c, errs := Default().WithEditor(json.RawMessage(`{"model": "kimi-k3", "fastModel": "kimi-k3", "reasoningEffort": {"fix": "low"}}`))
	mustNoErrors(t, errs)
	for _, a := range c.Actions() {
		if a.ReasoningEffort != EffortMax {
			t.Errorf("%s on kimi-k3: effort %q, want max", a.Name, a.ReasoningEffort)
		}
	}
	if s := sourceOf(t, c, "reasoningEffort.fix"); s.Value != `"max"` || s.Source.Kind != FromModel {
		t.Errorf("doctor line %s", s)
	}
	// Completion on kimi-k3 (its model defaults to fastModel) sends max too.
	if s := sourceOf(t, c, "completion.reasoningEffort"); s.Value != `"max"` || s.Source.Kind != FromModel {
		t.Errorf("doctor line %s", s)
	}
	if e, forced := EffortFor("kimi-k3.1-pro", EffortLow); e != EffortLow || forced {
		t.Errorf("kimi-k3.1-pro: %q forced %v", e, forced)
	}
	if e, forced := EffortFor("kimi-k3", EffortMax); e != EffortMax || forced {
		t.Errorf("kimi-k3 max: %q forced %v", e, forced)
	}
}

// TestWaitTimeout: a duration or seconds, from the user file or the editor.
func TestWaitTimeout(t *testing.T) {
	c, errs := Default().WithEditor(json.RawMessage(`{"waitTimeout": "2m"}`))
	mustNoErrors(t, errs)
	if c.WaitTimeout != 2*time.Minute {
		t.Errorf("waitTimeout %v", c.WaitTimeout)
	}
	c, errs = Default().WithEditor(json.RawMessage(`{"waitTimeout": 45}`))
	mustNoErrors(t, errs)
	if c.WaitTimeout != 45*time.Second || Default().WaitTimeout != 90*time.Second {
		t.Errorf("waitTimeout %v, default %v", c.WaitTimeout, Default().WaitTimeout)
	}
}

func TestUserFilePath(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/kimi-lsp/config.toml"},
		{map[string]string{"XDG_CONFIG_HOME": "relative", "HOME": "/h"}, "/h/.config/kimi-lsp/config.toml"},
		{map[string]string{"HOME": "/h"}, "/h/.config/kimi-lsp/config.toml"},
		{map[string]string{}, ""},
	}
	for _, tt := range tests {
		if got := UserFilePath(envOf(tt.env)); got != tt.want {
			t.Errorf("UserFilePath(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

func TestAccessors(t *testing.T) {
	c, errs := Default().WithEditor(json.RawMessage(`{"cacheTTL": "1h", "logLevel": "WARNING", "prices": {"my-model": {"input": 1, "output": 3}}}`))
	mustNoErrors(t, errs)
	if c.CacheTTLDuration().Hours() != 1 || c.Level().String() != "WARN" {
		t.Errorf("ttl %v level %v", c.CacheTTLDuration(), c.Level())
	}
	if p, ok := c.PriceFor("my-model"); !ok || p != (Price{Input: 1, Output: 3}) {
		t.Errorf("PriceFor(my-model) = %+v %v", p, ok)
	}
	if p, _ := c.PriceFor(DefaultModel); p != (Price{Input: 2, CachedRead: 0.2, Write5m: 2, Write1h: 4, Output: 8}) {
		t.Errorf("default price = %+v", p)
	}
	// Copies handed out do not alias the configuration.
	ps := c.Prices()
	ps[DefaultModel] = Price{}
	if p, _ := c.PriceFor(DefaultModel); p.Input != 2 {
		t.Errorf("Prices() aliases the configuration")
	}
}

func TestValueSemantics(t *testing.T) {
	c1, errs := Default().WithEditor(json.RawMessage(`{"context": {"exclude": ["a/**"]}, "prices": {"m": {"input": 1}}}`))
	mustNoErrors(t, errs)
	before := c1.Redacted()
	c2, errs := c1.WithWorkspaceFiles(writeFile(t, t.TempDir(), WorkspaceFileName, "[context]\nexclude = [\"b/**\"]\n"))
	mustNoErrors(t, errs)
	c3, errs := c2.WithEditor(json.RawMessage(`{"prices": {"m": {"input": 5}}, "reasoningEffort": "max"}`))
	mustNoErrors(t, errs)
	if c1.Redacted() != before {
		t.Errorf("deriving configurations changed the original:\n%s\nwant\n%s", c1.Redacted(), before)
	}
	if p, _ := c1.PriceFor("m"); p.Input != 1 {
		t.Errorf("price changed in the original")
	}
	if p, _ := c3.PriceFor("m"); p.Input != 5 {
		t.Errorf("price = %v", p.Input)
	}
}

func TestZeroConfig(t *testing.T) {
	var zero Config
	c, errs := zero.WithEditor(json.RawMessage(`{"model": "x"}`))
	mustNoErrors(t, errs)
	if c.Model != "x" || c.FastModel != DefaultFastModel {
		t.Errorf("zero.WithEditor: %v", c)
	}
	c, errs = zero.WithEditor(json.RawMessage(`{"cacheTTL": "x"}`))
	if !HasErrors(errs) || c.CacheTTL != DefaultCacheTTL {
		t.Errorf("zero.WithEditor(bad): %v %v", c, errs)
	}
}

// TestJobsMaxConcurrent: jobs.maxConcurrent defaults to 4 and is set by the
// user file and the editor's settings; a workspace file may not set it (a
// cloned repository must not decide how hard your key is used).
func TestJobsMaxConcurrent(t *testing.T) {
	dir := t.TempDir()
	if d := Default().Jobs.MaxConcurrent; d != 4 {
		t.Errorf("default %d, want 4", d)
	}
	user := writeFile(t, dir, "config.toml", "[jobs]\nmaxConcurrent = 2\n")
	c, errs := Load(nil, user)
	mustNoErrors(t, errs)
	if c.Jobs.MaxConcurrent != 2 || sourceOf(t, c, "jobs.maxConcurrent").Source.Kind != FromUserFile {
		t.Errorf("user file: %d from %v", c.Jobs.MaxConcurrent, sourceOf(t, c, "jobs.maxConcurrent").Source)
	}
	ws := writeFile(t, dir, WorkspaceFileName, "[jobs]\nmaxConcurrent = 64\n")
	c, errs = c.WithWorkspaceFiles(ws)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "cannot set jobs") {
		t.Errorf("workspace file: problems %v, want one warning", errs)
	}
	if c.Jobs.MaxConcurrent != 2 {
		t.Errorf("a workspace file changed jobs.maxConcurrent to %d", c.Jobs.MaxConcurrent)
	}
	c, errs = c.WithEditor(json.RawMessage(`{"jobs": {"maxConcurrent": 3}}`))
	mustNoErrors(t, errs)
	if c.Jobs.MaxConcurrent != 3 {
		t.Errorf("editor settings: %d, want 3", c.Jobs.MaxConcurrent)
	}
}
