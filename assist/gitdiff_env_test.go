package assist

import (
	"slices"
	"strings"
	"testing"
)

// TestGitEnvAllowList (#30.4): git gets PATH, HOME and the locale of ours
// and the settings that keep it from asking, locking, fetching or reading
// the system configuration — never the API key, a token, a cloud key or a
// GIT_* variable that would point it at another repository or add
// configuration.
func TestGitEnvAllowList(t *testing.T) {
	t.Setenv("PATH", "/usr/bin:/bin")
	t.Setenv("HOME", "/home/h")
	t.Setenv("LC_ALL", "C")
	for _, kv := range []string{"KIMI_API_KEY=k", "GITHUB_TOKEN=t", "AWS_SECRET_ACCESS_KEY=a", "NPM_KEY=n", "MY_SECRET=s",
		"GIT_DIR=/elsewhere", "GIT_WORK_TREE=/elsewhere", "GIT_CONFIG_PARAMETERS='core.fsmonitor'='x'", "GIT_CONFIG_COUNT=1",
		"GIT_EXTERNAL_DIFF=x", "GIT_SSH_COMMAND=x", "GIT_ASKPASS=x", "SSH_AUTH_SOCK=/s", "LD_PRELOAD=/x.so"} {
		name, v, _ := strings.Cut(kv, "=")
		t.Setenv(name, v)
	}
	env := gitEnv()
	for _, want := range []string{"PATH=/usr/bin:/bin", "HOME=/home/h", "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0", "GIT_NO_LAZY_FETCH=1", "GIT_ALLOW_PROTOCOL="} {
		if !slices.Contains(env, want) {
			t.Errorf("no %s in %q", want, env)
		}
	}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "KIMI_"), strings.HasSuffix(name, "_TOKEN"), strings.HasSuffix(name, "_KEY"),
			strings.HasPrefix(name, "AWS_"), strings.Contains(name, "SECRET"), strings.HasPrefix(name, "SSH_"), name == "LD_PRELOAD",
			strings.HasPrefix(name, "GIT_") && !slices.Contains([]string{"GIT_CONFIG_NOSYSTEM", "GIT_TERMINAL_PROMPT",
				"GIT_OPTIONAL_LOCKS", "GIT_NO_LAZY_FETCH", "GIT_ALLOW_PROTOCOL", "GIT_PAGER"}, name):
			t.Errorf("git gets %s", kv)
		}
	}
}
