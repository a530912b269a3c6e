package verify

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// TestPublishedURISpelledOtherwise: the diagnostics a helper publishes
// for a document opened with a drive letter in upper case (the CLI's path
// on Windows, "file:///C:/…") are heard, whether it sends our URI back or
// its own spelling of it (pyright: "file:///c%3A/…"): the publications
// are kept by ParseURI's spelling, which lowers the drive letter.
func TestPublishedURISpelledOtherwise(t *testing.T) {
	uri := workspace.FileURI("/C:/proj/a.py")
	for _, sent := range []string{string(uri), "file:///c%3A/proj/a.py"} {
		h := &helper{name: "pyright", docs: map[workspace.URI]*hdoc{uri: {version: 3}}, pubs: map[workspace.URI]published{},
			pubWake: make(chan struct{}), exited: make(chan struct{})}
		params, _ := json.Marshal(map[string]any{"uri": sent, "version": 3,
			"diagnostics": []any{map[string]any{"range": map[string]any{}, "message": "boom", "severity": 1}}})
		h.onNotify("textDocument/publishDiagnostics", params)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		d, err := h.pushedDiagnostics(ctx, uri)
		cancel()
		if err != nil || len(d) != 1 || d[0].Message != "boom" {
			t.Errorf("published as %s: got %+v, %v; want the published diagnostic", sent, d, err)
		}
	}
}

// TestUnversionedPublishSettles: from a helper that publishes without
// versions, a document's diagnostics are its publication after our
// change once no other of it came for settleWindow (a later one of it
// within the window wins), and other documents' publications (a helper
// publishing each open file in turn) do not hold it up.
func TestUnversionedPublishSettles(t *testing.T) {
	uri, other := workspace.FileURI("/p/a.ts"), workspace.FileURI("/p/b.ts")
	h := &helper{name: "ts", docs: map[workspace.URI]*hdoc{uri: {version: 3}}, pubs: map[workspace.URI]published{},
		pubWake: make(chan struct{}), exited: make(chan struct{})}
	publish := func(u workspace.URI, msg string) {
		params, _ := json.Marshal(map[string]any{"uri": string(u),
			"diagnostics": []any{map[string]any{"range": map[string]any{}, "message": msg, "severity": 1}}})
		h.onNotify("textDocument/publishDiagnostics", params)
	}
	done := make(chan struct{})
	defer close(done)
	publish(uri, "stale")
	go func() {
		publish(uri, "fresh")
		for {
			select {
			case <-done:
				return
			case <-time.After(settleWindow / 5):
				publish(other, "another file")
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*settleWindow)
	defer cancel()
	d, err := h.pushedDiagnostics(ctx, uri)
	if err != nil || len(d) != 1 || d[0].Message != "fresh" {
		t.Fatalf("got %+v, %v; want the document's last publication", d, err)
	}
}
