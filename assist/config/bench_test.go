package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWithEditor measures a didChangeConfiguration: parsing a typical
// editor section and composing it over a user file, the environment and a
// workspace file.
func BenchmarkWithEditor(b *testing.B) {
	dir := b.TempDir()
	user := writeFileB(b, dir, "config.toml", "cacheTTL = \"1h\"\n[context]\nexclude = [\"vendor/**\"]\n[[actions]]\nname = \"audit\"\nresult = \"explain\"\nprompt = \"Review {{selection}}\"\n")
	ws := writeFileB(b, dir, WorkspaceFileName, "[context]\nmaxTokens = 32000\n")
	c, _ := Load(func(k string) string {
		if k == "KIMI_API_KEY" {
			return "sk-bench-0000000000000000"
		}
		return ""
	}, user)
	c, _ = c.WithWorkspaceFiles(ws)
	raw := json.RawMessage(`{"kimi": {"model": "kimi-k3.1-pro", "reasoningEffort": {"explain": "low", "fix": "max"},
		"maxCompletionTokens": {"explain": 8192}, "context": {"include": {"recent": false}},
		"actions": [{"name": "port", "prompt": "Port {{selection}} to {{instruction}}", "result": "edit"}]}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := c.WithEditor(raw); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkActionFor measures resolving an action's settings, done once per
// job.
func BenchmarkActionFor(b *testing.B) {
	c, _ := Default().WithEditor(json.RawMessage(`{"actions": [{"name": "port", "prompt": "p", "result": "edit"}]}`))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = c.ActionFor("port")
	}
}

func writeFileB(b *testing.B, dir, name, content string) string {
	b.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		b.Fatal(err)
	}
	return p
}
