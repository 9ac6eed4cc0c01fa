package llm

// The neutral answer model: what a translating codec decodes an upstream
// answer into, and what a front door encodes into its own wire. The
// translating codecs decode complete answers into a Response, which one
// OpenAI encoder writes (proxy/providers.EncodeOpenAIResponse); an
// Anthropic Messages or an OpenAI Responses door adds its own encoder of
// the same Response.

// FinishReason is why a choice ended. The values are OpenAI's names.
type FinishReason string

// The finish reasons.
const (
	FinishStop          FinishReason = "stop"
	FinishLength        FinishReason = "length"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishContentFilter FinishReason = "content_filter"
)

// Response is a complete chat answer.
type Response struct {
	// ID is the answer's id as the client sees it.
	ID string
	// Model is the model that answered.
	Model string
	// Created is the answer's time, in Unix seconds.
	Created int64
	// Choices are the alternative answers; most providers give one.
	Choices []Choice
	// Usage is the answer's token counts.
	Usage Usage
}

// Choice is one alternative answer.
type Choice struct {
	Index int
	// Message is the assistant's message: its parts (text, thinking,
	// refusal) and tool calls. A message without text parts has no
	// content (OpenAI null), one with an empty text part has empty
	// content ("").
	Message Message
	Finish  FinishReason
}

// EventKind is what a stream event carries.
type EventKind uint8

// The stream event kinds.
const (
	// EventStart opens the answer: ID, Model and Created are set.
	EventStart EventKind = iota
	// EventDelta adds to choice Index: Part (text, thinking, refusal), or
	// a piece of tool call ToolCall (ToolIndex; its ID and Name come with
	// the first piece, then Arguments in pieces).
	EventDelta
	// EventFinish ends choice Index with Finish.
	EventFinish
	// EventUsage carries the usage, once, at the end.
	EventUsage
)

// Event is one event of a streamed answer, as a codec decodes the
// provider's own events.
type Event struct {
	Kind EventKind
	// ID, Model and Created are EventStart's.
	ID      string
	Model   string
	Created int64
	// Index is the choice the event belongs to.
	Index int
	// Part is an EventDelta's content.
	Part *Part
	// ToolIndex and ToolCall are an EventDelta's piece of a tool call.
	ToolIndex int
	ToolCall  *ToolCall
	// Finish is EventFinish's reason.
	Finish FinishReason
	// Usage is EventUsage's.
	Usage Usage
}
