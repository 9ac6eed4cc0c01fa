package anthropic

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/proxy/providers"
)

// Answer translation.

// answerJSON is the part of a Messages API answer the adapter
// reads.
type answerJSON struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Model   string `json:"model"`
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
		// Thinking, Signature and Data are a thinking or
		// redacted_thinking block's.
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
		Data      string `json:"data"`
	} `json:"content"`
	StopReason   string `json:"stop_reason"`
	StopSequence string `json:"stop_sequence"`
	Usage        *usage `json:"usage"`
}

// Usage is Anthropic's usage object. Counts that are not
// non-negative integers read as zero, so that a strange count never costs
// the answer.
type usage struct {
	InputTokens              count `json:"input_tokens"`
	OutputTokens             count `json:"output_tokens"`
	CacheCreationInputTokens count `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     count `json:"cache_read_input_tokens"`
	// CacheCreation splits the writes by lifetime (the 1-hour ones are
	// priced apart).
	CacheCreation *struct {
		Ephemeral1h count `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

// write1h is the part of the cache writes written for one hour.
func (u *usage) write1h() int64 {
	if u.CacheCreation == nil {
		return 0
	}
	return min(int64(u.CacheCreation.Ephemeral1h), int64(u.CacheCreationInputTokens))
}

type count int64

// UnmarshalJSON reads a non-negative integer; anything else is zero.
func (c *count) UnmarshalJSON(b []byte) error {
	*c = 0
	if n, err := strconv.ParseInt(string(b), 10, 64); err == nil && n > 0 {
		*c = count(n)
	}
	return nil
}

// usageOf computes the usage: OpenAI's prompt_tokens counts
// every input token, Anthropic's input_tokens only those neither read
// from nor written to the cache.
func usageOf(input, output, cacheRead, cacheCreation int64) llm.Usage {
	prompt := input + cacheRead + cacheCreation
	return llm.Usage{PromptTokens: prompt, CompletionTokens: output, TotalTokens: prompt + output,
		CachedTokens: cacheRead, CacheCreationTokens: cacheCreation, Present: true}
}

// finish maps a stop_reason to OpenAI's finish_reason. In JSON
// mode the forced tool's use is the answer, so it is a plain stop.
func finish(reason []byte, jsonMode bool) string {
	switch string(reason) {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		if jsonMode {
			return "stop"
		}
		return "tool_calls"
	case "refusal":
		return "content_filter"
	}
	return "stop" // end_turn, stop_sequence, pause_turn
}

// stopSequence is the stop sequence that ended an answer: the
// answer's stop_sequence when its stop_reason is stop_sequence, else "".
func stopSequence[S ~string | ~[]byte](reason, seq S) S {
	if string(reason) != "stop_sequence" {
		return seq[:0]
	}
	return seq
}

// answerContext is what translating an answer needs besides its body.
type answerContext struct {
	jsonTool string
	created  int64
	model    string // the requested model, for an answer that names none
	key      secret.Value
	// thinkingBlocks keeps the thinking blocks as thinking_blocks
	// (providers.Request.ThinkingBlocks).
	thinkingBlocks bool
}

// answer translates a Messages API answer into an OpenAI chat
// completion and returns it with its usage and model. An answer that is
// not a message (an error object sent with 200, or not JSON) is an *Error
// with status 502.
func answer(body []byte, ac answerContext) ([]byte, llm.Usage, string, error) {
	var a answerJSON
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, llm.Usage{}, "", &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
	}
	if a.Type == "error" {
		return nil, llm.Usage{}, "", providers.ReportedError(http.StatusBadGateway, providers.ErrorMessage(body), ac.key)
	}
	msg := llm.Message{Role: llm.RoleAssistant}
	var thinking []llm.Part
	for _, b := range a.Content {
		switch b.Type {
		case "thinking":
			thinking = append(thinking, llm.Part{Kind: llm.PartThinking, Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			thinking = append(thinking, llm.Part{Kind: llm.PartRedactedThinking, Data: b.Data})
		case "text":
			if b.Text != "" {
				msg.Parts = append(msg.Parts, llm.Part{Kind: llm.PartText, Text: b.Text})
			}
		case "tool_use":
			args := compact(b.Input)
			if ac.jsonTool != "" && b.Name == ac.jsonTool {
				msg.Parts = append(msg.Parts, llm.Part{Kind: llm.PartText, Text: args})
				continue
			}
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: b.ID, Type: "function", Name: b.Name, Arguments: args})
		}
	}
	if len(msg.Parts) == 0 && len(msg.ToolCalls) == 0 {
		msg.Parts = []llm.Part{{Kind: llm.PartText}} // an empty answer: "", not null
	}
	if ac.thinkingBlocks {
		msg.Parts = append(thinking, msg.Parts...)
	}
	model := a.Model
	if model == "" {
		model = ac.model
	}
	out := llm.Response{ID: a.ID, Created: ac.created, Model: model,
		Choices: []llm.Choice{{Message: msg, Finish: llm.FinishReason(finish([]byte(a.StopReason), ac.jsonTool != "")),
			StopSequence: stopSequence(a.StopReason, a.StopSequence)}}}
	var usage llm.Usage
	if u := a.Usage; u != nil {
		usage = usageOf(int64(u.InputTokens), int64(u.OutputTokens), int64(u.CacheReadInputTokens), int64(u.CacheCreationInputTokens))
		usage.CacheWrite1hTokens = u.write1h()
		out.Usage = usage
	}
	b := providers.AppendOpenAIResponse(nil, &out, providers.OpenAIOptions{ThinkingBlocks: ac.thinkingBlocks})
	return b, usage, a.Model, nil
}

// compact is raw without insignificant white space, "{}" when empty.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(bytes.TrimSpace(raw)) == 0 || json.Compact(&b, raw) != nil {
		return "{}"
	}
	return b.String()
}
