package proxy

import (
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
)

// tier is the prices that apply to one request: the model's, or its
// long-context tier's when the prompt is above the threshold.
type tier struct {
	input, output, cacheRead, cacheWrite, cacheWrite1h money.PerMTok
}

// tierOf returns the prices of a request of prompt tokens at p (CONTRACT
// §14, docs/governance.md "How each figure is computed"). A price left at 0
// falls back: a cache read to the input price, a five-minute write to the
// input price, a one-hour write to the five-minute write price. Above the
// long-context threshold the tier's input and output prices apply to the
// whole request, and the cache prices scale with the input price (the
// providers price reads and writes as multiples of input in both tiers:
// Gemini's cached input, Anthropic's reads and writes).
func tierOf(p *store.ModelPrice, prompt int64) tier {
	t := tier{input: p.InputPerMTok, output: p.OutputPerMTok, cacheRead: p.CachedInputPerMTok,
		cacheWrite: p.CacheWritePerMTok, cacheWrite1h: p.CacheWrite1hPerMTok}
	if t.cacheRead == 0 {
		t.cacheRead = t.input
	}
	if t.cacheWrite == 0 {
		t.cacheWrite = t.input
	}
	if t.cacheWrite1h == 0 {
		t.cacheWrite1h = t.cacheWrite
	}
	if p.LongContextThresholdTokens <= 0 || prompt <= p.LongContextThresholdTokens {
		return t
	}
	if in := p.LongContextInputPerMTok; in > 0 {
		base := t.input
		t.input = in
		t.cacheRead = money.Scale(t.cacheRead, in, base)
		t.cacheWrite = money.Scale(t.cacheWrite, in, base)
		t.cacheWrite1h = money.Scale(t.cacheWrite1h, in, base)
	}
	if out := p.LongContextOutputPerMTok; out > 0 {
		t.output = out
	}
	return t
}

// cost prices usage at p, in nano-dollars, rounded down once. The prompt
// splits into cache reads (CachedTokens), one-hour cache writes
// (CacheWrite1hTokens), five-minute cache writes (the rest of
// CacheCreationTokens) and plain input (the rest); each part is capped by
// what is left of the prompt, so no token is billed twice. Reasoning
// tokens are output tokens and are already in CompletionTokens.
func cost(p *store.ModelPrice, u llm.Usage) money.USD {
	if p == nil {
		return 0
	}
	t := tierOf(p, u.PromptTokens)
	prompt := max(u.PromptTokens, 0)
	read := min(max(u.CachedTokens, 0), prompt)
	write := min(max(u.CacheCreationTokens, 0), prompt-read)
	write1h := min(max(u.CacheWrite1hTokens, 0), write)
	return money.Total(
		money.Priced{Tokens: prompt - read - write, Price: t.input},
		money.Priced{Tokens: read, Price: t.cacheRead},
		money.Priced{Tokens: write - write1h, Price: t.cacheWrite},
		money.Priced{Tokens: write1h, Price: t.cacheWrite1h},
		money.Priced{Tokens: u.CompletionTokens, Price: t.output},
	)
}

// worstCostAt is the most prompt and completion tokens can cost at p:
// every prompt token at the dearest prompt price of its tier (a request
// may write its whole prompt to the cache for an hour).
func worstCostAt(p *store.ModelPrice, prompt, completion int64) money.USD {
	t := tierOf(p, prompt)
	dearest := max(t.input, t.cacheRead, t.cacheWrite, t.cacheWrite1h)
	return money.Total(money.Priced{Tokens: prompt, Price: dearest}, money.Priced{Tokens: completion, Price: t.output})
}
