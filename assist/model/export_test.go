package model

import (
	"io"
)

// NewStreamReader returns a Stream over a reply body read elsewhere (a
// recorded reply, a test): SSE unless isJSON. Close closes body.
func NewStreamReader(body io.ReadCloser, isJSON bool) *Stream {
	return newStream(body, isJSON)
}
