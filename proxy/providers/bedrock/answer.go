package bedrock

import (
	"net/http"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
)

// The Converse answer → OpenAI chat.completion translation, and the
// pieces the stream translation shares with it: usage and finish reasons.

// finishReason maps a Converse stopReason to an OpenAI
// finish_reason. Unknown reasons read as "stop".
func finishReason(stop string) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "guardrail_intervened", "content_filtered":
		return "content_filter"
	}
	return "stop" // end_turn, stop_sequence
}

// stopSequence is the stop sequence that ended Claude's answer, as
// additionalModelResponseFields holds it when the request asked for it
// (claudeFields): stop_sequence in an answer, delta.stop_sequence in a
// stream's messageStop. nil when stopReason is not stop_sequence.
func stopSequence(v *fastjson.Value) []byte {
	if string(v.GetStringBytes("stopReason")) != "stop_sequence" {
		return nil
	}
	f := v.Get("additionalModelResponseFields")
	if s := f.GetStringBytes("stop_sequence"); s != nil {
		return s
	}
	return f.GetStringBytes("delta", "stop_sequence")
}

// Usage reads a Converse usage object. Bedrock counts inputTokens
// apart from the tokens read from and written to the prompt cache; the
// OpenAI prompt_tokens includes them (with cached_tokens as the read
// part), so they are added, and the total is recomputed to match.
// Negative or non-integer counts read as zero.
func usage(v *fastjson.Value) llm.Usage {
	if v == nil || v.Type() != fastjson.TypeObject {
		return llm.Usage{}
	}
	read, write := providers.Count(v, "cacheReadInputTokens"), providers.Count(v, "cacheWriteInputTokens")
	u := llm.Usage{
		Present:             true,
		PromptTokens:        providers.Count(v, "inputTokens") + read + write,
		CompletionTokens:    providers.Count(v, "outputTokens"),
		CachedTokens:        read,
		CacheCreationTokens: write,
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// chatAnswer translates a Converse answer into the neutral answer, and
// that into an OpenAI chat completion. An answer without output.message is an *Error 502.
func chatAnswer(p *fastjson.Parser, body []byte, m meta) ([]byte, llm.Usage, error) {
	v, err := p.ParseBytes(body)
	if err != nil || v.Type() != fastjson.TypeObject {
		return nil, llm.Usage{}, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
	}
	converseMsg := v.Get("output", "message")
	if converseMsg == nil || converseMsg.Type() != fastjson.TypeObject {
		return nil, llm.Usage{}, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
	}
	msg := llm.Message{Role: llm.RoleAssistant}
	var thinking []llm.Part
	size := 256
	for _, block := range converseMsg.GetArray("content") {
		if rc := block.Get("reasoningContent"); rc != nil && m.thinkingBlocks {
			// Claude's thinking, for a door that gives it back signed.
			if rt := rc.Get("reasoningText"); rt != nil {
				thinking = append(thinking, llm.Part{Kind: llm.PartThinking, Text: string(rt.GetStringBytes("text")),
					Signature: string(rt.GetStringBytes("signature"))})
			} else if rd := rc.GetStringBytes("redactedContent"); rd != nil {
				thinking = append(thinking, llm.Part{Kind: llm.PartRedactedThinking, Data: string(rd)})
			}
			continue
		}
		if t := block.Get("text"); t != nil && t.Type() == fastjson.TypeString {
			s, _ := t.StringBytes()
			msg.Parts = append(msg.Parts, llm.Part{Kind: llm.PartText, Text: string(s)})
			size += len(s)
		} else if tu := block.Get("toolUse"); tu != nil && tu.Type() == fastjson.TypeObject {
			args := []byte("{}")
			if in := tu.Get("input"); in != nil {
				args = in.MarshalTo(nil)
			}
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: string(tu.GetStringBytes("toolUseId")), Type: "function",
				Name: string(tu.GetStringBytes("name")), Arguments: string(args)})
			size += 128 + len(args)
		}
		// Reasoning (but for thinkingBlocks), citations and other blocks
		// have no place in the OpenAI message.
	}
	if len(msg.Parts) == 0 && len(msg.ToolCalls) == 0 {
		msg.Parts = []llm.Part{{Kind: llm.PartText}} // an empty answer: "", not null
	}
	if len(thinking) > 0 {
		msg.Parts = append(thinking, msg.Parts...)
	}
	out := llm.Response{ID: m.id, Created: m.created, Model: m.model, Usage: usage(v.Get("usage")),
		Choices: []llm.Choice{{Message: msg, Finish: llm.FinishReason(finishReason(string(v.GetStringBytes("stopReason")))),
			StopSequence: string(stopSequence(v))}}}
	return providers.AppendOpenAIResponse(make([]byte, 0, size), &out, providers.OpenAIOptions{ThinkingBlocks: m.thinkingBlocks}), out.Usage, nil
}
