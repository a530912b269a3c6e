// Package cache lays out prompts so that their prefix stays byte-stable from
// request to request, estimates their tokens, tracks what the provider has
// probably cached, and accounts for prompt, cached and written tokens and
// their cost. ("cache" is the provider's prompt cache, not a file cache.)
package cache
