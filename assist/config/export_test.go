package config

import "strings"

// defaultCompletion returns the built-in completion settings (the
// schema's defaults).
func defaultCompletion() Completion { return Default().Completion }

// readmeTable renders the configuration table of README.md from the
// schema: one row per key, with what a workspace file may do with it.
func readmeTable() string {
	var b strings.Builder
	b.WriteString("| key | environment | default | meaning |\n|---|---|---|---|\n")
	for _, e := range schema {
		env := " "
		if e.env != "" {
			env = " `" + e.env + "` "
		}
		doc := e.doc
		switch e.ws {
		case wsNever:
			doc += "; not settable by a workspace file"
		case wsOffOnly:
			doc += "; a workspace file may only turn it off"
		case wsLowerOnly:
			doc += "; a workspace file may only lower it"
		}
		b.WriteString("| `" + e.path + "` |" + env + "| " + e.def + " | " + doc + " |\n")
	}
	return b.String()
}
