package model

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrUnauthorized: the provider refused the API key (401 or 403).
	ErrUnauthorized = errors.New("the provider refused the API key")
	// ErrBadRequest: the provider rejected the request (400 and other 4xx).
	ErrBadRequest = errors.New("the provider rejected the request")
	// ErrRateLimited: 429, still after the bounded retries.
	ErrRateLimited = errors.New("rate limited by the provider")
	// ErrServer: 5xx, still after the bounded retries and the fallback URL.
	ErrServer = errors.New("the provider failed")
	// ErrTruncated: the stream ended before [DONE] and finish_reason, or
	// inside a frame. The answer so far is incomplete.
	ErrTruncated = errors.New("the reply stream was cut off")
	// ErrNoAnswer: finish_reason "length" with no answer text and no tool
	// call — thinking used the whole max_completion_tokens budget. It is the
	// project's one ErrNoAnswer.
	ErrNoAnswer = errors.New("the model used the whole completion budget on thinking and wrote no answer: raise maxCompletionTokens or lower reasoningEffort")
	// ErrCutOff: finish_reason "length" after some answer text or a tool
	// call — the reply stopped at max_completion_tokens and is incomplete
	// (see CheckFinish).
	ErrCutOff = errors.New("the answer was cut off at the output limit")
	// ErrFinishReason: a finish_reason outside the seed's enum (stop,
	// length, tool_calls), such as content_filter: the provider ended the
	// reply for a reason of its own, and it may be incomplete (see
	// CheckFinish).
	ErrFinishReason = errors.New("the provider ended the answer early")
	// ErrTimeout: connecting, the first byte or the next chunk took longer
	// than the configured limit.
	ErrTimeout = errors.New("the provider did not answer in time")
	// ErrMalformed: a reply that is not the JSON the API defines.
	ErrMalformed = errors.New("malformed reply from the provider")
)

// APIError is an HTTP error answer from the provider, or an error object in
// a stream. Its text carries the provider's message, never the API key.
type APIError struct {
	// StatusCode is the HTTP status (0 for an error inside a stream).
	StatusCode int
	// Message, Type and Code are the provider's error object fields.
	Message, Type, Code string
	// RetryAfter is the wait the provider asked for (429, 503), if any.
	RetryAfter time.Duration
	// URL is the endpoint that answered.
	URL string
	// Attempts is how many times the request was sent to this URL.
	Attempts int
	// Where says where baseURL came from, and KeyFrom where the API key
	// did (Options.BaseURLSource, Options.APIKeySource), for what to check.
	Where, KeyFrom string
	// Page is set when the error body was a web page (Message is then its
	// title, if any).
	Page bool
}

// Error returns a one-line description with the provider's message.
func (e *APIError) Error() string {
	var b strings.Builder
	switch {
	case e.StatusCode == 401 || e.StatusCode == 403:
		fmt.Fprintf(&b, "%v (HTTP %d", ErrUnauthorized, e.StatusCode)
	case e.StatusCode == 429:
		fmt.Fprintf(&b, "%v (HTTP 429", ErrRateLimited)
	case e.StatusCode >= 500:
		fmt.Fprintf(&b, "%v (HTTP %d", ErrServer, e.StatusCode)
	case e.StatusCode == 0:
		b.WriteString("the provider reported an error in the stream (")
	default:
		fmt.Fprintf(&b, "%v (HTTP %d", ErrBadRequest, e.StatusCode)
	}
	if e.URL != "" {
		fmt.Fprintf(&b, " from %s", e.URL)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	b.WriteString(")")
	if e.Page {
		b.WriteString(": a web page, not the API's error object")
		if e.Message != "" {
			fmt.Fprintf(&b, " (%q)", e.Message)
		}
	} else if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Type != "" || e.Code != "" {
		fmt.Fprintf(&b, " [%s", e.Type)
		if e.Code != "" {
			fmt.Fprintf(&b, " %s", e.Code)
		}
		b.WriteString("]")
	}
	if e.StatusCode == 429 && e.RetryAfter > 0 {
		fmt.Fprintf(&b, "; retry after %v", e.RetryAfter)
	}
	b.WriteString(e.advice())
	return b.String()
}

// advice is what to check for the status, after "; ".
func (e *APIError) advice() string {
	switch {
	case e.StatusCode == 401 || e.StatusCode == 403:
		from := ""
		if e.KeyFrom != "" && e.KeyFrom != "default" {
			from = " (set by " + e.KeyFrom + ")"
		}
		return "; check the key" + from + ", or set a valid one: kimi.apiKey in the editor's settings, KIMI_API_KEY, or apiKey in the user config file"
	case e.StatusCode == 404:
		return "; there is no API at this path, or no such model: " + checkBaseURL(e.Where) +
			" (a bare host gets /v1/chat/completions, a path gets /chat/completions) and the model name"
	case e.StatusCode == 405 || e.Page && e.StatusCode < 500:
		return "; this is not the chat-completions API: " + checkBaseURL(e.Where)
	}
	return ""
}

// Unwrap maps the status to a sentinel error.
func (e *APIError) Unwrap() error {
	switch {
	case e.StatusCode == 401 || e.StatusCode == 403:
		return ErrUnauthorized
	case e.StatusCode == 429:
		return ErrRateLimited
	case e.StatusCode >= 500:
		return ErrServer
	case e.StatusCode == 0:
		return nil
	default:
		return ErrBadRequest
	}
}

// noKeyError is a 401 from an endpoint the client sent no key to: one
// reason for the user (no key is configured), the APIError kept for
// errors.Is(err, ErrUnauthorized).
type noKeyError struct{ api *APIError }

func (e *noKeyError) Error() string {
	return fmt.Sprintf("no API key is configured, and %s requires one (HTTP %d): set KIMI_API_KEY", cmp.Or(e.api.URL, "the provider"), e.api.StatusCode)
}

func (e *noKeyError) Unwrap() error { return e.api }
