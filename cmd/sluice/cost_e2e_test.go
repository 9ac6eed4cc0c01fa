package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// costCase is one request whose provider reports prompt caching or
// reasoning, and the seed prices of its model (nano-dollars per million
// tokens: input, cache read, five-minute write, one-hour write, output).
type costCase struct {
	model  string
	stream bool
	detail providertest.UsageDetail
	prices [5]money.PerMTok
	// door, when set, is a native door's path under the gateway and body
	// the request's body there (%s: the stream flag); else /compat chat.
	door, body string
}

// TestServeLogsCacheWritesAndReasoning drives requests through `sluice
// serve` to the mock provider, which reports cache reads, five-minute and
// one-hour cache writes and reasoning tokens in each provider's own
// fields, plain and streamed, through /compat and the native Anthropic
// Messages and OpenAI Responses doors, and finds them in GET
// /admin/v1/logs and GraphQL with
// the cost of the seed prices, on both analytics backends (CONTRACT §14).
func TestServeLogsCacheWritesAndReasoning(t *testing.T) {
	onEachBackend(t, testServeLogsCacheWrites)
}

func testServeLogsCacheWrites(t *testing.T) {
	nano := func(usd float64) money.PerMTok { return money.FromFloat(usd) }
	sonnet := [5]money.PerMTok{nano(3), nano(0.30), nano(3.75), nano(6), nano(15)}
	cases := []costCase{
		{"anthropic/claude-sonnet-4-5", false, providertest.UsageDetail{CacheRead: 1000, CacheWrite: 3000, CacheWrite1h: 1000}, sonnet, "", ""},
		{"anthropic/claude-sonnet-4-5", true, providertest.UsageDetail{CacheRead: 512, CacheWrite: 2048, CacheWrite1h: 2048}, sonnet, "", ""},
		{"openai/gpt-5", false, providertest.UsageDetail{CacheRead: 1024, Reasoning: 300},
			[5]money.PerMTok{nano(1.25), nano(0.125), nano(1.25), nano(1.25), nano(10)}, "", ""},
		{"openai/gpt-5", true, providertest.UsageDetail{CacheRead: 2048, Reasoning: 700},
			[5]money.PerMTok{nano(1.25), nano(0.125), nano(1.25), nano(1.25), nano(10)}, "", ""},
		{"google/gemini-2.5-flash", false, providertest.UsageDetail{CacheRead: 500, Reasoning: 1500},
			[5]money.PerMTok{nano(0.30), nano(0.03), nano(0.30), nano(0.30), nano(2.50)}, "", ""},
		{"google/gemini-2.5-flash", true, providertest.UsageDetail{Reasoning: 900},
			[5]money.PerMTok{nano(0.30), nano(0.03), nano(0.30), nano(0.30), nano(2.50)}, "", ""},
		// Bedrock publishes no one-hour write price: the five-minute one.
		{"bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0", false, providertest.UsageDetail{CacheRead: 700, CacheWrite: 1500},
			[5]money.PerMTok{nano(3), nano(0.30), nano(3.75), nano(3.75), nano(15)}, "", ""},
		{"bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0", true, providertest.UsageDetail{CacheRead: 300, CacheWrite: 900},
			[5]money.PerMTok{nano(3), nano(0.30), nano(3.75), nano(3.75), nano(15)}, "", ""},
		// Cohere publishes no cached-input price: the input price.
		{"cohere/command-a-03-2025", true, providertest.UsageDetail{CacheRead: 400},
			[5]money.PerMTok{nano(2.50), nano(2.50), nano(2.50), nano(2.50), nano(10)}, "", ""},
		// The native doors: Anthropic Messages and OpenAI Responses.
		{"anthropic/claude-sonnet-4-5", true, providertest.UsageDetail{CacheRead: 100, CacheWrite: 4000, CacheWrite1h: 2500}, sonnet,
			"/anthropic/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":64,"stream":%t,"messages":[{"role":"user","content":"count the words here"}]}`},
		{"openai/gpt-5", false, providertest.UsageDetail{CacheRead: 1536, Reasoning: 256},
			[5]money.PerMTok{nano(1.25), nano(0.125), nano(1.25), nano(1.25), nano(10)},
			"/openai/responses", `{"model":"gpt-5","stream":%t,"input":"count the words here"}`},
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, mockURL, base := startMockServe(t, ctx)
	_, token := serveGateway(t, base, mockURL, `{"slug":"prod"}`, "cost",
		e2eProvider{Provider: "anthropic", key: e2eAnthropicKey}, e2eProvider{Provider: "google", key: e2eGoogleKey},
		e2eProvider{Provider: "cohere", key: e2eCohereKey}, e2eProvider{Provider: "bedrock", key: providertest.MockSecretAccessKey,
			options: fmt.Sprintf(`{"region":"us-east-1","access_key_id":%q}`, providertest.MockAccessKeyID)})
	url := base + "/v1/acme/prod/compat/chat/completions"
	before := len(logsOf(t, base))

	steps := make([]providertest.Step, len(cases))
	for i, c := range cases {
		steps[i] = providertest.Step{Detail: c.detail}
	}
	mock.Script(steps...)
	for _, c := range cases {
		body, to := fmt.Sprintf(`{"model":%q,"stream":%t,"messages":[{"role":"user","content":"count the words here"}]}`, c.model, c.stream), url
		if c.door != "" {
			body, to = fmt.Sprintf(c.body, c.stream), base+"/v1/acme/prod"+c.door
		}
		if s := postJSON(t, to, token, body); s != 200 {
			t.Fatalf("%s (stream %t): status %d", c.model, c.stream, s)
		}
	}

	var logs []logRecord
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		logs = logsOf(t, base)
		if len(logs) >= before+len(cases) || time.Now().After(deadline) {
			break
		}
	}
	if len(logs) < before+len(cases) {
		t.Fatalf("%d logs, want at least %d", len(logs), before+len(cases))
	}
	// The list is newest first; the requests of the cases are the newest
	// (the probe of waitServing may be logged after before was read).
	for i, c := range cases {
		r := logs[len(cases)-1-i]
		name := fmt.Sprintf("%s (stream %t)", c.model, c.stream)
		if "/"+r.Model != c.model[len(r.Provider):] || r.Status != 200 {
			t.Fatalf("%s: log %+v is not of this request", name, r)
		}
		d := c.detail
		if r.CachedTokens != int64(d.CacheRead) || r.CacheWriteTokens != int64(d.CacheWrite) ||
			r.CacheWrite1hTokens != int64(d.CacheWrite1h) || r.ReasoningTokens != int64(d.Reasoning) {
			t.Errorf("%s: logged cache read %d, write %d (1h %d), reasoning %d; want %+v", name,
				r.CachedTokens, r.CacheWriteTokens, r.CacheWrite1hTokens, r.ReasoningTokens, d)
		}
		if r.TokensIn <= int64(d.CacheRead+d.CacheWrite) || r.TokensOut <= int64(d.Reasoning) {
			t.Errorf("%s: tokens in %d, out %d do not include the cache (%d) and the reasoning (%d)", name,
				r.TokensIn, r.TokensOut, d.CacheRead+d.CacheWrite, d.Reasoning)
		}
		p := c.prices
		plain := r.TokensIn - r.CachedTokens - r.CacheWriteTokens
		nanoMTok := plain*int64(p[0]) + r.CachedTokens*int64(p[1]) + (r.CacheWriteTokens-r.CacheWrite1hTokens)*int64(p[2]) +
			r.CacheWrite1hTokens*int64(p[3]) + r.TokensOut*int64(p[4])
		if want := money.USD(nanoMTok / 1_000_000); r.CostUSD != want {
			t.Errorf("%s: cost %d nano-dollars, want %d", name, r.CostUSD, want)
		}
		// GraphQL reads the same record.
		q, _ := json.Marshal(map[string]string{"query": `{ log(id: "` + r.ID + `") { cachedTokens cacheWriteTokens cacheWrite1hTokens reasoningTokens costUsd } }`})
		out := call(t, base, "POST", "/admin/graphql", string(q), 200)
		g, _ := out["data"].(map[string]any)["log"].(map[string]any)
		gotGQL := [5]float64{}
		for i, k := range []string{"cachedTokens", "cacheWriteTokens", "cacheWrite1hTokens", "reasoningTokens", "costUsd"} {
			gotGQL[i], _ = g[k].(float64)
		}
		wantGQL := [5]float64{float64(r.CachedTokens), float64(r.CacheWriteTokens), float64(r.CacheWrite1hTokens),
			float64(r.ReasoningTokens), r.CostUSD.Float()}
		if gotGQL != wantGQL {
			t.Errorf("%s: GraphQL log %v (%v), want %v", name, gotGQL, out, wantGQL)
		}
	}
}

// logRecord is what the test reads of a log of GET /admin/v1/logs.
type logRecord struct {
	ID                 string    `json:"id"`
	Provider           string    `json:"provider"`
	Model              string    `json:"model"`
	Status             int       `json:"status"`
	TokensIn           int64     `json:"tokens_in"`
	TokensOut          int64     `json:"tokens_out"`
	CachedTokens       int64     `json:"cached_tokens"`
	CacheWriteTokens   int64     `json:"cache_write_tokens"`
	CacheWrite1hTokens int64     `json:"cache_write_1h_tokens"`
	ReasoningTokens    int64     `json:"reasoning_tokens"`
	CostUSD            money.USD `json:"cost_usd"`
}

// logsOf lists the tenant's logs, newest first.
func logsOf(t *testing.T, base string) []logRecord {
	t.Helper()
	raw, err := json.Marshal(call(t, base, "GET", "/admin/v1/logs?tenant=acme&limit=1000", "", 200)["data"])
	if err != nil {
		t.Fatal(err)
	}
	var out []logRecord
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
