// Package modeltest provides a stand-in for the Kimi K3.1 chat-completions
// provider: a real HTTP server on loopback (like net/http/httptest) that
// speaks the API of the seed OpenAPI text, for tests and benchmarks of every
// package that talks to a model, and for the editor end-to-end tests (through
// the kimi-standin command).
//
//	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
//		{Match: "explain", Reasoning: "…", Content: "This function…", Chunks: 40, IntervalMS: 20},
//	}}})
//	defer srv.Close()
//	client := model.New(model.Options{BaseURL: srv.URL, APIKey: srv.Key})
//
// What it does, per request to POST /v1/chat/completions:
//
//   - Checks "Authorization: Bearer <Key>" (401 otherwise).
//   - Validates the body as the seed's schema does (400 with an
//     {"error": {...}} body otherwise): JSON object without keys the seed
//     does not define, at any level — top level, messages (no "name"),
//     tool calls, content parts, tools[], tool_choice, response_format,
//     prompt_cache_options — unless Config.AllowUnknownFields (stricter
//     than the seed, see parseRequest for why), model in the enum
//     (kimi-k3.1-pro, kimi-k3.1-pro-highspeed, kimi-k3; kimi-k3 only with
//     reasoning_effort max), at least one message, roles system, user,
//     assistant or tool, content a string, an array of parts or null,
//     max_completion_tokens and max_tokens in 1..1048576 and never both,
//     reasoning_effort in its enum, at most 128 tools of type function (with
//     name and object parameters) or web_search, tool_choice auto, none,
//     required or a named function that exists, prompt_cache_options mode
//     implicit and ttl 5m or 1h, response_format text, json_object or
//     json_schema (with name and schema), prompt tokens plus
//     max_completion_tokens within the 1,048,576-token context window. In
//     the conversation, an assistant
//     message with tool_calls must carry its reasoning_content, each tool
//     message must answer a pending call of the assistant message before it
//     (by tool_call_id, once), every call must be answered before the
//     next non-tool message, and calls sent back carry JSON arguments.
//   - Picks the reply from the script (first matching rule, see below).
//   - Answers JSON ("stream" false) or SSE ("stream" true: a role chunk,
//     reasoning_content pieces, content pieces, tool calls in pieces by index,
//     a finish chunk, usage, "data: [DONE]"), paced as the rule says. With
//     Config.UsageWhenAsked a stream carries usage only when the request
//     asks with stream_options {"include_usage": true}.
//   - Simulates the implicit prefix cache: the request is rendered (tools,
//     then messages, see Render), and a cachetest.Sim per model reports
//     usage.prompt_tokens, prompt_tokens_details.cached_tokens and
//     cache_write_tokens, with the request's TTL (5m or 1h).
//   - Records the request (Server.Requests, Server.WaitRequests): body,
//     parsed messages, status, fault, usage, and whether the client hung up
//     before the reply ended.
//
// # Script format
//
// A Script is JSON (the kimi-standin -script file) or Go values:
//
//	{
//	  "rules": [
//	    {"match": "Explain", "reasoning": "Reading the code.", "content": "It adds…",
//	     "chunks": 60, "interval_ms": 25},
//	    {"match": "Fix", "content": "```diff\n--- a/x.go\n+++ b/x.go\n@@ …\n```"},
//	    {"match": "slow", "content": "…", "chunks": 1000, "interval_ms": 200},
//	    {"fault": "429", "retry_after": "1", "times": 2},
//	    {"last_role": "tool", "content": "Done."},
//	    {"match": "weather", "tool_calls": [{"name": "get_weather", "arguments": "{\"city\":\"Beijing\"}"}]}
//	  ],
//	  "default": {"content": "OK"}
//	}
//
// Matching (every field given must hold; the first rule that matches and has
// uses left wins; otherwise "default"; otherwise the reply "OK"):
//
//   - match: a substring of the last user message's text.
//   - match_prompt: a substring of the whole rendered prompt (tools, system
//     and every message).
//   - last_role: the role of the last message ("tool" selects the turn after
//     tool results).
//   - model: the requested model.
//   - times: how many requests the rule answers (0: any number).
//
// Reply:
//
//   - reasoning, content: the texts. tool_calls: a list of {id, type, name,
//     arguments} (id defaults to call_<n>, type to "function").
//   - finish_reason: defaults to "tool_calls" when there are tool calls,
//     else "stop"; "length" with no content scripts a reply whose thinking
//     used the whole budget, "length" with content one cut off mid-answer;
//     any other lower-case word (content_filter) a reason outside the
//     seed's enum.
//   - chunks: how many pieces the reasoning, the content and each call's
//     arguments are each split into (default 4).
//   - interval_ms: pause before each chunk; delay_ms: pause before the reply
//     starts (before the status line).
//   - usage: where usage goes in a stream: "final" (default, in the finish
//     chunk), "separate" (a last chunk with empty choices), "none".
//   - crlf: end SSE lines with CRLF; keepalive: send a ": keep-alive"
//     comment line before each chunk.
//   - null_content: "content": null in every delta without answer text;
//     content_in_finish: the last content piece in the finish chunk;
//     interleave: all tool calls announced in one chunk, then one piece of
//     each call's arguments per chunk; a tool call's omit_type: no "type"
//     in its pieces (a $web_search call so sent is still the builtin).
//
// Faults ("fault"):
//
//   - "400", "401", "429", "500", "502", "503": that status with an error
//     body (message from "message"), Retry-After from "retry_after".
//   - "hangup": close the connection without answering.
//   - "cut": after fault_after chunks, send half a frame and end the body.
//   - "reset": after fault_after chunks, send half a frame and abort the
//     connection.
//   - "stall": after fault_after chunks, send nothing more and wait until the
//     client hangs up (recorded as Request.HungUp).
//   - "no_done": after fault_after chunks, end the body cleanly on a frame
//     boundary, without a finish reason or [DONE].
//
// fault_after counts every data event (the role chunk is the first); a
// count beyond the reply's events puts the fault where "data: [DONE]" would
// be. fault_after 0 with "stall" sends the status line and headers, then
// nothing.
package modeltest
