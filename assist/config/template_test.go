package config

import "testing"

func TestExpandPrompt(t *testing.T) {
	vars := PromptVars{Selection: "x := {{file}}", File: "a.go", Language: "go", Diagnostics: "unused x", Instruction: "make it fast"}
	tests := []struct{ tmpl, want string }{
		{"Explain {{selection}}", "Explain x := {{file}}"},
		{"{{ file }} ({{language}}): {{diagnostics}}; {{instruction}}", "a.go (go): unused x; make it fast"},
		{"keep {{ .Name }} and {{other}} and {{", "keep {{ .Name }} and {{other}} and {{"},
		{"{{{{file}}}}", "{{a.go}}"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := ExpandPrompt(tt.tmpl, vars); got != tt.want {
			t.Errorf("ExpandPrompt(%q) = %q, want %q", tt.tmpl, got, tt.want)
		}
	}
}

func TestCheckTemplate(t *testing.T) {
	tests := []struct {
		tmpl string
		ok   bool
	}{
		{"Fix {{selection}} in {{ file }}", true},
		{"Go template {{ .Name }} and {{a|b}} and {{ }} and {{", true},
		{"{{selecton}}", false},
		{"{{Selection}}", false},
		{"{{selection}} {{code}} {{lang}}", false},
	}
	for _, tt := range tests {
		if err := checkTemplate(tt.tmpl); (err == nil) != tt.ok {
			t.Errorf("checkTemplate(%q) = %v, want ok=%v", tt.tmpl, err, tt.ok)
		}
	}
	if err := checkTemplate("{{code}} {{lang}}"); err == nil || err.Error() != `unknown placeholders "{{code}}, {{lang}}"; known: {{selection}}, {{file}}, {{language}}, {{diagnostics}}, {{instruction}}` {
		t.Errorf("message = %v", err)
	}
}
