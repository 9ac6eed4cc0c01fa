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
	// StopSequence is the stop sequence that ended the answer, when the
	// provider says which (Anthropic stop_sequence, Bedrock's Claude
	// additionalModelResponseFields); Finish is then FinishStop.
	StopSequence string
}

// EventKind is what a stream event carries.
type EventKind uint8

// The stream event kinds. A codec's stream translator gives the events
// of one upstream event together, as one batch; an encoder writes a batch
// as one unit of its wire (one OpenAI chunk, whose choices are the runs
// of the batch's choice events with the same Index).
const (
	// EventStart names the answer: ID, Model and Created. It opens the
	// stream, and comes again when the provider renames the model; the
	// OpenAI encoder writes nothing for it, only the head of the chunks
	// that follow.
	EventStart EventKind = iota + 1
	// EventRole begins choice Index, by Role.
	EventRole
	// EventText adds Text to the content of choice Index; an empty Text
	// is content still (OpenAI "content":"").
	EventText
	// EventToolCall adds a piece of a tool call to choice Index (Tool).
	EventToolCall
	// EventFinish ends choice Index with Finish; its Text is the stop
	// sequence that ended it, when the provider says which
	// (Choice.StopSequence).
	EventFinish
	// EventUsage carries the usage, once, at the end, alone in its batch.
	EventUsage
	// EventThinking adds Text to the thinking of choice Index. Codecs
	// give the thinking events only when asked
	// (providers.Request.ThinkingBlocks).
	EventThinking
	// EventThinkingSignature ends the thinking block of choice Index with
	// its signature, Text.
	EventThinkingSignature
	// EventRedactedThinking is a whole redacted thinking block of choice
	// Index, whose data is Text.
	EventRedactedThinking
)

// Event is one event of a streamed answer, as a codec decodes its
// provider's events and a door's encoder writes them. Events are values,
// and their byte slices alias the codec's buffers: they are valid until
// the codec decodes its next event, so an encoder copies what it keeps.
// Nothing is converted to a string on the way, so that relaying a chunk
// does not allocate.
type Event struct {
	Kind EventKind
	// Index is the choice of a role, text, tool call or finish event.
	Index int
	// ID, Model and Created are EventStart's.
	ID, Model []byte
	Created   int64
	// Role is EventRole's.
	Role Role
	// Text is EventText's, EventThinking's, EventThinkingSignature's
	// signature, EventRedactedThinking's data and EventFinish's stop
	// sequence.
	Text []byte
	// Tool is EventToolCall's.
	Tool ToolCallDelta
	// Finish is EventFinish's reason.
	Finish FinishReason
	// Usage is EventUsage's.
	Usage Usage
}

// ToolCallDelta is a piece of a streamed tool call: the first piece of a
// call (First) names it, with ID, Name and the provider's Signature;
// Arguments come in pieces, the first piece's included.
type ToolCallDelta struct {
	// Index is the call's position among the choice's tool calls.
	Index int
	First bool
	ID    []byte
	Name  []byte
	// Arguments is a piece of the JSON text of the arguments.
	Arguments []byte
	// Signature is the call's signature (ToolCall.Signature).
	Signature []byte
}
