package lsp

func (c *secretMemo) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
