package cache

import (
	"cmp"
	"fmt"
)

// RecordFollowUp accounts for a request that continues a built prompt — a
// later round of a tool-call loop, which sends the prompt, the assistant's
// reply and the tool results — so that Stats covers every request of the
// session. It does not touch the estimator or the prefix tracker, which
// follow the built prompts only.
func (s *Session) RecordFollowUp(model string, u Usage) (Accounting, error) {
	if err := checkUsage(u); err != nil {
		return Accounting{}, fmt.Errorf("cache: follow-up: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := Accounting{Usage: u}
	s.stats.Requests++
	if u.PromptTokens == 0 {
		s.stats.UnknownUsage++
		return a, nil
	}
	s.addUsageLocked(&a, model, u, cmp.Or(u.CacheTTL, s.ttl))
	return a, nil
}
