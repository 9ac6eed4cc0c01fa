package llm

import "encoding/json"

// The neutral request model: a chat request as every front door decodes
// it and every translating codec encodes it. It sits between the two so
// that a new door (Anthropic Messages, OpenAI Responses) is a decoder and
// a new provider is an encoder, never a copy of the pipeline.
//
// The same-wire fast path bypasses it: a Request carries its client's
// body as Raw, in the format Wire names, and a codec that speaks that
// wire sends Raw (with its few rewrites) without decoding anything. Only
// a translating codec reads the fields.

// Wire names the wire format of a request body.
type Wire uint8

// The wire formats. The zero value is the OpenAI chat completions format,
// the gateway's front door today.
const (
	WireOpenAIChat Wire = iota
	WireAnthropicMessages
	WireOpenAIResponses
)

// String returns the wire's name.
func (w Wire) String() string {
	switch w {
	case WireOpenAIChat:
		return "openai-chat"
	case WireAnthropicMessages:
		return "anthropic-messages"
	case WireOpenAIResponses:
		return "openai-responses"
	}
	return "unknown"
}

// Role is the author of a message. The values are OpenAI's role names,
// which every wire can be mapped to.
type Role string

// The roles.
const (
	RoleSystem    Role = "system"
	RoleDeveloper Role = "developer"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool is a message that answers a tool call (ToolCallID).
	RoleTool Role = "tool"
)

// Request is a chat request.
type Request struct {
	// Wire is the format of Raw.
	Wire Wire
	// Raw is the client's body as it came, validated by the gateway and
	// never modified: what a codec of the same wire sends on.
	Raw []byte

	// Model is the model the client asked for.
	Model string
	// System is the instructions a wire carries outside its messages
	// (Anthropic's top-level system). The OpenAI chat decoder leaves it
	// empty: system and developer messages stay in Messages, in their
	// place, since a codec may treat one in the middle of the
	// conversation differently from one at the start.
	System []Part
	// Messages is the conversation, in order.
	Messages []Message
	// Tools are the functions the model may call.
	Tools []Tool
	// ToolChoice says whether and which tool the model must call; nil is
	// the provider's default.
	ToolChoice *ToolChoice
	// ParallelToolCalls, when set, allows or forbids several tool calls
	// in one answer.
	ParallelToolCalls *bool
	// ResponseFormat asks for JSON (an object, or one that fits a schema);
	// nil is text.
	ResponseFormat *ResponseFormat
	// MaxOutputTokens caps the answer's tokens (OpenAI
	// max_completion_tokens, else max_tokens); nil is none.
	MaxOutputTokens *int64
	// Temperature and TopP are the JSON numbers as the client wrote them,
	// so that a translation does not change their text; nil is unset.
	Temperature json.RawMessage
	TopP        json.RawMessage
	// Stop holds the stop sequences.
	Stop []string
	// Stream asks for the answer as a stream of events.
	Stream bool
	// Reasoning asks a reasoning model for an effort or a token budget;
	// nil is the provider's default.
	Reasoning *Reasoning
	// User identifies the end user to the provider (OpenAI user,
	// Anthropic metadata.user_id).
	User string
	// Metadata are the client's key-value tags.
	Metadata map[string]string
	// WantLogprobs asks for the answer tokens' log probabilities, with
	// LogprobsTop alternatives each (OpenAI logprobs, top_logprobs).
	WantLogprobs bool
	LogprobsTop  *int64
	// ServiceTier is the OpenAI processing tier asked for ("auto",
	// "default", "flex", "priority"); "" is the provider's default.
	ServiceTier string
}

// Message is one message of the conversation.
type Message struct {
	Role Role
	// Name is the participant's name (OpenAI "name"), when given.
	Name string
	// Parts is the content. A plain string content is one text part;
	// null or absent content is none.
	Parts []Part
	// ToolCalls are the calls of an assistant message.
	ToolCalls []ToolCall
	// ToolCallID is the call a RoleTool message answers.
	ToolCallID string
	// IsError says a RoleTool message's result is an error (Anthropic
	// tool_result.is_error). The OpenAI chat wire has no place for it:
	// a door carries it to the codecs beside the chat body
	// (CarryToolExtras).
	IsError bool
}

// PartKind is what a content part holds.
type PartKind uint8

// The part kinds.
const (
	// PartOther is a part the neutral model does not know (OpenAI
	// input_video, …): WireType names it, and a codec refuses it with
	// that name unless it knows the wire's part itself.
	PartOther PartKind = iota
	PartText
	// PartImage is an image by URL, a data: URL included (ImageURL,
	// ImageDetail).
	PartImage
	// PartToolCall is a tool call inside the content (Anthropic
	// tool_use); OpenAI carries them in Message.ToolCalls instead.
	PartToolCall
	// PartToolResult is a tool's answer inside the content (Anthropic
	// tool_result): ToolCall.ID names the call, Text is the result.
	PartToolResult
	// PartThinking is the model's visible reasoning (Text) with the
	// provider's Signature, which must come back unchanged.
	PartThinking
	// PartRedactedThinking is reasoning the provider encrypted (Data).
	PartRedactedThinking
	// PartRefusal is an assistant's refusal (Text).
	PartRefusal
	// PartAudio is audio input: base64 Data in Format ("wav", "mp3").
	PartAudio
	// PartFile is a document: Data is its content (a base64 data: URL,
	// or base64 typed by Filename's extension), or FileID names a file
	// the client uploaded to the provider.
	PartFile
)

// Part is one content part.
type Part struct {
	Kind PartKind
	// WireType is the part's type as the client's wire names it
	// ("text", "image_url", "input_audio"), for messages about a part a
	// codec cannot send.
	WireType string
	// Text is the text of a text, thinking, refusal or tool result part.
	Text string
	// ImageURL and ImageDetail are an image part's URL and detail
	// ("low", "high", "auto", or "").
	ImageURL    string
	ImageDetail string
	// ToolCall is the call of a PartToolCall, or the call a
	// PartToolResult answers (its ID).
	ToolCall *ToolCall
	// Signature is a thinking part's signature.
	Signature string
	// Data is a redacted thinking part's encrypted content, or an audio
	// or file part's content.
	Data string
	// Format is an audio part's format ("wav", "mp3").
	Format string
	// FileID and Filename are a file part's provider file id and name.
	FileID   string
	Filename string
	// CacheControl is the part's cache_control marker as the client
	// wrote it (an extension of the OpenAI schema for providers with
	// prompt caching); nil is none.
	CacheControl json.RawMessage
	// IsError says a PartToolResult is an error (Anthropic
	// tool_result.is_error).
	IsError bool
}

// Tool is a function the model may call.
type Tool struct {
	// Type is the wire's tool type ("function"); codecs refuse others.
	Type        string
	Name        string
	Description string
	// Parameters is the JSON schema of the arguments, as the client wrote
	// it; nil is none.
	Parameters json.RawMessage
	// Strict asks the provider to hold the arguments to Parameters
	// (OpenAI function strict); nil is the provider's default.
	Strict *bool
	// CacheControl is the tool's cache_control marker (Anthropic: a
	// prompt cache breakpoint after this tool's definition); nil is
	// none. The OpenAI chat wire has no place for it: a door carries it
	// beside the chat body (CarryToolExtras).
	CacheControl json.RawMessage
}

// ToolCall is a call of a tool by the model.
type ToolCall struct {
	ID string
	// Type is the wire's call type ("function").
	Type string
	Name string
	// Arguments is the JSON text of the arguments.
	Arguments string
	// Signature is the provider's signature of the call, which must come
	// back unchanged with it: Google's thought signature, carried in
	// OpenAI chat as extra_content.google.thought_signature.
	Signature string
}

// ToolChoiceMode is how the model must use its tools.
type ToolChoiceMode uint8

// The tool choice modes.
const (
	ToolChoiceAuto ToolChoiceMode = iota
	ToolChoiceNone
	// ToolChoiceRequired is OpenAI "required", Anthropic "any".
	ToolChoiceRequired
	// ToolChoiceFunction forces the tool Name.
	ToolChoiceFunction
	// ToolChoiceOther is a value the model does not know; Raw holds it,
	// for the codec to name what it refuses.
	ToolChoiceOther
)

// ToolChoice says whether and which tool the model must call.
type ToolChoice struct {
	Mode ToolChoiceMode
	// Name is the forced tool of ToolChoiceFunction ("" when the wire
	// named none).
	Name string
	// Raw is the wire's value as the client wrote it, for
	// ToolChoiceFunction and ToolChoiceOther.
	Raw json.RawMessage
}

// ResponseFormat asks for JSON.
type ResponseFormat struct {
	// Type is the wire's format type ("json_object", "json_schema"; also
	// "text" or "" as the client wrote it, which codecs treat as none).
	Type string
	// Name, Description and Schema are a json_schema format's; Schema is
	// nil when absent or null.
	Name        string
	Description string
	Schema      json.RawMessage
	// Strict asks the provider to hold the answer to the schema.
	Strict *bool
}

// Reasoning asks a reasoning model for an effort or a budget.
type Reasoning struct {
	// Effort is "minimal", "low", "medium" or "high" (OpenAI
	// reasoning_effort); "" when the wire gives a budget instead.
	Effort string
	// BudgetTokens is a thinking budget (Anthropic thinking.budget_tokens,
	// Gemini thinkingBudget); nil when the wire gives an effort. A codec
	// whose provider takes the other form maps one to the other (Gemini
	// maps an effort to a budget).
	BudgetTokens *int64
}
