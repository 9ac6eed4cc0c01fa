// Package catalog is Sluice's built-in catalog: the upstream providers the
// gateway can talk to and what each of them serves, a catalog of current
// models, and the seeded table of public list prices.
//
// Everything here is static data. The exported functions return fresh copies,
// so callers may modify the results freely.
package catalog

import (
	"cmp"
	"slices"
)

// Capabilities says which OpenAI-schema features a provider's adapter serves.
type Capabilities struct {
	Chat        bool `json:"chat"`
	Completions bool `json:"completions"`
	Embeddings  bool `json:"embeddings"`
	Streaming   bool `json:"streaming"`
	Tools       bool `json:"tools"`
	Vision      bool `json:"vision"`
}

// Provider describes one upstream provider Sluice can talk to.
type Provider struct {
	// ID is the stable identifier, e.g. "openai" or "azure-openai".
	ID string `json:"id"`
	// Name is the human-readable display name.
	Name string `json:"name"`
	// Schema is "openai" for providers that speak the OpenAI wire format and
	// otherwise names the native one: "anthropic", "gemini", "bedrock",
	// "azure" or "cohere".
	Schema string `json:"schema"`
	// DefaultBaseURL is the base URL the provider's official SDK uses. It is
	// empty when the operator must supply one and for Bedrock, whose endpoint
	// is derived from the configured AWS region.
	DefaultBaseURL string `json:"default_base_url"`
	// BaseURLRequired reports whether the operator must configure a base URL.
	BaseURLRequired bool `json:"base_url_required"`
	// Capabilities lists the features the provider's adapter serves.
	Capabilities Capabilities `json:"capabilities"`
}

// Schema names used in Provider.Schema.
const (
	SchemaOpenAI    = "openai"
	SchemaAnthropic = "anthropic"
	SchemaGemini    = "gemini"
	SchemaBedrock   = "bedrock"
	SchemaAzure     = "azure"
	SchemaCohere    = "cohere"
)

// Commonly shared capability sets.
var (
	capsAll = Capabilities{Chat: true, Completions: true, Embeddings: true, Streaming: true, Tools: true, Vision: true}
)

// providers is the provider table. Keep it sorted by ID.
var providers = []Provider{
	{
		ID: "anthropic", Name: "Anthropic", Schema: SchemaAnthropic,
		DefaultBaseURL: "https://api.anthropic.com",
		Capabilities:   Capabilities{Chat: true, Streaming: true, Tools: true, Vision: true},
	},
	{
		ID: "azure-openai", Name: "Azure OpenAI", Schema: SchemaAzure,
		BaseURLRequired: true,
		Capabilities:    capsAll,
	},
	{
		ID: "bedrock", Name: "Amazon Bedrock", Schema: SchemaBedrock,
		Capabilities: Capabilities{Chat: true, Embeddings: true, Streaming: true, Tools: true, Vision: true},
	},
	{
		ID: "cerebras", Name: "Cerebras", Schema: SchemaOpenAI,
		DefaultBaseURL: "https://api.cerebras.ai/v1",
		Capabilities:   Capabilities{Chat: true, Streaming: true, Tools: true},
	},
	{
		ID: "cohere", Name: "Cohere", Schema: SchemaCohere,
		DefaultBaseURL: "https://api.cohere.com",
		Capabilities:   Capabilities{Chat: true, Embeddings: true, Streaming: true, Tools: true, Vision: true},
	},
	{
		ID: "deepseek", Name: "DeepSeek", Schema: SchemaOpenAI,
		DefaultBaseURL: "https://api.deepseek.com/v1",
		// DeepSeek's FIM /completions endpoint is beta-only, so it is not served.
		Capabilities: Capabilities{Chat: true, Streaming: true, Tools: true},
	},
	{
		ID: "fireworks", Name: "Fireworks AI", Schema: SchemaOpenAI,
		DefaultBaseURL: "https://api.fireworks.ai/inference/v1",
		Capabilities:   capsAll,
	},
	{
		ID: "google", Name: "Google Gemini", Schema: SchemaGemini,
		DefaultBaseURL: "https://generativelanguage.googleapis.com",
		Capabilities:   Capabilities{Chat: true, Embeddings: true, Streaming: true, Tools: true, Vision: true},
	},
	{
		ID: "groq", Name: "Groq", Schema: SchemaOpenAI,
		DefaultBaseURL: "https://api.groq.com/openai/v1",
		Capabilities:   Capabilities{Chat: true, Streaming: true, Tools: true, Vision: true},
	},
	{
		ID: "mistral", Name: "Mistral AI", Schema: SchemaOpenAI,
		DefaultBaseURL: "https://api.mistral.ai/v1",
		Capabilities:   Capabilities{Chat: true, Embeddings: true, Streaming: true, Tools: true, Vision: true},
	},
	{
		ID: "ollama", Name: "Ollama", Schema: SchemaOpenAI,
		DefaultBaseURL: "http://localhost:11434/v1",
		Capabilities:   capsAll,
	},
	{
		ID: "openai", Name: "OpenAI", Schema: SchemaOpenAI,
		DefaultBaseURL: "https://api.openai.com/v1",
		Capabilities:   capsAll,
	},
	{
		ID: "openai-compatible", Name: "OpenAI-compatible", Schema: SchemaOpenAI,
		BaseURLRequired: true,
		Capabilities:    capsAll,
	},
	{
		ID: "openrouter", Name: "OpenRouter", Schema: SchemaOpenAI,
		DefaultBaseURL: "https://openrouter.ai/api/v1",
		Capabilities:   Capabilities{Chat: true, Streaming: true, Tools: true, Vision: true},
	},
	{
		ID: "perplexity", Name: "Perplexity", Schema: SchemaOpenAI,
		DefaultBaseURL: "https://api.perplexity.ai",
		Capabilities:   Capabilities{Chat: true, Streaming: true},
	},
	{
		ID: "together", Name: "Together AI", Schema: SchemaOpenAI,
		DefaultBaseURL: "https://api.together.xyz/v1",
		Capabilities:   capsAll,
	},
	{
		ID: "xai", Name: "xAI", Schema: SchemaOpenAI,
		DefaultBaseURL: "https://api.x.ai/v1",
		Capabilities:   Capabilities{Chat: true, Streaming: true, Tools: true, Vision: true},
	},
}

// Providers returns every supported provider sorted by ID. Each call returns
// a fresh copy.
func Providers() []Provider {
	out := slices.Clone(providers)
	slices.SortFunc(out, func(a, b Provider) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// LookupProvider returns the provider with the given ID and reports whether
// it exists.
func LookupProvider(id string) (Provider, bool) {
	for _, p := range providers {
		if p.ID == id {
			return p, true
		}
	}
	return Provider{}, false
}
