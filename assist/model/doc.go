// Package model is the client for the Kimi K3.1 chat-completions API
// (POST {baseURL}/v1/chat/completions, OpenAI compatible) and for any other
// OpenAI-compatible endpoint (Ollama, llama.cpp server, vLLM, OpenAI) chosen
// by base URL and model name.
//
// A Request is serialised deterministically: struct field order, no maps, and
// tool schemas passed through as the caller's bytes, because the provider's
// implicit prefix cache matches prompts byte by byte. Optional fields are left
// out when not set, so servers that reject unknown fields accept the request.
//
// Client.Stream sends a request with "stream": true and returns a Stream whose
// Next method reads the SSE reply chunk by chunk from the network and returns
// typed events (reasoning delta, content delta, tool-call pieces, complete tool
// calls, usage, done) as each chunk arrives. Nothing is read ahead beyond the
// transport's buffer: a slow reader slows the connection down (backpressure).
// Client.Complete sends a non-streaming request and returns the whole reply;
// both paths accept either a JSON or an SSE body, whatever was asked for.
// An Accumulator folds events into the final assistant Message, finish reason
// and usage.
//
// Failures are typed: *APIError (with the sentinels ErrUnauthorized,
// ErrBadRequest, ErrRateLimited, ErrServer), ErrTruncated for a stream that
// stops early or tears a frame, ErrNoAnswer when thinking used the whole
// completion budget, ErrTimeout for connect, first-byte and between-chunk
// silence limits and for a reply that has not started within WaitTimeout
// (every attempt and the fallback included). There is no total timeout: a
// long thinking phase that keeps streaming is never cut. A stream that ends
// normally may still be incomplete: CheckFinish tells a cut-off answer
// (ErrCutOff) and a finish_reason outside the seed's enum (ErrFinishReason)
// from a complete one. A Trace in the context (WithTrace) hears each retry,
// so a caller can tell a person why the answer is late. Rate limits (429)
// are retried with jittered backoff that honours Retry-After within bounded
// attempts and total wait; 5xx and connection errors are retried a bounded
// number of times, then the fallback base URL is tried. A stream is never
// retried once the provider answered 200. Error texts never contain the API
// key.
//
// Error texts are written for the person who reads them in the editor: what
// happened, which endpoint, and what to check, with where baseURL and the
// key came from (Options.BaseURLSource, APIKeySource). A request that got no
// HTTP reply is a *ConnError (refused, DNS, TLS, closed, other: never Go's
// `Post "…": dial tcp …` alone); a 2xx reply that is a web page or no event
// stream wraps ErrNotAPI and is not retried (the same URL answers the same
// page); DNS and TLS failures skip the remaining attempts on that URL. Brief
// gives the few words a "trying again" status line shows.
//
// Multi-turn conversations append the assistant message back whole, with its
// reasoning_content and tool_calls (Request.AppendAssistant), then one tool
// message per call (Request.AppendToolResult), as the provider requires.
package model
