// Package llm holds the neutral vocabulary of the inference API: the
// operations, the token usage, and the neutral request and answer model
// (request.go, response.go) between the front doors and the translating
// codecs. Request bodies are kept as raw bytes (Request.Raw) and only the
// fields the gateway acts on are read, so that a same-wire upstream
// receives exactly the object that was validated, priced and authorised;
// the neutral fields are decoded only for a translating codec
// (DecodeOpenAIChat is the one decoder of today's front door). Answers
// come back as a Response, or, streamed, as batches of Events, which a
// door's encoder writes in its wire.
package llm

// Operation is one of the inference operations.
type Operation uint8

// The inference operations of the seed's five paths.
const (
	OpChat Operation = iota + 1
	OpCompletions
	OpEmbeddings
	// OpResponses is OpenAI's Responses API (POST /responses).
	OpResponses
	// OpMessages is Anthropic's Messages API (POST /v1/messages).
	OpMessages
	// OpCountTokens is Anthropic's token count
	// (POST /v1/messages/count_tokens).
	OpCountTokens
)

// String returns the path suffix of the operation.
func (o Operation) String() string {
	switch o {
	case OpChat:
		return "chat/completions"
	case OpCompletions:
		return "completions"
	case OpEmbeddings:
		return "embeddings"
	case OpResponses:
		return "responses"
	case OpMessages:
		return "v1/messages"
	case OpCountTokens:
		return "v1/messages/count_tokens"
	}
	return "unknown"
}

// Usage counts the tokens of one request.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	// CachedTokens are prompt tokens served from the provider's prompt
	// cache (OpenAI prompt_tokens_details.cached_tokens, Anthropic
	// cache_read_input_tokens); they are included in PromptTokens.
	CachedTokens int64 `json:"cached_tokens"`
	// CacheCreationTokens are prompt tokens written to the provider's
	// cache, the cache-write count (Anthropic cache_creation_input_tokens,
	// Bedrock cacheWriteInputTokens); they are included in PromptTokens.
	CacheCreationTokens int64 `json:"cache_creation_tokens"`
	// CacheWrite1hTokens are the part of CacheCreationTokens written for
	// one hour (Anthropic cache_creation.ephemeral_1h_input_tokens), priced
	// at the model's 1-hour write price; the rest were written for the
	// default five minutes.
	CacheWrite1hTokens int64 `json:"cache_write_1h_tokens,omitempty"`
	// ReasoningTokens are output tokens the model spent reasoning (OpenAI
	// completion_tokens_details.reasoning_tokens, Responses
	// output_tokens_details.reasoning_tokens, Gemini thoughtsTokenCount);
	// they are included in CompletionTokens (the Gemini codec adds them,
	// Google counts them apart from candidatesTokenCount) and priced as
	// output.
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
	// Estimated is true when the provider reported no usage and the
	// gateway counted the tokens itself.
	Estimated bool `json:"-"`
	// Present is true when the provider reported usage (an explicit zero
	// stays zero).
	Present bool `json:"-"`
}
