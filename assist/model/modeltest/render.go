package modeltest

import (
	"bytes"
	"encoding/json"
)

// Render returns the prompt text the stand-in feeds its prefix-cache
// simulation: what a provider's chat template would make of the request,
// in order — each tool definition (its JSON compacted, key order as sent),
// then each message with its role, reasoning, text, tool calls and the call
// it answers. It is deterministic: the same request bytes render the same,
// and a request that extends an earlier one (a later turn, an appended
// message) renders as an extension of the earlier rendering, so the byte
// where two renderings diverge is where the requests' prompts diverge.
func Render(r *ChatRequest) []byte {
	var b bytes.Buffer
	for _, t := range r.Tools {
		b.WriteString("<|tool|>")
		if err := json.Compact(&b, t); err != nil {
			b.Write(t)
		}
		b.WriteString("<|end|>\n")
	}
	for i := range r.Messages {
		renderMessage(&b, &r.Messages[i])
	}
	return b.Bytes()
}

func renderMessage(b *bytes.Buffer, m *Message) {
	b.WriteString("<|")
	b.WriteString(m.Role)
	b.WriteString("|>")
	if m.ToolCallID != nil {
		b.WriteString("[")
		b.WriteString(*m.ToolCallID)
		b.WriteString("]")
	}
	b.WriteString("\n")
	if m.ReasoningContent != nil && *m.ReasoningContent != "" {
		b.WriteString("<think>")
		b.WriteString(*m.ReasoningContent)
		b.WriteString("</think>\n")
	}
	b.WriteString(m.Text())
	for _, c := range m.ToolCalls {
		b.WriteString("<tool_call>")
		b.WriteString(c.ID)
		b.WriteString(" ")
		b.WriteString(c.Type)
		b.WriteString(" ")
		b.WriteString(c.Function.Name)
		b.WriteString(" ")
		b.WriteString(c.Function.Arguments)
		b.WriteString("</tool_call>")
	}
	b.WriteString("<|end|>\n")
}
