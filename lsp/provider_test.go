package lsp

import (
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestWaitingReportedAsProgress (issue 15 item 6): while the provider has
// not started answering, the job's $/progress says so within seconds.
func TestWaitingReportedAsProgress(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: "Explain", DelayMS: 3500, Content: explainText})
	uri := js.file("add.go", "package add\n\nfunc Add(a, b int) int { return a + b }\n")
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(2, 0, 2, 10)}, "w")
	if end := js.progressEnd(`"w"`); !strings.HasPrefix(end, "explanation ready") {
		t.Errorf("end %q", end)
	}
	var waiting bool
	for _, v := range js.progressOf(`"w"`) {
		waiting = waiting || v.Kind == "report" && strings.Contains(v.Message, "waiting for kimi-k3.1-pro-highspeed to start answering")
	}
	if !waiting {
		t.Errorf("no waiting report in %+v", js.progressOf(`"w"`))
	}
}

// TestCutOffExplanationOverLSP (issue 13 item 1): the job ends saying the
// answer was cut off and why; asked again, the model is asked again.
func TestCutOffExplanationOverLSP(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: "Explain", Content: "This function adds", FinishReason: "length"})
	uri := js.file("add.go", "package add\n\nfunc Add(a, b int) int { return a + b }\n")
	args := map[string]any{"uri": uri, "range": rng(2, 0, 2, 10)}
	js.run("kimi.explain", args, "a")
	if end := js.progressEnd(`"a"`); !strings.Contains(end, "cut off") || !strings.Contains(end, "maxCompletionTokens") {
		t.Errorf("end %q", end)
	}
	js.run("kimi.explain", args, "b")
	js.progressEnd(`"b"`)
	if n := len(js.srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2: the cut-off answer was kept", n)
	}
}
