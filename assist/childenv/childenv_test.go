package childenv

import (
	"slices"
	"testing"
)

func TestFilter(t *testing.T) {
	env := []string{
		"PATH=/usr/bin", "HOME=/home/u", "LC_ALL=C", "GOPATH=/go", "GOFLAGS=-mod=mod",
		"KIMI_API_KEY=sk-1", "KIMI_BASE_URL=http://x", "AWS_SECRET_ACCESS_KEY=a", "AWS_REGION=eu",
		"GITHUB_TOKEN=g", "OPENAI_API_KEY=o", "ANTHROPIC_API_KEY=an", "GO_SECRET=s", "GOPROXY_TOKEN=t",
		"NPM_CONFIG_PASSWORD=p", "SSH_AUTH_SOCK=/tmp/a", "DISPLAY=:0", "=bad", "noequals",
	}
	goVars := func(n string) bool { return len(n) > 2 && n[:2] == "GO" }
	got := Filter(env, goVars)
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "LC_ALL=C", "GOPATH=/go", "GOFLAGS=-mod=mod"}
	if !slices.Equal(got, want) {
		t.Errorf("Filter = %q, want %q", got, want)
	}
	if got := Filter(env, nil); !slices.Equal(got, want[:3]) {
		t.Errorf("Filter without an allow = %q", got)
	}
	for _, name := range []string{"kimi_api_key", "GH_TOKEN", "MY_PASSWD", "GOOGLE_APPLICATION_CREDENTIALS", "TOKEN"} {
		if !Credential(name) {
			t.Errorf("Credential(%s) = false", name)
		}
	}
	for _, name := range []string{"PATH", "GOPATH", "TOKENIZERS_PARALLELISM", "KEYBOARD"} {
		if Credential(name) {
			t.Errorf("Credential(%s) = true", name)
		}
	}
}
