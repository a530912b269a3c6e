package lsp

import (
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// clientSession is what initialize said of the client: the negotiated
// position encoding, its capabilities (decoded once, on first use) and its
// name and version. It is safe for concurrent use.
type clientSession struct {
	// mu guards the fields below, set by initialize.
	mu      sync.Mutex
	enc     workspace.Encoding
	capsRaw json.RawMessage // the client's capabilities, decoded by capabilities
	info    clientInfo
	// caps is capsRaw decoded, once (capsOnce), on first use.
	capsOnce sync.Once
	caps     clientCapabilities
}

// set records what initialize said: the encoding, the capabilities as
// sent (nil: none) and the client's name and version.
func (c *clientSession) set(enc workspace.Encoding, caps json.RawMessage, info clientInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enc = enc
	c.capsRaw = caps
	if c.capsRaw == nil {
		c.capsRaw = json.RawMessage("{}")
	}
	c.info = info
}

// encoding returns the negotiated position encoding.
func (c *clientSession) encoding() workspace.Encoding {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.enc
}

// client returns the client's name and version (zero before initialize
// or when it sent none).
func (c *clientSession) client() clientInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

// capabilities returns the client's capabilities (none before
// initialize), decoding them on first use; a decoding failure is logged
// to log and leaves a minimal client.
func (c *clientSession) capabilities(log *slog.Logger) clientCapabilities {
	c.mu.Lock()
	raw := c.capsRaw
	c.mu.Unlock()
	if raw == nil {
		return clientCapabilities{}
	}
	c.capsOnce.Do(func() {
		if err := json.Unmarshal(raw, &c.caps); err != nil {
			log.Warn("client capabilities not understood; assuming a minimal client", "error", err)
		}
	})
	return c.caps
}
