package config

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestREADMETable (#22.5): README.md's configuration table is the
// schema's: every key in one, in the other, with the same environment
// variable, default, meaning and workspace rule.
func TestREADMETable(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "| key | environment | default | meaning |\n")
	if i < 0 {
		t.Fatal("README.md has no configuration table")
	}
	var got []string
	for _, line := range strings.SplitAfter(text[i:], "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		got = append(got, line)
	}
	want := strings.SplitAfter(readmeTable(), "\n")
	want = want[:len(want)-1]
	rowKey := func(row string) string {
		cells := strings.Split(row, "|")
		if len(cells) < 2 {
			return row
		}
		return strings.TrimSpace(cells[1])
	}
	inWant := map[string]string{}
	for _, r := range want {
		inWant[rowKey(r)] = r
	}
	inGot := map[string]string{}
	for _, r := range got {
		inGot[rowKey(r)] = r
		if w, ok := inWant[rowKey(r)]; !ok {
			t.Errorf("README.md's table has %s, which the schema has not", rowKey(r))
		} else if w != r {
			t.Errorf("README.md's row for %s differs from the schema:\n got: %s want: %s", rowKey(r), r, w)
		}
	}
	for _, r := range want {
		if _, ok := inGot[rowKey(r)]; !ok {
			t.Errorf("README.md's table lacks %s", rowKey(r))
		}
	}
	if t.Failed() {
		t.Logf("the table from the schema:\n%s", readmeTable())
	}
}

// TestSchemaDefaults (#22.5): every default the schema states is the one
// Default has (where the table states a value, not a description).
func TestSchemaDefaults(t *testing.T) {
	d := Default()
	values := map[string]string{}
	for _, s := range d.Sources() {
		if _, ok := values[s.Key]; !ok {
			values[s.Key] = strings.Trim(s.Value, `"`)
		}
	}
	for _, e := range schema {
		def := strings.Trim(e.def, "`")
		v, ok := values[e.path]
		switch {
		case !ok || v == "" || v == "[]":
			if def != "none" && e.list == nil {
				t.Errorf("%s: the schema says %q, Default has no value", e.path, e.def)
			}
		case e.list != nil || e.path == "apiKey":
		case sameDuration(def, v):
		case !strings.HasPrefix(def, v):
			t.Errorf("%s: the schema says %q, Default has %q", e.path, e.def, v)
		}
	}
}

// TestSchemaWorkspaceRules (#22.5): the keys a workspace file may set are
// those it could set before the schema.
func TestSchemaWorkspaceRules(t *testing.T) {
	var never, offOnly []string
	for _, e := range schema {
		switch e.ws {
		case wsNever:
			never = append(never, e.path)
		case wsOffOnly:
			offOnly = append(offOnly, e.path)
		}
	}
	if got, want := strings.Join(never, " "), "apiKey baseURL waitTimeout jobs.maxConcurrent prices logLevel allowInvalidGo webSearch completion.debounceMs nextEdit.debounceMs verify.servers trust.folders workspaceTrusted"; got != want {
		t.Errorf("keys a workspace file cannot set: %s, want %s", got, want)
	}
	// verify.enable since #30.3: a repository must not start helpers.
	if got := strings.Join(offOnly, " "); got != "completion.enable nextEdit.enable verify.enable" {
		t.Errorf("keys a workspace file may only turn off: %s", got)
	}
	var lowerOnly []string
	for _, e := range schema {
		if e.ws == wsLowerOnly {
			lowerOnly = append(lowerOnly, e.path)
		}
	}
	if got := strings.Join(lowerOnly, " "); got != "budget.hourly budget.daily budget.confirmAbove" {
		t.Errorf("keys a workspace file may only lower: %s", got)
	}
}

func sameDuration(a, b string) bool {
	da, errA := time.ParseDuration(a)
	db, errB := time.ParseDuration(b)
	return errA == nil && errB == nil && da == db
}
