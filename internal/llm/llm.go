// Package llm holds the neutral wire vocabulary of the inference API: the
// OpenAI schema that clients speak, as far as the gateway itself needs to
// understand it. Request bodies are kept as raw bytes and only the fields
// the gateway acts on are read, so that an OpenAI-family upstream receives
// exactly the object that was validated, priced and authorised.
package llm

// Operation is one of the inference operations.
type Operation uint8

// The inference operations of the seed's five paths.
const (
	OpChat Operation = iota + 1
	OpCompletions
	OpEmbeddings
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
	// CacheCreationTokens are prompt tokens written to the provider's cache
	// (Anthropic cache_creation_input_tokens).
	CacheCreationTokens int64 `json:"cache_creation_tokens"`
	// Estimated is true when the provider reported no usage and the
	// gateway counted the tokens itself.
	Estimated bool `json:"-"`
	// Present is true when the provider reported usage (an explicit zero
	// stays zero).
	Present bool `json:"-"`
}
