package catalog

// This file holds the seed table of model prices.
//
// The prices are the providers' public list prices (USD per million tokens,
// standard on-demand tier, no batch or volume discounts) as of 2025–2026, as
// best known when the table was written; the cache-write prices and the
// long-context tiers were taken on PricesTakenAt from the pages named in
// PriceSources. They are only a starting point: operators override or
// extend them at runtime with PUT /admin/v1/model-prices.
//
// Notes:
//   - CachedInputPerMTok is the price of a cache read (OpenAI "cached input",
//     Anthropic "cache hits & refreshes", Gemini context caching, DeepSeek
//     "cache hit"); 0 means the provider publishes no cached-input price.
//   - CacheWritePerMTok and CacheWrite1hPerMTok are Anthropic's "5m cache
//     writes" and "1h cache writes" (1.25× and 2× input), on Anthropic and
//     on Bedrock's Claude models; 0 where the provider charges writes as
//     input (OpenAI, Gemini, DeepSeek, xAI, Amazon Nova).
//   - Long-context tiers: Gemini 2.5 Pro and 3 Pro above 200k prompt
//     tokens, Gemini 1.5 above 128k, Claude Sonnet 4 and 4.5 above 200k (the
//     1M-token context window); the tier prices the whole request.
//   - Per-request or per-search fees (Perplexity) are not modelled.
//   - Bedrock prices are the us-east-1 on-demand prices.
//   - All dates are UTC. Rows for retired models are kept for cost history
//     and have no entry in Models().

import (
	"cmp"
	"slices"
	"time"
)

// Price is a list price in USD per million tokens. Dates are nil when
// unknown or when there is none.
type Price struct {
	// Provider is the ID of the provider that charges the price.
	Provider string
	// Model is the provider's own model identifier.
	Model string
	// InputPerMTok is the price of one million input tokens.
	InputPerMTok float64
	// OutputPerMTok is the price of one million output tokens; it is 0 for
	// embedding models.
	OutputPerMTok float64
	// CachedInputPerMTok is the price of one million cached input tokens, or
	// 0 when the provider has no cached-input price.
	CachedInputPerMTok float64
	// DeprecatedAt is when the provider deprecated the model, in UTC.
	DeprecatedAt *time.Time
	// SunsetAt is when the provider retired (or will retire) the model, in UTC.
	SunsetAt *time.Time
	// CacheWritePerMTok and CacheWrite1hPerMTok are the prices of one
	// million prompt tokens written to the cache for five minutes and for
	// one hour; 0 when the provider charges writes as input.
	CacheWritePerMTok, CacheWrite1hPerMTok float64
	// LongContextThresholdTokens, when positive, is the prompt size above
	// which LongContextInputPerMTok and LongContextOutputPerMTok price the
	// whole request.
	LongContextThresholdTokens                        int64
	LongContextInputPerMTok, LongContextOutputPerMTok float64
}

// PricesTakenAt is when the cache-write prices and long-context tiers of
// the seed table were taken from PriceSources.
var PricesTakenAt = time.Date(2026, time.November, 27, 0, 0, 0, 0, time.UTC)

// PriceSources are the price pages of the providers whose cache-write
// prices or long-context tiers the seed table carries, by provider ID.
var PriceSources = map[string]string{
	"anthropic": "https://docs.anthropic.com/en/docs/about-claude/pricing",
	"bedrock":   "https://aws.amazon.com/bedrock/pricing/",
	"google":    "https://ai.google.dev/gemini-api/docs/pricing",
	"openai":    "https://openai.com/api/pricing/",
}

// cacheWrites sets the five-minute and one-hour cache-write prices of r.
func cacheWrites(r Price, write5m, write1h float64) Price {
	r.CacheWritePerMTok, r.CacheWrite1hPerMTok = write5m, write1h
	return r
}

// longContext sets the long-context tier of r: above threshold prompt
// tokens, in and out per million tokens.
func longContext(r Price, threshold int64, in, out float64) Price {
	r.LongContextThresholdTokens, r.LongContextInputPerMTok, r.LongContextOutputPerMTok = threshold, in, out
	return r
}

// day returns a pointer to midnight UTC of the given date.
func day(year int, month time.Month, d int) *time.Time {
	t := time.Date(year, month, d, 0, 0, 0, 0, time.UTC)
	return &t
}

// p builds a price row without lifecycle dates.
func p(provider, model string, in, out, cached float64) Price {
	return Price{Provider: provider, Model: model, InputPerMTok: in, OutputPerMTok: out, CachedInputPerMTok: cached}
}

// retired builds a price row for a deprecated or retired model.
func retired(provider, model string, in, out, cached float64, deprecatedAt, sunsetAt *time.Time) Price {
	r := p(provider, model, in, out, cached)
	r.DeprecatedAt, r.SunsetAt = deprecatedAt, sunsetAt
	return r
}

// prices is the seed table. Prices() sorts it, so order here is free.
var prices = []Price{
	// OpenAI.
	p("openai", "gpt-5", 1.25, 10.00, 0.125),
	p("openai", "gpt-5-mini", 0.25, 2.00, 0.025),
	p("openai", "gpt-5-nano", 0.05, 0.40, 0.005),
	p("openai", "gpt-4.1", 2.00, 8.00, 0.50),
	p("openai", "gpt-4.1-mini", 0.40, 1.60, 0.10),
	p("openai", "gpt-4.1-nano", 0.10, 0.40, 0.025),
	p("openai", "gpt-4o", 2.50, 10.00, 1.25),
	p("openai", "gpt-4o-mini", 0.15, 0.60, 0.075),
	p("openai", "o3", 2.00, 8.00, 0.50),
	p("openai", "o3-mini", 1.10, 4.40, 0.55),
	p("openai", "o4-mini", 1.10, 4.40, 0.275),
	p("openai", "o1", 15.00, 60.00, 7.50),
	p("openai", "gpt-4-turbo", 10.00, 30.00, 0),
	p("openai", "gpt-3.5-turbo", 0.50, 1.50, 0),
	p("openai", "gpt-3.5-turbo-instruct", 1.50, 2.00, 0),
	p("openai", "text-embedding-3-small", 0.02, 0, 0),
	p("openai", "text-embedding-3-large", 0.13, 0, 0),
	p("openai", "text-embedding-ada-002", 0.10, 0, 0),
	retired("openai", "gpt-4.5-preview", 75.00, 150.00, 37.50, day(2025, time.April, 14), day(2025, time.July, 14)),

	// Anthropic. Cached input is the cache-read price (0.1× input); writes
	// are 1.25× input for five minutes, 2× for one hour.
	cacheWrites(p("anthropic", "claude-opus-4-5", 5.00, 25.00, 0.50), 6.25, 10.00),
	cacheWrites(p("anthropic", "claude-opus-4-1", 15.00, 75.00, 1.50), 18.75, 30.00),
	cacheWrites(p("anthropic", "claude-opus-4-0", 15.00, 75.00, 1.50), 18.75, 30.00),
	longContext(cacheWrites(p("anthropic", "claude-sonnet-4-5", 3.00, 15.00, 0.30), 3.75, 6.00), 200_000, 6.00, 22.50),
	longContext(cacheWrites(p("anthropic", "claude-sonnet-4-0", 3.00, 15.00, 0.30), 3.75, 6.00), 200_000, 6.00, 22.50),
	cacheWrites(p("anthropic", "claude-haiku-4-5", 1.00, 5.00, 0.10), 1.25, 2.00),
	cacheWrites(p("anthropic", "claude-3-5-haiku-latest", 0.80, 4.00, 0.08), 1.00, 1.60),
	cacheWrites(p("anthropic", "claude-3-haiku-20240307", 0.25, 1.25, 0.03), 0.30, 0.50),
	cacheWrites(retired("anthropic", "claude-3-7-sonnet-20250219", 3.00, 15.00, 0.30, day(2025, time.October, 28), day(2026, time.February, 19)), 3.75, 6.00),
	cacheWrites(retired("anthropic", "claude-3-5-sonnet-20241022", 3.00, 15.00, 0.30, day(2025, time.August, 13), day(2025, time.October, 22)), 3.75, 6.00),
	cacheWrites(retired("anthropic", "claude-3-5-sonnet-20240620", 3.00, 15.00, 0.30, day(2025, time.August, 13), day(2025, time.October, 22)), 3.75, 6.00),
	cacheWrites(retired("anthropic", "claude-3-opus-20240229", 15.00, 75.00, 1.50, day(2025, time.June, 30), day(2026, time.January, 5)), 18.75, 30.00),
	retired("anthropic", "claude-3-sonnet-20240229", 3.00, 15.00, 0.30, nil, day(2025, time.July, 21)),
	retired("anthropic", "claude-2.1", 8.00, 24.00, 0, nil, day(2025, time.July, 21)),

	// Google Gemini (paid tier); the long-context tier above 200k (128k for
	// 1.5) prompt tokens. Gemini charges no cache write (storage is per
	// hour, not modelled).
	longContext(p("google", "gemini-3-pro-preview", 2.00, 12.00, 0.20), 200_000, 4.00, 18.00),
	longContext(p("google", "gemini-2.5-pro", 1.25, 10.00, 0.125), 200_000, 2.50, 15.00),
	p("google", "gemini-2.5-flash", 0.30, 2.50, 0.03),
	p("google", "gemini-2.5-flash-lite", 0.10, 0.40, 0.01),
	p("google", "gemini-2.0-flash", 0.10, 0.40, 0.025),
	p("google", "gemini-2.0-flash-lite", 0.075, 0.30, 0),
	p("google", "gemini-embedding-001", 0.15, 0, 0),
	p("google", "text-embedding-004", 0, 0, 0), // Free of charge on the Gemini API.
	longContext(retired("google", "gemini-1.5-pro", 1.25, 5.00, 0.3125, nil, day(2025, time.September, 24)), 128_000, 2.50, 10.00),
	longContext(retired("google", "gemini-1.5-flash", 0.075, 0.30, 0.01875, nil, day(2025, time.September, 24)), 128_000, 0.15, 0.60),
	longContext(retired("google", "gemini-1.5-flash-8b", 0.0375, 0.15, 0.01, nil, day(2025, time.September, 24)), 128_000, 0.075, 0.30),

	// Mistral AI.
	p("mistral", "mistral-large-latest", 2.00, 6.00, 0),
	p("mistral", "mistral-medium-latest", 0.40, 2.00, 0),
	p("mistral", "mistral-small-latest", 0.10, 0.30, 0),
	p("mistral", "magistral-medium-latest", 2.00, 5.00, 0),
	p("mistral", "codestral-latest", 0.30, 0.90, 0),
	p("mistral", "pixtral-large-latest", 2.00, 6.00, 0),
	p("mistral", "ministral-8b-latest", 0.10, 0.10, 0),
	p("mistral", "open-mistral-nemo", 0.15, 0.15, 0),
	p("mistral", "mistral-embed", 0.10, 0, 0),

	// Groq.
	p("groq", "llama-3.3-70b-versatile", 0.59, 0.79, 0),
	p("groq", "llama-3.1-8b-instant", 0.05, 0.08, 0),
	p("groq", "openai/gpt-oss-120b", 0.15, 0.75, 0),
	p("groq", "openai/gpt-oss-20b", 0.10, 0.50, 0),
	p("groq", "meta-llama/llama-4-scout-17b-16e-instruct", 0.11, 0.34, 0),
	p("groq", "moonshotai/kimi-k2-instruct", 1.00, 3.00, 0),
	p("groq", "qwen/qwen3-32b", 0.29, 0.59, 0),

	// DeepSeek. Both models are priced as DeepSeek-V3.2 since 2025-09-29.
	p("deepseek", "deepseek-chat", 0.28, 0.42, 0.028),
	p("deepseek", "deepseek-reasoner", 0.28, 0.42, 0.028),
	// deepseek-coder was merged into deepseek-chat with DeepSeek-V2.5.
	retired("deepseek", "deepseek-coder", 0.14, 0.28, 0.014, day(2024, time.September, 5), nil),

	// xAI.
	p("xai", "grok-4", 3.00, 15.00, 0.75),
	p("xai", "grok-4-fast-reasoning", 0.20, 0.50, 0.05),
	p("xai", "grok-4-fast-non-reasoning", 0.20, 0.50, 0.05),
	p("xai", "grok-code-fast-1", 0.20, 1.50, 0.02),
	p("xai", "grok-3", 3.00, 15.00, 0.75),
	p("xai", "grok-3-mini", 0.30, 0.50, 0.075),

	// Cohere.
	p("cohere", "command-a-03-2025", 2.50, 10.00, 0),
	p("cohere", "command-a-vision-07-2025", 2.50, 10.00, 0),
	p("cohere", "command-r-plus-08-2024", 2.50, 10.00, 0),
	p("cohere", "command-r-08-2024", 0.15, 0.60, 0),
	p("cohere", "command-r7b-12-2024", 0.0375, 0.15, 0),
	p("cohere", "embed-v4.0", 0.12, 0, 0),
	p("cohere", "embed-english-v3.0", 0.10, 0, 0),

	// Amazon Bedrock (us-east-1, on-demand). Claude's cache writes cost
	// 1.25× input (one-hour writes at that price too, until Bedrock
	// publishes theirs); Nova charges no cache write.
	cacheWrites(p("bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0", 3.00, 15.00, 0.30), 3.75, 0),
	cacheWrites(p("bedrock", "anthropic.claude-sonnet-4-20250514-v1:0", 3.00, 15.00, 0.30), 3.75, 0),
	p("bedrock", "anthropic.claude-3-5-sonnet-20240620-v1:0", 3.00, 15.00, 0),
	cacheWrites(p("bedrock", "anthropic.claude-3-5-haiku-20241022-v1:0", 0.80, 4.00, 0.08), 1.00, 0),
	p("bedrock", "amazon.nova-pro-v1:0", 0.80, 3.20, 0.20),
	p("bedrock", "amazon.nova-lite-v1:0", 0.06, 0.24, 0.015),
	p("bedrock", "amazon.nova-micro-v1:0", 0.035, 0.14, 0.00875),
	p("bedrock", "amazon.titan-embed-text-v2:0", 0.02, 0, 0),
	p("bedrock", "cohere.embed-english-v3", 0.10, 0, 0),

	// Together AI.
	p("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", 0.88, 0.88, 0),
	p("together", "meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo", 0.18, 0.18, 0),
	p("together", "deepseek-ai/DeepSeek-V3", 1.25, 1.25, 0),
	p("together", "Qwen/Qwen2.5-72B-Instruct-Turbo", 1.20, 1.20, 0),

	// Fireworks AI.
	p("fireworks", "accounts/fireworks/models/llama-v3p3-70b-instruct", 0.90, 0.90, 0),
	p("fireworks", "accounts/fireworks/models/llama-v3p1-8b-instruct", 0.20, 0.20, 0),
	p("fireworks", "accounts/fireworks/models/deepseek-v3", 0.90, 0.90, 0),

	// Perplexity (token prices only; per-request search fees are extra).
	p("perplexity", "sonar", 1.00, 1.00, 0),
	p("perplexity", "sonar-pro", 3.00, 15.00, 0),
	p("perplexity", "sonar-reasoning-pro", 2.00, 8.00, 0),
	p("perplexity", "sonar-deep-research", 2.00, 8.00, 0),

	// Cerebras.
	p("cerebras", "llama3.1-8b", 0.10, 0.10, 0),
	p("cerebras", "llama-3.3-70b", 0.85, 1.20, 0),
	p("cerebras", "gpt-oss-120b", 0.25, 0.69, 0),
}

// Prices returns the seed price table sorted by provider, then model. Each
// call returns a fresh copy; the date pointers are copied too, so callers may
// modify them without affecting later calls.
func Prices() []Price {
	out := make([]Price, len(prices))
	for i, r := range prices {
		if r.DeprecatedAt != nil {
			t := *r.DeprecatedAt
			r.DeprecatedAt = &t
		}
		if r.SunsetAt != nil {
			t := *r.SunsetAt
			r.SunsetAt = &t
		}
		out[i] = r
	}
	slices.SortFunc(out, func(a, b Price) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Model, b.Model))
	})
	return out
}
