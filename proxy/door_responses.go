package proxy

import (
	"encoding/json"
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/jsonstr"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
)

// responsesDoor is the OpenAI Responses door of /compat/responses
// (CONTRACT §12): stateless, any provider, translated. Like messagesDoor
// it translates at the door: decode turns the client's Responses body
// into an OpenAI chat body (llm.DecodeOpenAIResponses,
// llm.EncodeOpenAIChat), which the pipeline forwards, rules, caches and
// logs as the chat door's; answers and stream chunks come back
// OpenAI-chat-shaped and the door writes them as a Responses `response`
// object and Responses stream events. Errors keep the shape of §3, which
// is OpenAI's, so the OpenAI SDK raises them.
//
// One responsesDoor is made per request (doorFor): it holds what the
// response object echoes of the request and the stream's translation.
type responsesDoor struct {
	// echo holds the request fields the response object repeats.
	echo responsesEcho
	// The answer: ids, output items so far, finish reason and usage.
	id, model []byte
	created   int64
	items     []responsesItem
	finish    string
	usage     llm.Usage
	reasoning int64 // output_tokens_details.reasoning_tokens
	// tier is the service_tier the provider answered with, if any.
	tier []byte
	// The stream's state: started once response.created is written; seq
	// is the next sequence_number; open is the index of the open item in
	// items (-1 none after start) and tool its chat tool call index.
	started bool
	seq     int64
	open    int
	tool    int64
	// encrypted says the client asked for reasoning items'
	// encrypted_content (include).
	encrypted bool
}

var _ door = (*responsesDoor)(nil)

// responsesEcho is the request as the response object repeats it: each
// field the client's JSON value, nil when absent.
type responsesEcho struct {
	Instructions      json.RawMessage
	Tools             json.RawMessage
	ToolChoice        json.RawMessage
	Temperature       json.RawMessage
	TopP              json.RawMessage
	MaxOutputTokens   json.RawMessage
	Metadata          json.RawMessage
	ParallelToolCalls json.RawMessage
}

// responsesItem is one output item: a message with its text, the
// model's reasoning (a provider's reasoning_content or thinking block)
// with its text as the summary, or a function call with its arguments.
type responsesItem struct {
	kind                 byte   // itemMessage, itemReasoning or itemCall
	id, callID, name, tx []byte // tx: the text, or the arguments
	// part says the item has its content part (a message's output_text,
	// reasoning's summary_text): it has text.
	part bool
	// enc is reasoning's encrypted_content: the provider's signed
	// thinking (llm.AppendThinkingContent), nil when it gave none.
	enc []byte
	// lp are a message's logprobs, the JSON elements comma-joined.
	lp []byte
}

// The output item kinds.
const (
	itemMessage   = 'm'
	itemReasoning = 'r'
	itemCall      = 'f'
)

func (d *responsesDoor) decode(p *fastjson.Parser, body []byte, op llm.Operation) (inbound, *apierr.Error) {
	// The client's own bytes pass the gateway's body checks first.
	raw, e := parseBody(p, body, llm.OpResponses)
	if e != nil {
		return raw, e
	}
	r, err := llm.DecodeOpenAIResponses(body)
	if err != nil {
		return raw, responsesTranslateError(err)
	}
	chat, err := llm.EncodeOpenAIChat(r)
	if err != nil {
		return raw, responsesTranslateError(err)
	}
	// The body has been parsed once already: this cannot fail.
	if v, err := p.ParseBytes(body); err == nil {
		d.readEcho(v)
	}
	in, e := parseBody(p, chat, op)
	if e != nil {
		return in, e
	}
	in.body = chat
	// Answers keep their signed thinking (the chat body's thinking_blocks),
	// which the door writes as reasoning items.
	in.thinkingBlocks = true
	if budget := thinkingBudget(r); llm.HasThinking(r) || budget > 0 {
		// The chat body drops the thinking of earlier turns and has an
		// effort where Anthropic and Claude on Bedrock take a budget: the
		// codecs that read them get them from the neutral request.
		n, err := llm.DecodeOpenAIChat(chat)
		if err != nil {
			return in, responsesTranslateError(err)
		}
		llm.CarryThinking(n, r)
		if budget > 0 {
			n.Reasoning = &llm.Reasoning{Effort: r.Reasoning.Effort, BudgetTokens: &budget}
		}
		in.neutral = n
	}
	return in, nil
}

// effortBudgets are the thinking budgets of the reasoning efforts, for
// the providers that take a budget (Anthropic, Claude on Bedrock): the
// Gemini codec's mapping (Google's), and Anthropic's least budget for
// minimal.
var effortBudgets = map[string]int64{"minimal": 1024, "low": 1024, "medium": 8192, "high": 24576}

// Anthropic's bounds on a thinking budget: at least minThinkingBudget,
// and below max_tokens, which is max_output_tokens or, when the client
// gave none, the codec's default (anthropic.DefaultMaxTokens).
const (
	minThinkingBudget      = 1024
	defaultAnthropicTokens = 4096
)

// thinkingBudget is the thinking budget of r's reasoning.effort: the
// effort's, cut to leave the answer itself minThinkingBudget tokens of
// max_tokens; 0 when there is no effort or no room for a budget (an
// Anthropic target then refuses reasoning_effort, naming it).
func thinkingBudget(r *llm.Request) int64 {
	if r.Reasoning == nil {
		return 0
	}
	b, ok := effortBudgets[r.Reasoning.Effort]
	if !ok {
		return 0
	}
	room := int64(defaultAnthropicTokens)
	if r.MaxOutputTokens != nil {
		room = *r.MaxOutputTokens
	}
	if b = min(b, room-minThinkingBudget); b < minThinkingBudget {
		return 0
	}
	return b
}

// wantsEncrypted reports whether the client asked for reasoning items'
// encrypted_content.
func (d *responsesDoor) wantsEncrypted() bool { return d.encrypted }

// readEcho copies from v, the client's body, the fields the response
// object repeats, and whether include asks for encrypted_content.
func (d *responsesDoor) readEcho(v *fastjson.Value) {
	e := &d.echo
	for _, f := range [...]struct {
		key string
		dst *json.RawMessage
	}{
		{"instructions", &e.Instructions}, {"tool_choice", &e.ToolChoice}, {"temperature", &e.Temperature},
		{"top_p", &e.TopP}, {"max_output_tokens", &e.MaxOutputTokens}, {"metadata", &e.Metadata},
		{"parallel_tool_calls", &e.ParallelToolCalls},
	} {
		if x := v.Get(f.key); x != nil {
			*f.dst = x.MarshalTo(nil)
		}
	}
	e.Tools = echoTools(v.GetArray("tools"))
	for _, x := range v.GetArray("include") {
		if string(x.GetStringBytes()) == "reasoning.encrypted_content" {
			d.encrypted = true
		}
	}
}

// echoTools is the request's function tools as a response lists them:
// each with its description, parameters and strict (null when absent);
// nil when the client gave none.
func echoTools(tools []*fastjson.Value) json.RawMessage {
	if len(tools) == 0 {
		return nil
	}
	var b []byte
	for i, t := range tools {
		if i > 0 {
			b = append(b, ',')
		} else {
			b = append(b, '[')
		}
		for k, key := range [...]string{"type", "name", "description", "parameters", "strict"} {
			if k > 0 {
				b = append(b, ',')
			} else {
				b = append(b, '{')
			}
			b = append(b, '"')
			b = append(b, key...)
			b = append(b, `":`...)
			if x := t.Get(key); x != nil {
				b = x.MarshalTo(b)
			} else {
				b = append(b, "null"...)
			}
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// responsesTranslateError is the 400 of a body the door cannot translate.
func responsesTranslateError(err error) *apierr.Error {
	if _, ok := err.(*llm.SchemaError); ok {
		return apierr.New(400, apierr.CodeInvalidRequest, "the request does not fit the Responses schema: %v", err)
	}
	return translateError(err)
}

func (d *responsesDoor) errorBody(e *apierr.Error) []byte { return e.Body() }

// answer writes an OpenAI chat.completion as a Responses response object.
func (d *responsesDoor) answer(body []byte) []byte {
	p := providers.BodyParsers.Get()
	defer providers.BodyParsers.Put(p)
	v, err := p.ParseBytes(body)
	if err != nil {
		return body
	}
	d.setAnswer(v)
	ch := v.Get("choices", "0")
	m := ch.Get("message")
	if tb := m.GetArray("thinking_blocks"); len(tb) > 0 {
		// A codec's signed thinking (providers.Request.ThinkingBlocks):
		// one reasoning item per block.
		for _, b := range tb {
			it := responsesItem{kind: itemReasoning, id: d.itemID("rs_", len(d.items))}
			if string(b.GetStringBytes("type")) == "redacted_thinking" {
				it.enc = llm.AppendThinkingContent(nil, &llm.Part{Kind: llm.PartRedactedThinking, Data: string(b.GetStringBytes("data"))})
			} else {
				it.tx = append(it.tx, b.GetStringBytes("thinking")...)
				it.enc = llm.AppendThinkingContent(nil, &llm.Part{Kind: llm.PartThinking, Text: string(it.tx), Signature: string(b.GetStringBytes("signature"))})
			}
			it.part = len(it.tx) > 0
			d.items = append(d.items, it)
		}
	} else if t := m.GetStringBytes("reasoning_content"); len(t) > 0 {
		d.items = append(d.items, responsesItem{kind: itemReasoning, id: d.itemID("rs_", len(d.items)), tx: append([]byte(nil), t...), part: true})
	}
	if t := m.GetStringBytes("content"); len(t) > 0 {
		d.items = append(d.items, responsesItem{kind: itemMessage, id: d.itemID("msg_", len(d.items)), tx: append([]byte(nil), t...), part: true,
			lp: appendLogprobs(nil, ch)})
	}
	for _, tc := range m.GetArray("tool_calls") {
		id := tc.GetStringBytes("id")
		d.items = append(d.items, responsesItem{kind: itemCall, id: append([]byte("fc_"), id...), callID: append([]byte(nil), id...),
			name: append([]byte(nil), tc.GetStringBytes("function", "name")...), tx: append([]byte(nil), tc.GetStringBytes("function", "arguments")...)})
	}
	d.finish = string(ch.GetStringBytes("finish_reason"))
	return d.appendResponse(make([]byte, 0, len(body)+512), true)
}

// setAnswer takes the id, model, creation time and usage of a chat
// completion or chunk.
func (d *responsesDoor) setAnswer(v *fastjson.Value) {
	if d.id == nil {
		d.id = append([]byte("resp_"), v.GetStringBytes("id")...)
		d.model = append([]byte(nil), v.GetStringBytes("model")...)
		d.created = v.GetInt64("created")
	}
	if t := v.GetStringBytes("service_tier"); len(t) > 0 {
		d.tier = append(d.tier[:0], t...)
	}
	if u := v.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		d.usage = usageOf(u)
		d.usage.CacheCreationTokens = u.GetInt64("prompt_tokens_details", "cache_creation_tokens")
		d.reasoning = u.GetInt64("completion_tokens_details", "reasoning_tokens")
	}
}

// itemID is the id of the output item at index i.
func (d *responsesDoor) itemID(prefix string, i int) []byte {
	b := append([]byte(prefix), d.id[min(len(d.id), len("resp_")):]...)
	b = append(b, '_')
	return strconv.AppendInt(b, int64(i), 10)
}

// status is the response's status and incomplete reason.
func (d *responsesDoor) status() (status, reason string) {
	switch d.finish {
	case "length":
		return "incomplete", "max_output_tokens"
	case "content_filter":
		return "incomplete", "content_filter"
	}
	return "completed", ""
}

// appendResponse appends the response object: in progress with no output
// (done false), or finished with the items and the usage.
func (d *responsesDoor) appendResponse(dst []byte, done bool) []byte {
	status, reason := "in_progress", ""
	if done {
		status, reason = d.status()
	}
	dst = append(dst, `{"id":`...)
	dst = jsonstr.Append(dst, d.id)
	dst = append(dst, `,"object":"response","created_at":`...)
	dst = strconv.AppendInt(dst, d.created, 10)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","error":null,"incomplete_details":`...)
	if reason != "" {
		dst = append(dst, `{"reason":"`...)
		dst = append(dst, reason...)
		dst = append(dst, `"}`...)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"model":`...)
	dst = jsonstr.Append(dst, d.model)
	dst = append(dst, `,"output":[`...)
	if done {
		for i := range d.items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = d.items[i].appendTo(dst, "completed", d.wantsEncrypted())
		}
	}
	dst = append(dst, ']')
	e := &d.echo
	dst = appendEcho(dst, "instructions", e.Instructions, "null")
	dst = appendEcho(dst, "tools", e.Tools, "[]")
	dst = appendEcho(dst, "tool_choice", e.ToolChoice, `"auto"`)
	dst = appendEcho(dst, "temperature", e.Temperature, "null")
	dst = appendEcho(dst, "top_p", e.TopP, "null")
	dst = appendEcho(dst, "max_output_tokens", e.MaxOutputTokens, "null")
	dst = appendEcho(dst, "metadata", e.Metadata, "{}")
	dst = appendEcho(dst, "parallel_tool_calls", e.ParallelToolCalls, "true")
	dst = append(dst, `,"store":false`...)
	if len(d.tier) > 0 {
		dst = append(dst, `,"service_tier":`...)
		dst = jsonstr.Append(dst, d.tier)
	}
	if done {
		dst = append(dst, `,"usage":`...)
		dst = d.appendUsage(dst)
	}
	return append(dst, '}')
}

// appendEcho appends ,"key":v, or def when v is absent or null.
func appendEcho(dst []byte, key string, v json.RawMessage, def string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	if len(v) == 0 || string(v) == "null" {
		return append(dst, def...)
	}
	return append(dst, v...)
}

// appendUsage appends the usage in the Responses shape.
func (d *responsesDoor) appendUsage(dst []byte) []byte {
	u := d.usage
	total := u.TotalTokens
	if total == 0 {
		total = u.PromptTokens + u.CompletionTokens
	}
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, u.PromptTokens, 10)
	dst = append(dst, `,"input_tokens_details":{"cached_tokens":`...)
	dst = strconv.AppendInt(dst, u.CachedTokens, 10)
	dst = append(dst, `,"cache_write_tokens":`...)
	dst = strconv.AppendInt(dst, u.CacheCreationTokens, 10)
	dst = append(dst, `},"output_tokens":`...)
	dst = strconv.AppendInt(dst, u.CompletionTokens, 10)
	dst = append(dst, `,"output_tokens_details":{"reasoning_tokens":`...)
	dst = strconv.AppendInt(dst, d.reasoning, 10)
	dst = append(dst, `},"total_tokens":`...)
	dst = strconv.AppendInt(dst, total, 10)
	return append(dst, '}')
}

// appendTo appends the item as an output item of status; an item in
// progress has no content yet. enc says whether reasoning carries its
// encrypted_content (null when the provider gave none).
func (it *responsesItem) appendTo(dst []byte, status string, enc bool) []byte {
	switch it.kind {
	case itemCall:
		dst = append(dst, `{"type":"function_call","id":`...)
		dst = jsonstr.Append(dst, it.id)
		dst = append(dst, `,"call_id":`...)
		dst = jsonstr.Append(dst, it.callID)
		dst = append(dst, `,"name":`...)
		dst = jsonstr.Append(dst, it.name)
		dst = append(dst, `,"arguments":`...)
		if status == "in_progress" {
			dst = append(dst, `""`...)
		} else {
			dst = jsonstr.Append(dst, it.tx)
		}
		dst = append(dst, `,"status":"`...)
		dst = append(dst, status...)
		return append(dst, `"}`...)
	case itemReasoning:
		dst = append(dst, `{"type":"reasoning","id":`...)
		dst = jsonstr.Append(dst, it.id)
		dst = append(dst, `,"status":"`...)
		dst = append(dst, status...)
		dst = append(dst, `","summary":[`...)
		if status != "in_progress" && it.part {
			dst = it.appendPart(dst, it.tx)
		}
		dst = append(dst, ']')
		if enc {
			dst = append(dst, `,"encrypted_content":`...)
			if len(it.enc) > 0 && status != "in_progress" {
				dst = jsonstr.Append(dst, it.enc)
			} else {
				dst = append(dst, "null"...)
			}
		}
		return append(dst, '}')
	}
	dst = append(dst, `{"type":"message","id":`...)
	dst = jsonstr.Append(dst, it.id)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","role":"assistant","content":[`...)
	if status != "in_progress" {
		dst = it.appendPart(dst, it.tx)
	}
	return append(dst, "]}"...)
}

// appendPart appends the content part of a message (output_text, with
// its logprobs) or the summary part of reasoning (summary_text) holding
// text.
func (it *responsesItem) appendPart(dst, text []byte) []byte {
	if it.kind == itemReasoning {
		dst = append(dst, `{"type":"summary_text","text":`...)
		dst = jsonstr.Append(dst, text)
		return append(dst, '}')
	}
	dst = append(dst, `{"type":"output_text","text":`...)
	dst = jsonstr.Append(dst, text)
	dst = append(dst, `,"annotations":[],"logprobs":[`...)
	if text != nil {
		dst = append(dst, it.lp...)
	}
	return append(dst, "]}"...)
}

// appendLogprobs appends the token logprobs of a chat choice (or chunk
// choice), logprobs.content, as comma-joined JSON elements after those
// dst holds: OpenAI's chat and Responses logprobs have the same shape
// (token, logprob, bytes, top_logprobs).
func appendLogprobs(dst []byte, ch *fastjson.Value) []byte {
	for _, lp := range ch.GetArray("logprobs", "content") {
		if len(dst) > 0 {
			dst = append(dst, ',')
		}
		dst = lp.MarshalTo(dst)
	}
	return dst
}
