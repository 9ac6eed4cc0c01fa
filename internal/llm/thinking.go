package llm

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/sluicehq/sluice/internal/jsonstr"
)

// HasThinking reports whether r holds what the OpenAI chat wire cannot
// carry to a provider that reads it back: thinking parts of assistant
// messages (with their signatures) or a reasoning token budget.
func HasThinking(r *Request) bool {
	if r.Reasoning != nil && r.Reasoning.BudgetTokens != nil {
		return true
	}
	for i := range r.Messages {
		if r.Messages[i].Role != RoleAssistant {
			continue
		}
		for _, p := range r.Messages[i].Parts {
			if p.Kind == PartThinking || p.Kind == PartRedactedThinking {
				return true
			}
		}
	}
	return false
}

// CarryThinking copies into to what EncodeOpenAIChat leaves out of from,
// when to is from's OpenAI chat encoding decoded again
// (DecodeOpenAIChat): the thinking parts of each assistant message, in
// front of the rest of the matching assistant message of to, and the
// reasoning budget. EncodeOpenAIChat writes exactly one assistant
// message per assistant message, in order, so the k-th of each match.
// A translating codec of a provider that reads thinking back (Anthropic,
// Claude on Bedrock) then sends them as the client wrote them.
func CarryThinking(to, from *Request) {
	if rs := from.Reasoning; rs != nil && rs.BudgetTokens != nil {
		to.Reasoning = rs
	}
	j := 0
	for i := range from.Messages {
		m := &from.Messages[i]
		if m.Role != RoleAssistant {
			continue
		}
		for j < len(to.Messages) && to.Messages[j].Role != RoleAssistant {
			j++
		}
		if j == len(to.Messages) {
			return
		}
		var thinking []Part
		for _, p := range m.Parts {
			if p.Kind == PartThinking || p.Kind == PartRedactedThinking {
				thinking = append(thinking, p)
			}
		}
		if len(thinking) > 0 {
			to.Messages[j].Parts = append(thinking, to.Messages[j].Parts...)
		}
		j++
	}
}

// thinkingContentPrefix starts the encrypted_content of the reasoning
// items the compat Responses door writes (AppendThinkingContent), so that
// its decoder tells them from another gateway's or OpenAI's own.
const thinkingContentPrefix = "sluice.thinking.v1."

// AppendThinkingContent appends to dst the opaque string that carries a
// signed thinking part (PartThinking with its Signature, or
// PartRedactedThinking with its Data) in a Responses reasoning item's
// encrypted_content: thinkingContentPrefix and the base64 of the
// Anthropic block ({"type":"thinking","thinking","signature"} or
// {"type":"redacted_thinking","data"}). It is not encrypted by the
// gateway — the provider's signature is what guards the thinking — only
// opaque, so that a client sends it back unchanged and
// DecodeOpenAIResponses restores the block.
func AppendThinkingContent(dst []byte, p *Part) []byte {
	var block []byte
	if p.Kind == PartRedactedThinking {
		block = append(block, `{"type":"redacted_thinking","data":`...)
		block = jsonstr.Append(block, p.Data)
	} else {
		block = append(block, `{"type":"thinking","thinking":`...)
		block = jsonstr.Append(block, p.Text)
		block = append(block, `,"signature":`...)
		block = jsonstr.Append(block, p.Signature)
	}
	block = append(block, '}')
	dst = append(dst, thinkingContentPrefix...)
	return base64.StdEncoding.AppendEncode(dst, block)
}

// thinkingContent is the part an encrypted_content of
// AppendThinkingContent carries; false when s is not one (another
// system's opaque reasoning, which only its own provider can read).
func thinkingContent(s string) (Part, bool) {
	rest, ok := strings.CutPrefix(s, thinkingContentPrefix)
	if !ok {
		return Part{}, false
	}
	raw, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return Part{}, false
	}
	var b struct {
		Type      string `json:"type"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
		Data      string `json:"data"`
	}
	if json.Unmarshal(raw, &b) != nil {
		return Part{}, false
	}
	switch {
	case b.Type == "thinking" && b.Signature != "":
		return Part{Kind: PartThinking, WireType: "reasoning", Text: b.Thinking, Signature: b.Signature}, true
	case b.Type == "redacted_thinking" && b.Data != "":
		return Part{Kind: PartRedactedThinking, WireType: "reasoning", Data: b.Data}, true
	}
	return Part{}, false
}

// HasToolExtras reports whether r holds what the OpenAI chat wire cannot
// carry of its tools and tool results: a tool result marked as an error,
// or a tool with a cache_control breakpoint.
func HasToolExtras(r *Request) bool {
	for i := range r.Tools {
		if r.Tools[i].CacheControl != nil {
			return true
		}
	}
	for i := range r.Messages {
		for _, p := range r.Messages[i].Parts {
			if p.Kind == PartToolResult && p.IsError {
				return true
			}
		}
	}
	return false
}

// CarryToolExtras copies into to what EncodeOpenAIChat leaves out of
// from's tools and tool results, when to is from's OpenAI chat encoding
// decoded again (DecodeOpenAIChat): each tool's cache_control (the
// encoding keeps the tools in order), and the error flag of each tool
// result, on the tool message that answers the same call (the encoding
// writes one tool message per result).
func CarryToolExtras(to, from *Request) {
	for i := range from.Tools {
		if i < len(to.Tools) && from.Tools[i].CacheControl != nil {
			to.Tools[i].CacheControl = from.Tools[i].CacheControl
		}
	}
	failed := map[string]bool{}
	for i := range from.Messages {
		for _, p := range from.Messages[i].Parts {
			if p.Kind == PartToolResult && p.IsError && p.ToolCall != nil {
				failed[p.ToolCall.ID] = true
			}
		}
	}
	if len(failed) == 0 {
		return
	}
	for i := range to.Messages {
		if m := &to.Messages[i]; m.Role == RoleTool && failed[m.ToolCallID] {
			m.IsError = true
		}
	}
}
