package graph

import "testing"

// TestPriceTiers: putModelPrices takes the cache-write prices and the
// long-context tier (CONTRACT §14) and modelPrices reads them back.
func TestPriceTiers(t *testing.T) {
	e := newEnv(t)
	const fields = `provider model inputPerMtok cacheWritePerMtok cacheWrite1hPerMtok
		longContextThresholdTokens longContextInputPerMtok longContextOutputPerMtok`
	d := e.mustDo(e.admin, `mutation { putModelPrices(input: [{provider: "anthropic", model: "claude-custom",
		inputPerMtok: 3, outputPerMtok: 15, cachedInputPerMtok: 0.3, cacheWritePerMtok: 3.75, cacheWrite1hPerMtok: 6,
		longContextThresholdTokens: 200000, longContextInputPerMtok: 6, longContextOutputPerMtok: 22.5}]) { data { `+fields+` } } }`, nil)
	want := map[string]any{"provider": "anthropic", "model": "claude-custom", "inputPerMtok": 3.0, "cacheWritePerMtok": 3.75,
		"cacheWrite1hPerMtok": 6.0, "longContextThresholdTokens": 200000.0, "longContextInputPerMtok": 6.0, "longContextOutputPerMtok": 22.5}
	for _, got := range []any{get(d, "putModelPrices", "data", 0),
		get(e.mustDo(e.admin, `{ modelPrices(provider: "anthropic", limit: 1000) { data { `+fields+` } } }`, nil), "modelPrices", "data", 0)} {
		m, _ := got.(map[string]any)
		for k, v := range want {
			if m[k] != v {
				t.Errorf("%s = %v, want %v (%v)", k, m[k], v, m)
			}
		}
	}
	res := e.do(e.admin, `mutation { putModelPrices(input: [{provider: "anthropic", model: "x", inputPerMtok: 1, outputPerMtok: 1,
		longContextInputPerMtok: 2}]) { data { model } } }`, nil)
	checkCode(t, onlyError(t, res), "BAD_USER_INPUT")
}
