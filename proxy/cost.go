package proxy

import (
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
)

// cost prices usage at p. Cached prompt tokens are billed at the cached
// price when the provider has one, else at the input price.
func cost(p *store.ModelPrice, u llm.Usage) money.USD {
	if p == nil {
		return 0
	}
	cachedPrice := p.CachedInputPerMTok
	if cachedPrice == 0 {
		cachedPrice = p.InputPerMTok
	}
	cached := min(u.CachedTokens, u.PromptTokens)
	return money.Cost(u.PromptTokens-cached, p.InputPerMTok) +
		money.Cost(cached, cachedPrice) +
		money.Cost(u.CompletionTokens, p.OutputPerMTok)
}
