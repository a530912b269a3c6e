package workspace

import (
	"sync/atomic"
	"testing"
)

func TestIsSecret(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{".env", true},
		{".env.local", true},
		{"config/.env.production", true},
		{".ENV", true},
		{"server.pem", true},
		{"certs/tls.KEY", true},
		{"id_rsa", true},
		{"home/.ssh/id_ed25519.pub", true},
		{".npmrc", true},
		{"/home/u/.netrc", true},
		{"credentials.json", true},
		{"aws/credentials", true},
		{".aws/config", true},
		{"deploy/prod.tfvars", true},
		{"main.go", false},
		{"environment.go", false},
		{"keyboard.go", false},
		{"docs/keys.md", false},
		{"src/env.ts", false},
		{"README.md", false},
	}
	for _, tt := range tests {
		if got := IsSecret(tt.path); got != tt.want {
			t.Errorf("IsSecret(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestSecretsUserGlobs(t *testing.T) {
	var told atomic.Int32
	s := NewSecrets([]string{"config/prod/*.yaml", "*.sqlite", "!*.pem", "  "}, func(string) { told.Add(1) })
	for path, want := range map[string]bool{
		"config/prod/db.yaml":   true,
		"x/config/prod/db.yaml": false, // anchored at the folder
		"data/app.SQLITE":       true,
		"cert.pem":              true, // a "!" line cannot un-secret a default
		"config/dev/db.yaml":    false,
	} {
		if got := s.IsSecret(path); got != want {
			t.Errorf("IsSecret(%q) = %v, want %v", path, got, want)
		}
	}
	s.Refused("a")
	s.Refused("b")
	if told.Load() != 1 {
		t.Errorf("notice called %d times, want once", told.Load())
	}
	var nilS *Secrets
	if !nilS.IsSecret(".env") {
		t.Errorf("nil Secrets does not apply the defaults")
	}
	nilS.Refused("x")
}
