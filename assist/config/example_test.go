package config_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
)

func ExampleLoad() {
	dir, err := os.MkdirTemp("", "kimi-config")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	userFile := filepath.Join(dir, "config.toml")
	_ = os.WriteFile(userFile, []byte("cacheTTL = \"1h\"\nmodel = \"kimi-k3\"\n"), 0o600)
	env := map[string]string{"KIMI_API_KEY": "sk-example-0123456789abcd", "KIMI_MODEL": "kimi-k3.1-pro"}

	// At start: defaults, the user file, the environment.
	cfg, errs := config.Load(func(k string) string { return env[k] }, userFile)
	for _, err := range errs {
		fmt.Println(err)
	}
	// Then the editor's settings, from initializationOptions. An invalid
	// section would leave cfg as it was and return the reasons.
	cfg, errs = cfg.WithEditor(json.RawMessage(`{"kimi": {"reasoningEffort": {"explain": "max"}, "cacheTTL": "2h"}}`))
	for _, err := range errs {
		fmt.Println(strings.ReplaceAll(err.Error(), dir, "$DIR"))
	}
	cfg, _ = cfg.WithEditor(json.RawMessage(`{"kimi": {"reasoningEffort": {"explain": "max"}}}`))

	for _, s := range cfg.Sources() {
		switch s.Key {
		case "apiKey", "model", "cacheTTL", "reasoningEffort.explain", "reasoningEffort.fix":
			fmt.Println(strings.ReplaceAll(s.String(), dir, "$DIR"))
		}
	}
	explain, _ := cfg.ActionFor(config.ActionExplain)
	fmt.Println(explain.Model, explain.ReasoningEffort, explain.MaxCompletionTokens)
	// Output:
	// editor settings: cacheTTL: "2h" is not one of 5m, 1h
	// apiKey = sk-…abcd (from KIMI_API_KEY)
	// model = "kimi-k3.1-pro" (from KIMI_MODEL)
	// reasoningEffort.explain = "max" (from editor settings)
	// reasoningEffort.fix = "high" (from default)
	// cacheTTL = "1h" (from user file $DIR/config.toml)
	// kimi-k3.1-pro-highspeed max 8192
}
