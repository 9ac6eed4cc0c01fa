package proxy

import (
	"testing"

	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/openai"
	"github.com/sluicehq/sluice/proxy/providers/registry"
)

// The price pages the golden table's prices were taken from, on
// catalog.PricesTakenAt (2026-11-27).
const (
	srcAnthropic = "https://docs.anthropic.com/en/docs/about-claude/pricing"
	srcOpenAI    = "https://openai.com/api/pricing/"
	srcGoogle    = "https://ai.google.dev/gemini-api/docs/pricing"
	srcBedrock   = "https://aws.amazon.com/bedrock/pricing/"
	srcDeepSeek  = "https://api-docs.deepseek.com/quick_start/pricing"
	srcXAI       = "https://docs.x.ai/docs/models"
	srcCohere    = "https://cohere.com/pricing"
)

// published is the list price of each model of the golden table as its
// provider's page gives it (USD per million tokens; 0: no such price, the
// write then costs input), with the page it was taken from. The test holds
// the seed table (catalog.Prices) to it.
var published = map[[2]string]struct {
	in, out, cacheRead, write5m, write1h float64
	threshold                            int64
	longIn, longOut                      float64
	source                               string
}{
	{"anthropic", "claude-sonnet-4-5"}:                       {3, 15, 0.30, 3.75, 6, 200_000, 6, 22.50, srcAnthropic},
	{"anthropic", "claude-opus-4-5"}:                         {5, 25, 0.50, 6.25, 10, 0, 0, 0, srcAnthropic},
	{"anthropic", "claude-opus-4-1"}:                         {15, 75, 1.50, 18.75, 30, 0, 0, 0, srcAnthropic},
	{"anthropic", "claude-haiku-4-5"}:                        {1, 5, 0.10, 1.25, 2, 0, 0, 0, srcAnthropic},
	{"anthropic", "claude-3-5-haiku-latest"}:                 {0.80, 4, 0.08, 1, 1.60, 0, 0, 0, srcAnthropic},
	{"anthropic", "claude-3-haiku-20240307"}:                 {0.25, 1.25, 0.03, 0.30, 0.50, 0, 0, 0, srcAnthropic},
	{"openai", "gpt-5"}:                                      {1.25, 10, 0.125, 0, 0, 0, 0, 0, srcOpenAI},
	{"openai", "gpt-5-mini"}:                                 {0.25, 2, 0.025, 0, 0, 0, 0, 0, srcOpenAI},
	{"openai", "gpt-4o"}:                                     {2.50, 10, 1.25, 0, 0, 0, 0, 0, srcOpenAI},
	{"openai", "gpt-4.1"}:                                    {2, 8, 0.50, 0, 0, 0, 0, 0, srcOpenAI},
	{"openai", "o3"}:                                         {2, 8, 0.50, 0, 0, 0, 0, 0, srcOpenAI},
	{"openai", "o4-mini"}:                                    {1.10, 4.40, 0.275, 0, 0, 0, 0, 0, srcOpenAI},
	{"deepseek", "deepseek-chat"}:                            {0.28, 0.42, 0.028, 0, 0, 0, 0, 0, srcDeepSeek},
	{"deepseek", "deepseek-reasoner"}:                        {0.28, 0.42, 0.028, 0, 0, 0, 0, 0, srcDeepSeek},
	{"xai", "grok-4"}:                                        {3, 15, 0.75, 0, 0, 0, 0, 0, srcXAI},
	{"google", "gemini-2.5-pro"}:                             {1.25, 10, 0.125, 0, 0, 200_000, 2.50, 15, srcGoogle},
	{"google", "gemini-2.5-flash"}:                           {0.30, 2.50, 0.03, 0, 0, 0, 0, 0, srcGoogle},
	{"google", "gemini-2.5-flash-lite"}:                      {0.10, 0.40, 0.01, 0, 0, 0, 0, 0, srcGoogle},
	{"google", "gemini-3-pro-preview"}:                       {2, 12, 0.20, 0, 0, 200_000, 4, 18, srcGoogle},
	{"bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0"}: {3, 15, 0.30, 3.75, 0, 0, 0, 0, srcBedrock},
	{"bedrock", "anthropic.claude-3-5-haiku-20241022-v1:0"}:  {0.80, 4, 0.08, 1, 0, 0, 0, 0, srcBedrock},
	{"bedrock", "amazon.nova-pro-v1:0"}:                      {0.80, 3.20, 0.20, 0, 0, 0, 0, 0, srcBedrock},
	{"cohere", "command-a-03-2025"}:                          {2.50, 10, 0, 0, 0, 0, 0, 0, srcCohere},
	{"cohere", "command-r-08-2024"}:                          {0.15, 0.60, 0, 0, 0, 0, 0, 0, srcCohere},
}

// goldenCost is one real usage object, as its provider sends it in an
// answer, the counts the gateway must read from it, and its price to the
// nano-dollar, computed by hand from the published prices (exact sum,
// rounded down once; the long-context tier prices the whole request and
// scales the cache prices with the input price).
type goldenCost struct {
	name, provider, model string
	// native is the provider's own wire (Anthropic Messages, OpenAI
	// Responses) rather than the translated chat answer.
	native bool
	usage  string
	// The counts the log record carries.
	tokensIn, cachedTokens, cacheWrite, cacheWrite1h, tokensOut, reasoning int64
	want                                                                   money.USD
	source                                                                 string
}

var goldenCosts = []goldenCost{
	{name: "anthropic sonnet 4.5 plain", provider: "anthropic", model: "claude-sonnet-4-5", native: false,
		usage:    `{"input_tokens":1200,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":350}`,
		tokensIn: 1200, cachedTokens: 0, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 350, reasoning: 0,
		want: 8850000, source: srcAnthropic},
	{name: "anthropic sonnet 4.5 5m cache write", provider: "anthropic", model: "claude-sonnet-4-5", native: false,
		usage:    `{"input_tokens":50,"cache_creation_input_tokens":4000,"cache_read_input_tokens":0,"output_tokens":200,"cache_creation":{"ephemeral_5m_input_tokens":4000,"ephemeral_1h_input_tokens":0}}`,
		tokensIn: 4050, cachedTokens: 0, cacheWrite: 4000, cacheWrite1h: 0, tokensOut: 200, reasoning: 0,
		want: 18150000, source: srcAnthropic},
	{name: "anthropic sonnet 4.5 1h cache write", provider: "anthropic", model: "claude-sonnet-4-5", native: false,
		usage:    `{"input_tokens":50,"cache_creation_input_tokens":4000,"cache_read_input_tokens":0,"output_tokens":200,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":4000}}`,
		tokensIn: 4050, cachedTokens: 0, cacheWrite: 4000, cacheWrite1h: 4000, tokensOut: 200, reasoning: 0,
		want: 27150000, source: srcAnthropic},
	{name: "anthropic sonnet 4.5 5m and 1h writes and a read", provider: "anthropic", model: "claude-sonnet-4-5", native: false,
		usage:    `{"input_tokens":25,"cache_creation_input_tokens":3000,"cache_read_input_tokens":10000,"output_tokens":512,"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":2000}}`,
		tokensIn: 13025, cachedTokens: 10000, cacheWrite: 3000, cacheWrite1h: 2000, tokensOut: 512, reasoning: 0,
		want: 26505000, source: srcAnthropic},
	{name: "anthropic sonnet 4.5 cache read", provider: "anthropic", model: "claude-sonnet-4-5", native: false,
		usage:    `{"input_tokens":30,"cache_creation_input_tokens":0,"cache_read_input_tokens":8000,"output_tokens":120}`,
		tokensIn: 8030, cachedTokens: 8000, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 120, reasoning: 0,
		want: 4290000, source: srcAnthropic},
	{name: "anthropic sonnet 4.5 write without the ttl split (5m)", provider: "anthropic", model: "claude-sonnet-4-5", native: false,
		usage:    `{"input_tokens":12,"cache_creation_input_tokens":2048,"cache_read_input_tokens":0,"output_tokens":40}`,
		tokensIn: 2060, cachedTokens: 0, cacheWrite: 2048, cacheWrite1h: 0, tokensOut: 40, reasoning: 0,
		want: 8316000, source: srcAnthropic},
	{name: "anthropic sonnet 4.5 above 200k: long-context tier", provider: "anthropic", model: "claude-sonnet-4-5", native: false,
		usage:    `{"input_tokens":150000,"cache_creation_input_tokens":0,"cache_read_input_tokens":60000,"output_tokens":1000}`,
		tokensIn: 210000, cachedTokens: 60000, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 1000, reasoning: 0,
		want: 958500000, source: srcAnthropic},
	{name: "anthropic sonnet 4.5 above 200k with 1h writes", provider: "anthropic", model: "claude-sonnet-4-5", native: false,
		usage:    `{"input_tokens":100000,"cache_creation_input_tokens":60000,"cache_read_input_tokens":50000,"output_tokens":2000,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":60000}}`,
		tokensIn: 210000, cachedTokens: 50000, cacheWrite: 60000, cacheWrite1h: 60000, tokensOut: 2000, reasoning: 0,
		want: 1395000000, source: srcAnthropic},
	{name: "anthropic sonnet 4.5 at exactly 200k: base tier", provider: "anthropic", model: "claude-sonnet-4-5", native: false,
		usage:    `{"input_tokens":199000,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,"output_tokens":700,"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":0}}`,
		tokensIn: 200000, cachedTokens: 0, cacheWrite: 1000, cacheWrite1h: 0, tokensOut: 700, reasoning: 0,
		want: 611250000, source: srcAnthropic},
	{name: "anthropic opus 4.5 1h cache write", provider: "anthropic", model: "claude-opus-4-5", native: false,
		usage:    `{"input_tokens":100,"cache_creation_input_tokens":5000,"cache_read_input_tokens":0,"output_tokens":900,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":5000}}`,
		tokensIn: 5100, cachedTokens: 0, cacheWrite: 5000, cacheWrite1h: 5000, tokensOut: 900, reasoning: 0,
		want: 73000000, source: srcAnthropic},
	{name: "anthropic opus 4.1 thinking in output", provider: "anthropic", model: "claude-opus-4-1", native: false,
		usage:    `{"input_tokens":2000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":6000}`,
		tokensIn: 2000, cachedTokens: 0, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 6000, reasoning: 0,
		want: 480000000, source: srcAnthropic},
	{name: "anthropic haiku 4.5 read and 5m write", provider: "anthropic", model: "claude-haiku-4-5", native: false,
		usage:    `{"input_tokens":300,"cache_creation_input_tokens":1500,"cache_read_input_tokens":20000,"output_tokens":800,"cache_creation":{"ephemeral_5m_input_tokens":1500,"ephemeral_1h_input_tokens":0}}`,
		tokensIn: 21800, cachedTokens: 20000, cacheWrite: 1500, cacheWrite1h: 0, tokensOut: 800, reasoning: 0,
		want: 8175000, source: srcAnthropic},
	{name: "anthropic haiku 3.5 5m write", provider: "anthropic", model: "claude-3-5-haiku-latest", native: false,
		usage:    `{"input_tokens":10,"cache_creation_input_tokens":2048,"cache_read_input_tokens":0,"output_tokens":64}`,
		tokensIn: 2058, cachedTokens: 0, cacheWrite: 2048, cacheWrite1h: 0, tokensOut: 64, reasoning: 0,
		want: 2312000, source: srcAnthropic},
	{name: "anthropic haiku 3 read and write", provider: "anthropic", model: "claude-3-haiku-20240307", native: false,
		usage:    `{"input_tokens":7,"cache_creation_input_tokens":2048,"cache_read_input_tokens":4096,"output_tokens":33}`,
		tokensIn: 6151, cachedTokens: 4096, cacheWrite: 2048, cacheWrite1h: 0, tokensOut: 33, reasoning: 0,
		want: 780280, source: srcAnthropic},
	{name: "anthropic native messages 5m and 1h", provider: "anthropic", model: "claude-sonnet-4-5", native: true,
		usage:    `{"input_tokens":40,"cache_creation_input_tokens":6000,"cache_read_input_tokens":1000,"output_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":4500,"ephemeral_1h_input_tokens":1500}}`,
		tokensIn: 7040, cachedTokens: 1000, cacheWrite: 6000, cacheWrite1h: 1500, tokensOut: 300, reasoning: 0,
		want: 30795000, source: srcAnthropic},
	{name: "openai gpt-5 cached input and reasoning", provider: "openai", model: "gpt-5", native: false,
		usage:    `{"prompt_tokens":5000,"completion_tokens":800,"total_tokens":5800,"prompt_tokens_details":{"cached_tokens":4096},"completion_tokens_details":{"reasoning_tokens":512}}`,
		tokensIn: 5000, cachedTokens: 4096, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 800, reasoning: 512,
		want: 9642000, source: srcOpenAI},
	{name: "openai gpt-5-mini reasoning", provider: "openai", model: "gpt-5-mini", native: false,
		usage:    `{"prompt_tokens":1000,"completion_tokens":3000,"total_tokens":4000,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":2500}}`,
		tokensIn: 1000, cachedTokens: 0, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 3000, reasoning: 2500,
		want: 6250000, source: srcOpenAI},
	{name: "openai gpt-4o cached input", provider: "openai", model: "gpt-4o", native: false,
		usage:    `{"prompt_tokens":2048,"completion_tokens":100,"total_tokens":2148,"prompt_tokens_details":{"cached_tokens":1024}}`,
		tokensIn: 2048, cachedTokens: 1024, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 100, reasoning: 0,
		want: 4840000, source: srcOpenAI},
	{name: "openai gpt-4.1 mostly cached", provider: "openai", model: "gpt-4.1", native: false,
		usage:    `{"prompt_tokens":10000,"completion_tokens":250,"total_tokens":10250,"prompt_tokens_details":{"cached_tokens":9984}}`,
		tokensIn: 10000, cachedTokens: 9984, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 250, reasoning: 0,
		want: 7024000, source: srcOpenAI},
	{name: "openai o3 reasoning", provider: "openai", model: "o3", native: false,
		usage:    `{"prompt_tokens":1500,"completion_tokens":4000,"total_tokens":5500,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":3584}}`,
		tokensIn: 1500, cachedTokens: 0, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 4000, reasoning: 3584,
		want: 35000000, source: srcOpenAI},
	{name: "openai o4-mini cached and reasoning", provider: "openai", model: "o4-mini", native: false,
		usage:    `{"prompt_tokens":3000,"completion_tokens":1200,"total_tokens":4200,"prompt_tokens_details":{"cached_tokens":2048},"completion_tokens_details":{"reasoning_tokens":1024}}`,
		tokensIn: 3000, cachedTokens: 2048, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 1200, reasoning: 1024,
		want: 6890400, source: srcOpenAI},
	{name: "openai responses gpt-5 cached and reasoning", provider: "openai", model: "gpt-5", native: true,
		usage:    `{"input_tokens":3000,"input_tokens_details":{"cached_tokens":2048},"output_tokens":900,"output_tokens_details":{"reasoning_tokens":600},"total_tokens":3900}`,
		tokensIn: 3000, cachedTokens: 2048, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 900, reasoning: 600,
		want: 10446000, source: srcOpenAI},
	{name: "deepseek chat cache hit", provider: "deepseek", model: "deepseek-chat", native: false,
		usage:    `{"prompt_tokens":1000,"completion_tokens":200,"total_tokens":1200,"prompt_cache_hit_tokens":800,"prompt_cache_miss_tokens":200}`,
		tokensIn: 1000, cachedTokens: 800, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 200, reasoning: 0,
		want: 162400, source: srcDeepSeek},
	{name: "deepseek reasoner reasoning", provider: "deepseek", model: "deepseek-reasoner", native: false,
		usage:    `{"prompt_tokens":600,"completion_tokens":2400,"total_tokens":3000,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":2000}}`,
		tokensIn: 600, cachedTokens: 0, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 2400, reasoning: 2000,
		want: 1176000, source: srcDeepSeek},
	{name: "xai grok-4 cached input", provider: "xai", model: "grok-4", native: false,
		usage:    `{"prompt_tokens":4000,"completion_tokens":300,"total_tokens":4300,"prompt_tokens_details":{"cached_tokens":3000}}`,
		tokensIn: 4000, cachedTokens: 3000, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 300, reasoning: 0,
		want: 9750000, source: srcXAI},
	{name: "gemini 2.5 flash thinking", provider: "google", model: "gemini-2.5-flash", native: false,
		usage:    `{"promptTokenCount":1000,"candidatesTokenCount":200,"totalTokenCount":2700,"thoughtsTokenCount":1500}`,
		tokensIn: 1000, cachedTokens: 0, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 1700, reasoning: 1500,
		want: 4550000, source: srcGoogle},
	{name: "gemini 2.5 pro thinking and cached", provider: "google", model: "gemini-2.5-pro", native: false,
		usage:    `{"promptTokenCount":50000,"candidatesTokenCount":500,"totalTokenCount":52500,"thoughtsTokenCount":2000,"cachedContentTokenCount":40000}`,
		tokensIn: 50000, cachedTokens: 40000, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 2500, reasoning: 2000,
		want: 42500000, source: srcGoogle},
	{name: "gemini 2.5 pro above 200k", provider: "google", model: "gemini-2.5-pro", native: false,
		usage:    `{"promptTokenCount":250000,"candidatesTokenCount":1000,"totalTokenCount":254000,"thoughtsTokenCount":3000}`,
		tokensIn: 250000, cachedTokens: 0, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 4000, reasoning: 3000,
		want: 685000000, source: srcGoogle},
	{name: "gemini 2.5 pro above 200k cached", provider: "google", model: "gemini-2.5-pro", native: false,
		usage:    `{"promptTokenCount":300000,"candidatesTokenCount":800,"totalTokenCount":300800,"cachedContentTokenCount":200000}`,
		tokensIn: 300000, cachedTokens: 200000, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 800, reasoning: 0,
		want: 312000000, source: srcGoogle},
	{name: "gemini 2.5 pro at exactly 200k", provider: "google", model: "gemini-2.5-pro", native: false,
		usage:    `{"promptTokenCount":200000,"candidatesTokenCount":1000,"totalTokenCount":201500,"thoughtsTokenCount":500}`,
		tokensIn: 200000, cachedTokens: 0, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 1500, reasoning: 500,
		want: 265000000, source: srcGoogle},
	{name: "gemini 3 pro above 200k thinking", provider: "google", model: "gemini-3-pro-preview", native: false,
		usage:    `{"promptTokenCount":220000,"candidatesTokenCount":100,"totalTokenCount":220500,"thoughtsTokenCount":400}`,
		tokensIn: 220000, cachedTokens: 0, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 500, reasoning: 400,
		want: 889000000, source: srcGoogle},
	{name: "gemini 2.5 flash-lite cached", provider: "google", model: "gemini-2.5-flash-lite", native: false,
		usage:    `{"promptTokenCount":12000,"candidatesTokenCount":300,"totalTokenCount":12300,"cachedContentTokenCount":10000}`,
		tokensIn: 12000, cachedTokens: 10000, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 300, reasoning: 0,
		want: 420000, source: srcGoogle},
	{name: "bedrock claude sonnet 4.5 cache write", provider: "bedrock", model: "anthropic.claude-sonnet-4-5-20250929-v1:0", native: false,
		usage:    `{"inputTokens":20,"outputTokens":150,"totalTokens":3170,"cacheReadInputTokens":0,"cacheWriteInputTokens":3000}`,
		tokensIn: 3020, cachedTokens: 0, cacheWrite: 3000, cacheWrite1h: 0, tokensOut: 150, reasoning: 0,
		want: 13560000, source: srcBedrock},
	{name: "bedrock claude sonnet 4.5 cache read", provider: "bedrock", model: "anthropic.claude-sonnet-4-5-20250929-v1:0", native: false,
		usage:    `{"inputTokens":20,"outputTokens":150,"totalTokens":3170,"cacheReadInputTokens":3000,"cacheWriteInputTokens":0}`,
		tokensIn: 3020, cachedTokens: 3000, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 150, reasoning: 0,
		want: 3210000, source: srcBedrock},
	{name: "bedrock claude haiku 3.5 cache point write and read", provider: "bedrock", model: "anthropic.claude-3-5-haiku-20241022-v1:0", native: false,
		usage:    `{"inputTokens":100,"outputTokens":256,"totalTokens":3428,"cacheReadInputTokens":2048,"cacheWriteInputTokens":1024}`,
		tokensIn: 3172, cachedTokens: 2048, cacheWrite: 1024, cacheWrite1h: 0, tokensOut: 256, reasoning: 0,
		want: 2291840, source: srcBedrock},
	{name: "bedrock nova pro cache read", provider: "bedrock", model: "amazon.nova-pro-v1:0", native: false,
		usage:    `{"inputTokens":500,"outputTokens":400,"totalTokens":2400,"cacheReadInputTokens":1500}`,
		tokensIn: 2000, cachedTokens: 1500, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 400, reasoning: 0,
		want: 1980000, source: srcBedrock},
	{name: "cohere command a", provider: "cohere", model: "command-a-03-2025", native: false,
		usage:    `{"billed_units":{"input_tokens":1500,"output_tokens":300},"tokens":{"input_tokens":1500,"output_tokens":300}}`,
		tokensIn: 1500, cachedTokens: 0, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 300, reasoning: 0,
		want: 6750000, source: srcCohere},
	{name: "cohere command r billed units", provider: "cohere", model: "command-r-08-2024", native: false,
		usage:    `{"billed_units":{"input_tokens":800,"output_tokens":120}}`,
		tokensIn: 800, cachedTokens: 0, cacheWrite: 0, cacheWrite1h: 0, tokensOut: 120, reasoning: 0,
		want: 192000, source: srcCohere}}

// answerWith wraps a usage object in a minimal answer of the provider's
// wire format.
func answerWith(provider string, native bool, usage string) ([]byte, llm.Wire) {
	switch {
	case provider == "anthropic":
		w := llm.WireOpenAIChat
		if native {
			w = llm.WireAnthropicMessages
		}
		return []byte(`{"id":"msg_golden","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],` +
			`"stop_reason":"end_turn","usage":` + usage + `}`), w
	case provider == "google":
		return []byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP","index":0}],` +
			`"usageMetadata":` + usage + `,"modelVersion":"m"}`), llm.WireOpenAIChat
	case provider == "bedrock":
		return []byte(`{"output":{"message":{"role":"assistant","content":[{"text":"hi"}]}},"stopReason":"end_turn",` +
			`"usage":` + usage + `,"metrics":{"latencyMs":1}}`), llm.WireOpenAIChat
	case provider == "cohere":
		return []byte(`{"id":"c1","finish_reason":"COMPLETE","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]},` +
			`"usage":` + usage + `}`), llm.WireOpenAIChat
	case native: // OpenAI Responses
		return []byte(`{"id":"resp_golden","object":"response","status":"completed","model":"m","output":[],"usage":` + usage + `}`),
			llm.WireOpenAIResponses
	}
	return []byte(`{"id":"chatcmpl-golden","object":"chat.completion","created":1,"model":"m",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":` + usage + `}`), llm.WireOpenAIChat
}

// publishedPrice is the published price of provider/model as the store
// holds it.
func publishedPrice(t *testing.T, provider, model string) *store.ModelPrice {
	t.Helper()
	pub, ok := published[[2]string{provider, model}]
	if !ok {
		t.Fatalf("no published price of %s/%s", provider, model)
	}
	return &store.ModelPrice{Provider: provider, Model: model,
		InputPerMTok: money.FromFloat(pub.in), OutputPerMTok: money.FromFloat(pub.out), CachedInputPerMTok: money.FromFloat(pub.cacheRead),
		CacheWritePerMTok: money.FromFloat(pub.write5m), CacheWrite1hPerMTok: money.FromFloat(pub.write1h),
		LongContextThresholdTokens: pub.threshold, LongContextInputPerMTok: money.FromFloat(pub.longIn),
		LongContextOutputPerMTok: money.FromFloat(pub.longOut)}
}

// seedIsPublished fails unless the seed table holds the published price
// of provider/model.
func seedIsPublished(t *testing.T, provider, model string) {
	t.Helper()
	pub := published[[2]string{provider, model}]
	for _, p := range catalog.Prices() {
		if p.Provider != provider || p.Model != model {
			continue
		}
		got := [8]float64{p.InputPerMTok, p.OutputPerMTok, p.CachedInputPerMTok, p.CacheWritePerMTok, p.CacheWrite1hPerMTok,
			float64(p.LongContextThresholdTokens), p.LongContextInputPerMTok, p.LongContextOutputPerMTok}
		want := [8]float64{pub.in, pub.out, pub.cacheRead, pub.write5m, pub.write1h, float64(pub.threshold), pub.longIn, pub.longOut}
		if got != want {
			t.Errorf("seed price of %s/%s %v, want the published %v (%s)", provider, model, got, want, pub.source)
		}
		return
	}
	t.Errorf("no seed price for %s/%s", provider, model)
}

// TestCostGolden decodes each real usage object with its provider's codec,
// checks the counts the log gets, and prices them at the seed table's
// price, which must be the published one, to the nano-dollar.
func TestCostGolden(t *testing.T) {
	if len(goldenCosts) < 30 {
		t.Fatalf("%d golden usage objects, want at least 30", len(goldenCosts))
	}
	reg := registry.New(nil)
	for _, g := range goldenCosts {
		t.Run(g.name, func(t *testing.T) {
			pub, ok := published[[2]string{g.provider, g.model}]
			if !ok || pub.source != g.source {
				t.Fatalf("no published price of %s/%s from %s", g.provider, g.model, g.source)
			}
			seedIsPublished(t, g.provider, g.model)
			pr := publishedPrice(t, g.provider, g.model)
			p, _ := reg.Get(g.provider)
			codec, ok := p.(providers.Codec)
			if !ok { // the OpenAI wire's adapters hide their codec behind their capabilities
				codec = openai.New(g.provider, nil)
			}
			body, wire := answerWith(g.provider, g.native, g.usage)
			resp, err := codec.DecodeResponse(body, &providers.Request{Model: g.model, Wire: wire, Op: llm.OpChat}, nil)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			u := resp.Usage
			got := [6]int64{u.PromptTokens, u.CachedTokens, u.CacheCreationTokens, u.CacheWrite1hTokens, u.CompletionTokens, u.ReasoningTokens}
			if wantCounts := [6]int64{g.tokensIn, g.cachedTokens, g.cacheWrite, g.cacheWrite1h, g.tokensOut, g.reasoning}; got != wantCounts {
				t.Errorf("counts (in, cache read, cache write, 1h write, out, reasoning) %v, want %v", got, wantCounts)
			}
			if c := cost(pr, u); c != g.want {
				t.Errorf("cost %d nano-dollars, want %d", c, g.want)
			}
		})
	}
}

// TestWorstCost: the reservation prices every prompt token at the dearest
// prompt price of the request's tier (a one-hour cache write, for Claude),
// and the long-context tier once the prompt is above the threshold.
func TestWorstCost(t *testing.T) {
	sonnet := publishedPrice(t, "anthropic", "claude-sonnet-4-5")
	gpt := publishedPrice(t, "openai", "gpt-5")
	for _, tc := range []struct {
		name               string
		p                  *store.ModelPrice
		prompt, completion int64
		want               money.USD
	}{
		// 10,000 × $6 (1h write) + 1,000 × $15.
		{"claude base tier", sonnet, 10_000, 1_000, 75_000_000},
		// 300,000 × $12 (1h write, doubled) + 4,096 × $22.50.
		{"claude long-context tier", sonnet, 300_000, 4_096, 3_692_160_000},
		// No cache-write price: 10,000 × $1.25 + 1,000 × $10.
		{"openai", gpt, 10_000, 1_000, 22_500_000},
	} {
		if got := worstCostAt(tc.p, tc.prompt, tc.completion); got != tc.want {
			t.Errorf("%s: worst cost %d, want %d", tc.name, got, tc.want)
		}
		u := llm.Usage{PromptTokens: tc.prompt, CompletionTokens: tc.completion, CacheCreationTokens: tc.prompt, CacheWrite1hTokens: tc.prompt}
		if c := cost(tc.p, u); c > tc.want {
			t.Errorf("%s: a whole prompt written for an hour costs %d, more than the worst case %d", tc.name, c, tc.want)
		}
	}
}

// BenchmarkCost prices a request with cache reads, both writes and the
// long-context tier: no allocation.
func BenchmarkCost(b *testing.B) {
	p := &store.ModelPrice{InputPerMTok: 3 * money.PerDollar, OutputPerMTok: 15 * money.PerDollar, CachedInputPerMTok: 300_000_000,
		CacheWritePerMTok: 3_750_000_000, CacheWrite1hPerMTok: 6 * money.PerDollar, LongContextThresholdTokens: 200_000,
		LongContextInputPerMTok: 6 * money.PerDollar, LongContextOutputPerMTok: 22_500_000_000}
	u := llm.Usage{PromptTokens: 250_000, CachedTokens: 100_000, CacheCreationTokens: 50_000, CacheWrite1hTokens: 20_000, CompletionTokens: 2_000}
	b.ReportAllocs()
	var sum money.USD
	for b.Loop() {
		sum += cost(p, u)
	}
	if sum == 0 {
		b.Fatal("no cost")
	}
}
