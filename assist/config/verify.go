package config

import (
	"sort"
	"strconv"
	"strings"
)

// Values of verify.enable and verify.onNewErrors.
const (
	// VerifyAuto verifies edits where a helper language server is found.
	VerifyAuto = "auto"
	// VerifyOff never starts a helper.
	VerifyOff = "off"

	// OnNewErrorsRepair sends the new errors back to the model once, then
	// asks.
	OnNewErrorsRepair = "repair"
	// OnNewErrorsAsk asks the user at once (apply anyway, discard, show).
	OnNewErrorsAsk = "ask"
	// OnNewErrorsApply applies the edit and says it brought errors.
	OnNewErrorsApply = "apply"
	// OnNewErrorsRefuse applies nothing.
	OnNewErrorsRefuse = "refuse"

	// DefaultVerifyIdleMinutes is verify.idleMinutes.
	DefaultVerifyIdleMinutes = 10
)

// Verify configures edit verification by helper language servers.
type Verify struct {
	// Enable is VerifyAuto or VerifyOff.
	Enable string
	// Servers maps an LSP language identifier to the helper's command
	// line (program and arguments); an empty command turns verification
	// off for that language. Languages not listed keep the defaults.
	Servers map[string][]string
	// OnNewErrors is what happens to an edit that brings new errors.
	OnNewErrors string
	// IdleMinutes is how long a helper lives without use.
	IdleMinutes int
}

// APIKeyEnv is the environment variable of apiKey. No program kimi-lsp
// starts gets it (assist/childenv.Credential).
const APIKeyEnv = "KIMI_API_KEY"

const whyServers = "a cloned repository must not choose a program for kimi-lsp to run; set it in your user config file or your editor settings"

// readServers reads verify.servers: a table from language to a command,
// as one string (split at spaces, no shell) or a list of strings.
func readServers(p *parser, key string, v any) (map[string][]string, bool) {
	t, ok := p.table(key, v)
	if !ok {
		return nil, false
	}
	out := map[string][]string{}
	for _, lang := range sortedKeys(t) {
		k := key + "." + lang
		if lang == "" || strings.ContainsAny(lang, " \t./\\") {
			p.fail(k, "%s is not a language identifier (go, python, typescript, …)", quote(lang))
			continue
		}
		var argv []string
		switch c := t[lang].(type) {
		case string:
			argv = strings.Fields(c)
		default:
			items, ok := p.list(k, c)
			if !ok {
				continue
			}
			bad := false
			for _, it := range items {
				s, isStr := it.(string)
				if !isStr {
					p.fail(k, "got %s in the command, want strings", typeName(it))
					bad = true
					break
				}
				argv = append(argv, s)
			}
			if bad {
				continue
			}
		}
		out[lang] = argv
	}
	return out, true
}

func showServers(m map[string][]string) string {
	if len(m) == 0 {
		return "{} (the defaults)"
	}
	langs := make([]string, 0, len(m))
	for l := range m {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	parts := make([]string, 0, len(langs))
	for _, l := range langs {
		parts = append(parts, l+" = "+strconv.Quote(strings.Join(m[l], " ")))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
