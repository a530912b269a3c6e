package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestSecretString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "not set"},
		{"short-key", "set"},
		{"0123456789abcdef", "…cdef"},
		{"sk-0123456789abcdefWXYZ", "sk-…WXYZ"},
	}
	for _, tt := range tests {
		if got := NewSecret(tt.in).String(); got != tt.want {
			t.Errorf("Secret(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestKeyNeverPrinted prints a Config holding the key in every way a
// careless caller might and greps the output for the key.
func TestKeyNeverPrinted(t *testing.T) {
	c, errs := Load(envOf(map[string]string{"KIMI_API_KEY": testKey}), "")
	mustNoErrors(t, errs)
	c, errs = c.WithEditor(json.RawMessage(`{"apiKey": "` + testKey + `"}`))
	mustNoErrors(t, errs)

	var out bytes.Buffer
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		fmt.Fprintf(&out, verb+"\n", c)
		fmt.Fprintf(&out, verb+"\n", &c)
		fmt.Fprintf(&out, verb+"\n", c.APIKey)
		fmt.Fprintf(&out, verb+"\n", struct{ K Secret }{c.APIKey})
		fmt.Fprintf(&out, verb+"\n", []Config{c})
	}
	fmt.Fprintln(&out, c, c.APIKey, c.Redacted(), c.String())
	if b, err := json.Marshal(c); err != nil {
		t.Fatal(err)
	} else {
		out.Write(b)
	}
	for _, h := range []slog.Handler{slog.NewTextHandler(&out, nil), slog.NewJSONHandler(&out, nil)} {
		slog.New(h).Info("config", "cfg", c, "key", c.APIKey, "ptr", &c)
	}
	if strings.Contains(out.String(), testKey) || strings.Contains(out.String(), testKey[3:12]) {
		t.Fatalf("the key leaked:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "sk-…WXYZ") {
		t.Errorf("redacted form missing from output:\n%s", out.String())
	}
}
