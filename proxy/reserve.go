package proxy

import (
	"context"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/proxy/ratelimit"
)

// What a request reserves before it is forwarded (CONTRACT §14, "The
// reservation is a real bound"; docs/governance.md "Reservation"): its
// worst case in tokens — the prompt's tokens at most and the output's at
// most — priced against its budgets and counted against its
// tokens-per-minute limits, then trued up to the real usage when it ends.
//
// The prompt is counted with the tokenizer when a hard budget or a
// tokens-per-minute limit applies, which is what needs a bound; counting
// costs CPU (tokenize.Counter caches the counts of texts seen before), so
// a request held to soft budgets only keeps the cheap bound of its body's
// size. Under a hard budget a request without a maximum output gets one:
// the upstream is told to stop at the output reserved (admission.capOut,
// sent as providers.Request.MaxOutputTokens).

// defaultCompletionTokens is the output reserved per choice for a legacy
// completion without max_tokens: OpenAI's (and vLLM's) default for
// /v1/completions, which the upstream is then told explicitly under a
// hard budget.
const defaultCompletionTokens = 16

// imagePartTokens is the prompt tokens reserved per image of a message:
// above what any provider bills one image (OpenAI's largest high-detail
// image about 1,500 tokens, GPT-4.1 mini's about 2,500, Anthropic's about
// 1,600, Gemini's 258 per tile).
const imagePartTokens = 4096

// countedPromptBytes bounds the text one request has encoded for its
// reservation: 256 KiB, some 64k tokens and at most about 0.1 s of CPU
// when none of it was counted before. The text past it counts one token
// per byte — a bound for any byte-level tokenizer (a token is at least a
// byte) — rather than an extrapolation a crafted prompt could beat.
const countedPromptBytes = 256 << 10

// promptMargin adds a quarter to the tokens the tokenizer counted: it has
// OpenAI's encodings, and other vendors' tokenizers count some 10–20 %
// more on English text.
const promptMargin = 4 // tokens/promptMargin more

// bound is a request's worst case in tokens.
type bound struct {
	// prompt is the prompt's tokens at most.
	prompt int64
	// perChoice is the completion tokens reserved per choice: max_tokens,
	// or the default of the operation; 0 for embeddings.
	perChoice int64
	// choices is n (at least 1).
	choices int64
}

// tokens is the request's worst case in tokens: the tokens-per-minute
// reservation.
func (b bound) tokens() int64 { return b.prompt + b.perChoice*b.choices }

// tpmCost is what the request reserves against a tokens-per-minute limit:
// its worst case, or the whole limit when that is less (the request then
// needs an empty window, and is trued up when it ends), so that no request
// is refused for ever.
func (b bound) tpmCost(limit int) int {
	return int(min(b.tokens(), int64(limit)))
}

// worstCost is the most the request can cost on any of its targets.
// Unpriced targets cost 0.
func (b bound) worstCost(c *call, p *plan) money.USD {
	var worst money.USD
	for _, t := range p.targets {
		if pr, ok := c.snap.Price(t.Provider, t.Model); ok {
			worst = max(worst, worstCostAt(pr, b.prompt, b.perChoice*b.choices))
		}
	}
	return worst
}

// reservation computes the worst case of a request held to the rate
// limits of scopes and to budgets, and under a hard budget sets the
// upstream cap of a request without a maximum output.
func (h *Inference) reservation(c *call, p *plan, scopes []limitScope, budgets []budget.Limit) bound {
	b := bound{choices: max(c.in.n, 1)}
	switch c.route.op {
	case llm.OpEmbeddings:
	case llm.OpCompletions:
		b.perChoice = defaultCompletionTokens
	default:
		b.perChoice = defaultMaxTokens
	}
	if c.in.maxTokens > 0 && c.route.op != llm.OpEmbeddings {
		b.perChoice = c.in.maxTokens
	}
	hard, tpm := false, false
	for _, l := range budgets {
		hard = hard || l.Hard
	}
	for _, s := range scopes {
		tpm = tpm || s.rl.TokensPerMinute != nil
	}
	switch {
	case hard || tpm:
		b.prompt = h.promptBound(c, p)
	case len(budgets) > 0:
		b.prompt = int64((len(c.body) + promptBytesPerToken - 1) / promptBytesPerToken)
	}
	if hard && c.in.maxTokens == 0 {
		c.lim.capOut = b.perChoice
	}
	return b
}

// promptBound counts the tokens of what the provider reads of the
// request with the tokenizer of its first target's model: the messages
// (texts, names, tool calls; images at imagePartTokens, other media at
// one token per 3 bytes of their JSON), the tool and function
// definitions and the response_format schema of a chat, the prompt of a
// legacy completion, the input of embeddings; the tokens counted plus
// promptMargin, and past countedPromptBytes one token per byte.
func (h *Inference) promptBound(c *call, p *plan) int64 {
	model := c.in.model
	if len(p.targets) > 0 {
		model = p.targets[0].Model
	}
	t := tally{tok: h.cfg.Tokenizer, model: model, limit: countedPromptBytes, bound: true}
	ps := h.parsers.Get()
	defer h.parsers.Put(ps)
	v, err := ps.ParseBytes(c.body)
	if err != nil { // parseBody accepted it: does not happen
		return int64(len(c.body))
	}
	switch c.route.op {
	case llm.OpChat:
		for _, m := range v.GetArray("messages") {
			t.extra += tokensPerMessage
			t.text(m.GetStringBytes("name"))
			contentBound(m.Get("content"), &t)
			t.text(m.GetStringBytes("refusal"))
			t.text(m.GetStringBytes("reasoning_content"))
			for _, tc := range m.GetArray("tool_calls") {
				t.text(tc.GetStringBytes("function", "name"))
				t.text(tc.GetStringBytes("function", "arguments"))
			}
		}
		t.extra += tokensPerReply
		for _, f := range [...]string{"tools", "functions", "response_format"} {
			if x := v.Get(f); x != nil && x.Type() != fastjson.TypeNull {
				t.text(x.MarshalTo(nil)) // schemas: their JSON is a close upper bound
			}
		}
	case llm.OpCompletions:
		inputTexts(v.Get("prompt"), &t)
	case llm.OpEmbeddings:
		inputTexts(v.Get("input"), &t)
	default:
		// A native door's body (Responses, Messages) goes on as it came:
		// all of its text is a bound of what the provider reads.
		t.text(c.body)
	}
	return t.total() + t.tokens/promptMargin
}

// contentBound tallies a message's content: a string, or parts — text
// and refusal parts by their text, images at imagePartTokens, any other
// part (audio, files) at one token per 3 bytes of its JSON.
func contentBound(ct *fastjson.Value, t *tally) {
	switch {
	case ct == nil:
	case ct.Type() == fastjson.TypeString:
		b, _ := ct.StringBytes()
		t.text(b)
	case ct.Type() == fastjson.TypeArray:
		for _, part := range ct.GetArray() {
			switch string(part.GetStringBytes("type")) {
			case "text":
				t.text(part.GetStringBytes("text"))
			case "refusal":
				t.text(part.GetStringBytes("refusal"))
			case "image_url", "image", "input_image":
				t.extra += imagePartTokens
			default:
				t.extra += int64((len(part.MarshalTo(nil)) + promptBytesPerToken - 1) / promptBytesPerToken)
			}
		}
	}
}

// tpmHold is a tokens-per-minute reservation: n tokens counted in key's
// window at admission.
type tpmHold struct {
	key string
	n   int
}

// takeBackTokens takes back the tokens-per-minute reservations of a
// request refused by a later check.
func (h *Inference) takeBackTokens(ctx context.Context, c *call) {
	for _, r := range c.lim.tpm {
		if err := h.cfg.Limiter.Add(ctx, r.key, -r.n, c.lim.at); err != nil {
			h.log.Warn("rate limiter failed to take back a reservation", "key", r.key, "err", err)
		}
	}
	c.lim.tpm = c.lim.tpm[:0]
}

// trueUpTokens replaces the tokens-per-minute reservations of a request
// that ended with its real tokens (prompt and completion, 0 for a request
// that reached no answer).
func (h *Inference) trueUpTokens(ctx context.Context, c *call, u llm.Usage) {
	if len(c.lim.tpm) == 0 {
		return
	}
	actual := int(u.PromptTokens + u.CompletionTokens)
	now := h.cfg.Now()
	for _, r := range c.lim.tpm {
		if err := ratelimit.TrueUp(ctx, h.cfg.Limiter, r.key, r.n, actual, c.lim.at, now); err != nil {
			h.log.Warn("rate limiter failed to count tokens", "key", r.key, "err", err)
		}
	}
	c.lim.tpm = nil
}

// cutText returns the longest prefix of b of at most n bytes that ends on
// a rune boundary.
func cutText(b []byte, n int64) []byte {
	if int64(len(b)) <= n {
		return b
	}
	i := int(n)
	for i > 0 && !utf8.RuneStart(b[i]) {
		i--
	}
	return b[:i]
}
