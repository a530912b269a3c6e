package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// countRequests makes every model request of the commands go to a
// transport that counts and refuses it, until the test ends.
func countRequests(t *testing.T) *atomic.Int32 {
	var n atomic.Int32
	old := modelHTTP
	modelHTTP = &http.Client{Transport: roundTrip(func(*http.Request) (*http.Response, error) {
		n.Add(1)
		return nil, errors.New("test: no request may leave")
	})}
	t.Cleanup(func() { modelHTTP = old })
	return &n
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestInvalidBaseURLCLI (#21.1): explain, edit and doctor with an invalid
// baseURL (environment or user file) send nothing to any host, and say
// which value from which source is wrong.
func TestInvalidBaseURLCLI(t *testing.T) {
	file := cliWorkspace(t)
	for _, tc := range []struct {
		name, bad, source string
		env               []string
		userFile          string
	}{
		{"env no scheme", "127.0.0.1:8011", "KIMI_BASE_URL", []string{"KIMI_BASE_URL=127.0.0.1:8011"}, ""},
		{"env ftp", "ftp://x", "KIMI_BASE_URL", []string{"KIMI_BASE_URL=ftp://x"}, ""},
		{"user file", "http://", "user file", nil, "baseURL = \"http://\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := countRequests(t)
			envList := testEnv(t, append([]string{"KIMI_API_KEY=sk-test-0123456789abcdef"}, tc.env...)...)
			if tc.userFile != "" {
				userConfig(t, envList, tc.userFile)
			}
			env := envFunc(envList)
			for _, args := range [][]string{
				{"explain", file + ":3-5"},
				{"edit", file, "--action", "fix"},
			} {
				var out, errb bytes.Buffer
				code := run(context.Background(), args, nil, &out, &errb, env)
				if code == 0 || !strings.Contains(errb.String(), `"`+tc.bad+`"`) || !strings.Contains(errb.String(), tc.source) ||
					!strings.Contains(errb.String(), "nothing was sent") {
					t.Errorf("%s: code %d, stderr %q", args[0], code, errb.String())
				}
			}
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"doctor"}, nil, &out, &errb, env)
			text := out.String()
			problems, _, _ := strings.Cut(text[strings.Index(text, "Problems:")+1:], "\nEndpoint")
			if code != 1 || !strings.Contains(text, "Problems:") || !strings.Contains(problems, `"`+tc.bad+`"`) ||
				!strings.Contains(text, "not checked: nothing was sent") {
				t.Errorf("doctor: code %d, stdout:\n%s", code, text)
			}
			if got := n.Load(); got != 0 {
				t.Errorf("%d requests left for some host; want none", got)
			}
		})
	}
}
