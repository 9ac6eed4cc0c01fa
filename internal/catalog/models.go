package catalog

import (
	"cmp"
	"slices"
)

// Model kinds used in Model.Kind.
const (
	KindChat       = "chat"
	KindEmbedding  = "embedding"
	KindCompletion = "completion"
)

// Model is one entry of the model catalog.
type Model struct {
	// Provider is the ID of the provider that serves the model.
	Provider string `json:"provider"`
	// ID is the provider's own model identifier.
	ID string `json:"id"`
	// Name is the human-readable display name.
	Name string `json:"name"`
	// Kind is one of "chat", "embedding" or "completion".
	Kind string `json:"kind"`
	// ContextWindow is the maximum number of input tokens.
	ContextWindow int `json:"context_window"`
	// MaxOutput is the maximum number of output tokens per request. It is 0
	// for embedding models and when the provider publishes no separate limit.
	MaxOutput int `json:"max_output_tokens"`
	// Capabilities lists the features the model supports.
	Capabilities Capabilities `json:"capabilities"`
}

// Tool and vision flags for the chat helper, for readability.
const (
	noTools  = false
	tools    = true
	noVision = false
	vision   = true
)

// chat builds a streaming chat model entry.
func chat(provider, id, name string, ctx, maxOut int, withTools, withVision bool) Model {
	return Model{
		Provider: provider, ID: id, Name: name, Kind: KindChat,
		ContextWindow: ctx, MaxOutput: maxOut,
		Capabilities: Capabilities{Chat: true, Streaming: true, Tools: withTools, Vision: withVision},
	}
}

// embedding builds an embedding model entry.
func embedding(provider, id, name string, ctx int) Model {
	return Model{
		Provider: provider, ID: id, Name: name, Kind: KindEmbedding,
		ContextWindow: ctx,
		Capabilities:  Capabilities{Embeddings: true},
	}
}

// completion builds a legacy text-completion model entry.
func completion(provider, id, name string, ctx, maxOut int) Model {
	return Model{
		Provider: provider, ID: id, Name: name, Kind: KindCompletion,
		ContextWindow: ctx, MaxOutput: maxOut,
		Capabilities: Capabilities{Completions: true, Streaming: true},
	}
}

// models is the model catalog. Models() sorts it, so order here is free.
var models = []Model{
	// OpenAI.
	chat("openai", "gpt-5", "GPT-5", 400000, 128000, tools, vision),
	chat("openai", "gpt-5-mini", "GPT-5 mini", 400000, 128000, tools, vision),
	chat("openai", "gpt-5-nano", "GPT-5 nano", 400000, 128000, tools, vision),
	chat("openai", "gpt-4.1", "GPT-4.1", 1047576, 32768, tools, vision),
	chat("openai", "gpt-4.1-mini", "GPT-4.1 mini", 1047576, 32768, tools, vision),
	chat("openai", "gpt-4.1-nano", "GPT-4.1 nano", 1047576, 32768, tools, vision),
	chat("openai", "gpt-4o", "GPT-4o", 128000, 16384, tools, vision),
	chat("openai", "gpt-4o-mini", "GPT-4o mini", 128000, 16384, tools, vision),
	chat("openai", "o3", "o3", 200000, 100000, tools, vision),
	chat("openai", "o3-mini", "o3-mini", 200000, 100000, tools, noVision),
	chat("openai", "o4-mini", "o4-mini", 200000, 100000, tools, vision),
	chat("openai", "o1", "o1", 200000, 100000, tools, vision),
	chat("openai", "gpt-4-turbo", "GPT-4 Turbo", 128000, 4096, tools, vision),
	chat("openai", "gpt-3.5-turbo", "GPT-3.5 Turbo", 16385, 4096, tools, noVision),
	completion("openai", "gpt-3.5-turbo-instruct", "GPT-3.5 Turbo Instruct", 4096, 4096),
	embedding("openai", "text-embedding-3-small", "Text Embedding 3 Small", 8191),
	embedding("openai", "text-embedding-3-large", "Text Embedding 3 Large", 8191),
	embedding("openai", "text-embedding-ada-002", "Text Embedding Ada 002", 8191),

	// Anthropic.
	chat("anthropic", "claude-opus-4-5", "Claude Opus 4.5", 200000, 64000, tools, vision),
	chat("anthropic", "claude-opus-4-1", "Claude Opus 4.1", 200000, 32000, tools, vision),
	chat("anthropic", "claude-opus-4-0", "Claude Opus 4", 200000, 32000, tools, vision),
	chat("anthropic", "claude-sonnet-4-5", "Claude Sonnet 4.5", 200000, 64000, tools, vision),
	chat("anthropic", "claude-sonnet-4-0", "Claude Sonnet 4", 200000, 64000, tools, vision),
	chat("anthropic", "claude-haiku-4-5", "Claude Haiku 4.5", 200000, 64000, tools, vision),
	chat("anthropic", "claude-3-5-haiku-latest", "Claude Haiku 3.5", 200000, 8192, tools, vision),
	chat("anthropic", "claude-3-haiku-20240307", "Claude Haiku 3", 200000, 4096, tools, vision),

	// Google Gemini.
	chat("google", "gemini-3-pro-preview", "Gemini 3 Pro (preview)", 1048576, 65536, tools, vision),
	chat("google", "gemini-2.5-pro", "Gemini 2.5 Pro", 1048576, 65536, tools, vision),
	chat("google", "gemini-2.5-flash", "Gemini 2.5 Flash", 1048576, 65536, tools, vision),
	chat("google", "gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", 1048576, 65536, tools, vision),
	chat("google", "gemini-2.0-flash", "Gemini 2.0 Flash", 1048576, 8192, tools, vision),
	chat("google", "gemini-2.0-flash-lite", "Gemini 2.0 Flash-Lite", 1048576, 8192, tools, vision),
	embedding("google", "gemini-embedding-001", "Gemini Embedding", 2048),
	embedding("google", "text-embedding-004", "Text Embedding 004", 2048),

	// Mistral AI.
	chat("mistral", "mistral-large-latest", "Mistral Large", 131072, 0, tools, noVision),
	chat("mistral", "mistral-medium-latest", "Mistral Medium", 131072, 0, tools, vision),
	chat("mistral", "mistral-small-latest", "Mistral Small", 131072, 0, tools, vision),
	chat("mistral", "magistral-medium-latest", "Magistral Medium", 131072, 0, tools, vision),
	chat("mistral", "codestral-latest", "Codestral", 256000, 0, tools, noVision),
	chat("mistral", "pixtral-large-latest", "Pixtral Large", 131072, 0, tools, vision),
	chat("mistral", "ministral-8b-latest", "Ministral 8B", 131072, 0, tools, noVision),
	chat("mistral", "open-mistral-nemo", "Mistral NeMo", 131072, 0, tools, noVision),
	embedding("mistral", "mistral-embed", "Mistral Embed", 8192),

	// Groq.
	chat("groq", "llama-3.3-70b-versatile", "Llama 3.3 70B Versatile", 131072, 32768, tools, noVision),
	chat("groq", "llama-3.1-8b-instant", "Llama 3.1 8B Instant", 131072, 131072, tools, noVision),
	chat("groq", "openai/gpt-oss-120b", "GPT-OSS 120B", 131072, 65536, tools, noVision),
	chat("groq", "openai/gpt-oss-20b", "GPT-OSS 20B", 131072, 65536, tools, noVision),
	chat("groq", "meta-llama/llama-4-scout-17b-16e-instruct", "Llama 4 Scout 17B 16E", 131072, 8192, tools, vision),
	chat("groq", "moonshotai/kimi-k2-instruct", "Kimi K2 Instruct", 131072, 16384, tools, noVision),
	chat("groq", "qwen/qwen3-32b", "Qwen3 32B", 131072, 40960, tools, noVision),

	// DeepSeek.
	chat("deepseek", "deepseek-chat", "DeepSeek Chat", 128000, 8192, tools, noVision),
	chat("deepseek", "deepseek-reasoner", "DeepSeek Reasoner", 128000, 65536, tools, noVision),

	// xAI.
	chat("xai", "grok-4", "Grok 4", 256000, 0, tools, vision),
	chat("xai", "grok-4-fast-reasoning", "Grok 4 Fast (reasoning)", 2000000, 0, tools, vision),
	chat("xai", "grok-4-fast-non-reasoning", "Grok 4 Fast (non-reasoning)", 2000000, 0, tools, vision),
	chat("xai", "grok-code-fast-1", "Grok Code Fast 1", 256000, 0, tools, noVision),
	chat("xai", "grok-3", "Grok 3", 131072, 0, tools, noVision),
	chat("xai", "grok-3-mini", "Grok 3 Mini", 131072, 0, tools, noVision),

	// Cohere.
	chat("cohere", "command-a-03-2025", "Command A", 256000, 8000, tools, noVision),
	chat("cohere", "command-a-vision-07-2025", "Command A Vision", 128000, 8000, noTools, vision),
	chat("cohere", "command-r-plus-08-2024", "Command R+ (08-2024)", 128000, 4000, tools, noVision),
	chat("cohere", "command-r-08-2024", "Command R (08-2024)", 128000, 4000, tools, noVision),
	chat("cohere", "command-r7b-12-2024", "Command R7B", 128000, 4000, tools, noVision),
	embedding("cohere", "embed-v4.0", "Embed v4", 128000),
	embedding("cohere", "embed-english-v3.0", "Embed English v3", 512),

	// Amazon Bedrock (on-demand model IDs).
	chat("bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0", "Claude Sonnet 4.5 (Bedrock)", 200000, 64000, tools, vision),
	chat("bedrock", "anthropic.claude-sonnet-4-20250514-v1:0", "Claude Sonnet 4 (Bedrock)", 200000, 64000, tools, vision),
	chat("bedrock", "anthropic.claude-3-5-sonnet-20240620-v1:0", "Claude 3.5 Sonnet (Bedrock)", 200000, 8192, tools, vision),
	chat("bedrock", "anthropic.claude-3-5-haiku-20241022-v1:0", "Claude 3.5 Haiku (Bedrock)", 200000, 8192, tools, noVision),
	chat("bedrock", "amazon.nova-pro-v1:0", "Amazon Nova Pro", 300000, 5000, tools, vision),
	chat("bedrock", "amazon.nova-lite-v1:0", "Amazon Nova Lite", 300000, 5000, tools, vision),
	chat("bedrock", "amazon.nova-micro-v1:0", "Amazon Nova Micro", 128000, 5000, tools, noVision),
	embedding("bedrock", "amazon.titan-embed-text-v2:0", "Titan Text Embeddings V2", 8192),
	embedding("bedrock", "cohere.embed-english-v3", "Cohere Embed English v3 (Bedrock)", 512),

	// Together AI.
	chat("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", "Llama 3.3 70B Instruct Turbo", 131072, 0, tools, noVision),
	chat("together", "meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo", "Llama 3.1 8B Instruct Turbo", 131072, 0, tools, noVision),
	chat("together", "deepseek-ai/DeepSeek-V3", "DeepSeek V3", 131072, 0, tools, noVision),
	chat("together", "Qwen/Qwen2.5-72B-Instruct-Turbo", "Qwen 2.5 72B Instruct Turbo", 32768, 0, tools, noVision),

	// Fireworks AI.
	chat("fireworks", "accounts/fireworks/models/llama-v3p3-70b-instruct", "Llama 3.3 70B Instruct", 131072, 0, tools, noVision),
	chat("fireworks", "accounts/fireworks/models/llama-v3p1-8b-instruct", "Llama 3.1 8B Instruct", 131072, 0, tools, noVision),
	chat("fireworks", "accounts/fireworks/models/deepseek-v3", "DeepSeek V3", 131072, 0, tools, noVision),

	// Perplexity (chat and streaming only).
	chat("perplexity", "sonar", "Sonar", 128000, 0, noTools, noVision),
	chat("perplexity", "sonar-pro", "Sonar Pro", 200000, 8000, noTools, noVision),
	chat("perplexity", "sonar-reasoning-pro", "Sonar Reasoning Pro", 128000, 0, noTools, noVision),
	chat("perplexity", "sonar-deep-research", "Sonar Deep Research", 128000, 0, noTools, noVision),

	// Cerebras.
	chat("cerebras", "llama3.1-8b", "Llama 3.1 8B", 32768, 8192, tools, noVision),
	chat("cerebras", "llama-3.3-70b", "Llama 3.3 70B", 65536, 8192, tools, noVision),
	chat("cerebras", "gpt-oss-120b", "GPT-OSS 120B", 131072, 32768, tools, noVision),
}

// Models returns the model catalog sorted by provider, then model ID. Each
// call returns a fresh copy.
func Models() []Model {
	out := slices.Clone(models)
	slices.SortFunc(out, func(a, b Model) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.ID, b.ID))
	})
	return out
}
