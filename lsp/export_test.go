package lsp

import "io"

// newTestServer is NewServer with the tests' knobs set: the one way they
// are set (production's Options holds settings only).
func newTestServer(r io.Reader, w io.Writer, c io.Closer, opts Options, knobs testKnobs) (*Server, error) {
	return newServer(r, w, c, opts, knobs)
}

func (c *secretMemo) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
