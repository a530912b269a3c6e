package lsp

import "io"

// newTestServer is NewServer with the tests' knobs set: the one way they
// are set (production's Options holds settings only).
func newTestServer(r io.Reader, w io.Writer, c io.Closer, opts Options, knobs testKnobs) (*Server, error) {
	return newServer(r, w, c, opts, knobs)
}

// pullInFlight reports whether a workspace/configuration pull is in flight.
func (st *settings) pullInFlight() bool {
	st.pullMu.Lock()
	defer st.pullMu.Unlock()
	return st.pulling
}

func (c *secretMemo) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
