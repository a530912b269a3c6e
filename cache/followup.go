package cache

import "fmt"

// RecordFollowUp accounts for a request that continues a built prompt — a
// later round of a tool-call loop, which sends the prompt, the assistant's
// reply and the tool results — so that Stats covers every request of the
// session. It does not touch the estimator or the prefix tracker, which
// follow the built prompts only.
func (s *Session) RecordFollowUp(model string, u Usage) (Accounting, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := Accounting{Usage: u}
	s.stats.Requests++
	if u.PromptTokens <= 0 {
		s.stats.UnknownUsage++
		return a, nil
	}
	if u.CachedTokens < 0 || u.CacheWriteTokens < 0 || u.CompletionTokens < 0 || u.ReasoningTokens < 0 {
		return a, fmt.Errorf("cache: follow-up: negative token count in usage %+v", u)
	}
	s.addUsageLocked(&a, model, u)
	return a, nil
}
