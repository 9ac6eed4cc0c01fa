package bedrock

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"
	"golang.org/x/sync/errgroup"

	"github.com/sluicehq/sluice/internal/jsonstr"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
)

// Embeddings through InvokeModel, for the two embedding model families on
// Bedrock whose bodies are known:
//
//	amazon.titan-embed-*  {"inputText":…}                → {"embedding":[…],"inputTextTokenCount":n}
//	cohere.embed-*        {"texts":[…],"input_type":…}   → {"embeddings":[[…],…]} (or {"float":[[…]]})
//
// Titan embeds one text per call, so a batch becomes several calls, a few
// at a time; Cohere takes up to 96 texts per call. The token count comes
// from the X-Amzn-Bedrock-Input-Token-Count header Bedrock sends with
// every InvokeModel answer, or from Titan's body.

const (
	// maxInputs bounds the texts of one request, as OpenAI does.
	maxInputs = 2048
	// titanParallel is how many Titan calls of one request run at
	// once: enough to make a batch fast, few enough not to trip the
	// account's request rate on its own.
	titanParallel = 8
	// cohereBatch is the most texts Cohere on Bedrock takes per call.
	cohereBatch = 96
	// tokenHeader carries InvokeModel's input token count.
	tokenHeader = "X-Amzn-Bedrock-Input-Token-Count"
)

type embedFamily uint8

const (
	titan embedFamily = iota + 1
	cohere
)

// embedJob is an embeddings request, checked and planned.
type embedJob struct {
	family     embedFamily
	texts      []string
	base64     bool
	dimensions int64 // 0: the model's default
}

// embedPlan reads an OpenAI embeddings request for req.Model. A
// model outside the two families, token-array input or an unsupported
// option is an *Error 400.
func embedPlan(req *providers.Request) (*embedJob, error) {
	var job embedJob
	model := strings.ToLower(req.Model)
	switch {
	case strings.Contains(model, "amazon.titan-embed"):
		job.family = titan
	case strings.Contains(model, "cohere.embed"):
		job.family = cohere
	default:
		return nil, bedrockError("serves embeddings only for the amazon.titan-embed and cohere.embed model families, not %q", req.Model)
	}
	var in struct {
		Input          json.RawMessage `json:"input"`
		EncodingFormat *string         `json:"encoding_format"`
		Dimensions     *float64        `json:"dimensions"`
	}
	if err := json.Unmarshal(req.Body, &in); err != nil {
		return nil, decodeError(err)
	}
	raw := bytes.TrimSpace(in.Input)
	switch {
	case null(raw):
		return nil, bedrockError("needs input for embeddings")
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, decodeError(err)
		}
		job.texts = []string{s}
	default:
		if json.Unmarshal(raw, &job.texts) != nil {
			return nil, bedrockError("embeds text only, not token arrays: input must be a string or an array of strings")
		}
	}
	switch {
	case len(job.texts) == 0:
		return nil, bedrockError("needs at least one input for embeddings")
	case len(job.texts) > maxInputs:
		return nil, bedrockError("takes at most %d embeddings inputs per request", maxInputs)
	}
	if in.EncodingFormat != nil {
		switch *in.EncodingFormat {
		case "float":
		case "base64":
			job.base64 = true
		default:
			return nil, bedrockRefusal("does not support encoding_format %q", *in.EncodingFormat)
		}
	}
	if in.Dimensions != nil {
		d := *in.Dimensions
		if d < 1 || d > 1<<16 || d != math.Trunc(d) {
			return nil, bedrockError("needs dimensions to be a positive integer")
		}
		if !strings.Contains(model, "titan-embed-text-v2") && !strings.Contains(model, "cohere.embed-v4") {
			return nil, bedrockRefusal("model %s does not support dimensions", req.Model)
		}
		job.dimensions = int64(d)
	}
	return &job, nil
}

// Embed sends the InvokeModel calls of an embeddings request and answers
// an OpenAI embeddings list.
func (b *Bedrock) Embed(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	job, err := embedPlan(req)
	if err != nil {
		return nil, err
	}
	vectors := make([][]byte, len(job.texts)) // each the JSON of one embedding
	var usage llm.Usage
	if job.family == titan {
		usage, err = b.embedTitan(ctx, req, job, vectors)
	} else {
		usage, err = b.embedCohere(ctx, req, job, vectors)
	}
	if err != nil {
		return nil, err
	}
	n := 128 + len(req.Model)
	for _, v := range vectors {
		n += len(v) + 48
	}
	out := make([]byte, 0, n)
	out = append(out, `{"object":"list","data":[`...)
	for i, v := range vectors {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"object":"embedding","index":`...)
		out = strconv.AppendInt(out, int64(i), 10)
		out = append(out, `,"embedding":`...)
		out = append(out, v...)
		out = append(out, '}')
	}
	out = append(out, `],"model":`...)
	out = jsonstr.Append(out, []byte(req.Model))
	if usage.Present {
		out = append(out, `,"usage":{"prompt_tokens":`...)
		out = strconv.AppendInt(out, usage.PromptTokens, 10)
		out = append(out, `,"total_tokens":`...)
		out = strconv.AppendInt(out, usage.TotalTokens, 10)
		out = append(out, '}')
	}
	return &providers.Response{Body: append(out, '}'), Usage: usage}, nil
}

// embedTitan embeds each text with its own call, titanParallel at
// a time; the first failure cancels the calls not yet sent.
func (b *Bedrock) embedTitan(ctx context.Context, req *providers.Request, job *embedJob, vectors [][]byte) (llm.Usage, error) {
	tokens := make([]int64, len(job.texts))
	known := make([]bool, len(job.texts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(titanParallel)
	for i, text := range job.texts {
		g.Go(func() error {
			body := jsonstr.Append([]byte(`{"inputText":`), []byte(text))
			if job.dimensions > 0 {
				body = append(body, `,"dimensions":`...)
				body = strconv.AppendInt(body, job.dimensions, 10)
			}
			body = append(body, '}')
			ans, err := b.invoke(gctx, req, body)
			if err != nil {
				return err
			}
			p := providers.BodyParsers.Get()
			defer providers.BodyParsers.Put(p)
			v, err := p.ParseBytes(ans.body)
			if err != nil || v.Type() != fastjson.TypeObject {
				return &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
			}
			if vectors[i], err = vector(v.Get("embedding"), job.base64); err != nil {
				return err
			}
			switch {
			case ans.tokensKnown:
				tokens[i], known[i] = ans.tokens, true
			case v.Exists("inputTextTokenCount"):
				tokens[i], known[i] = providers.Count(v, "inputTextTokenCount"), true
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return llm.Usage{}, err
	}
	u := llm.Usage{Present: true}
	for i := range tokens {
		if !known[i] {
			return llm.Usage{}, nil // the proxy estimates instead
		}
		u.PromptTokens += tokens[i]
	}
	u.TotalTokens = u.PromptTokens
	return u, nil
}

// embedCohere embeds the texts in batches of cohereBatch.
func (b *Bedrock) embedCohere(ctx context.Context, req *providers.Request, job *embedJob, vectors [][]byte) (llm.Usage, error) {
	u := llm.Usage{Present: true}
	p := providers.BodyParsers.Get()
	defer providers.BodyParsers.Put(p)
	for start := 0; start < len(job.texts); start += cohereBatch {
		batch := job.texts[start:min(start+cohereBatch, len(job.texts))]
		body := []byte(`{"texts":[`)
		for i, t := range batch {
			if i > 0 {
				body = append(body, ',')
			}
			body = jsonstr.Append(body, []byte(t))
		}
		body = append(body, `],"input_type":"search_document"`...)
		if job.dimensions > 0 {
			body = append(body, `,"output_dimension":`...)
			body = strconv.AppendInt(body, job.dimensions, 10)
		}
		body = append(body, '}')
		ans, err := b.invoke(ctx, req, body)
		if err != nil {
			return llm.Usage{}, err
		}
		v, err := p.ParseBytes(ans.body)
		if err != nil || v.Type() != fastjson.TypeObject {
			return llm.Usage{}, &providers.Error{Status: http.StatusBadGateway, Message: providers.ErrInvalidResponse}
		}
		embs := v.Get("embeddings")
		if embs != nil && embs.Type() == fastjson.TypeObject {
			embs = embs.Get("float") // the answer shape when embedding types are named
		}
		if embs == nil || embs.Type() != fastjson.TypeArray || len(embs.GetArray()) != len(batch) {
			return llm.Usage{}, &providers.Error{Status: http.StatusBadGateway,
				Message: fmt.Sprintf("upstream answered a different number of embeddings than the %d texts sent", len(batch))}
		}
		for i, e := range embs.GetArray() {
			if vectors[start+i], err = vector(e, job.base64); err != nil {
				return llm.Usage{}, err
			}
		}
		if !ans.tokensKnown {
			u.Present = false
		}
		u.PromptTokens += ans.tokens
	}
	if !u.Present {
		return llm.Usage{}, nil // the proxy estimates instead
	}
	u.TotalTokens = u.PromptTokens
	return u, nil
}

// vector returns the JSON of one embedding: the array as Bedrock
// sent it (numbers keep their text), or the base64 string of its
// little-endian float32s, as OpenAI's encoding_format "base64".
func vector(v *fastjson.Value, asBase64 bool) ([]byte, error) {
	if v == nil || v.Type() != fastjson.TypeArray {
		return nil, &providers.Error{Status: http.StatusBadGateway, Message: "upstream answered an embedding that is not an array of numbers"}
	}
	nums := v.GetArray()
	raw := make([]byte, 0, 4*len(nums))
	for _, n := range nums {
		f, err := n.Float64()
		if err != nil {
			return nil, &providers.Error{Status: http.StatusBadGateway, Message: "upstream answered an embedding that is not an array of numbers"}
		}
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(float32(f)))
	}
	if !asBase64 {
		return v.MarshalTo(nil), nil
	}
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(raw))+2)
	out = append(out, '"')
	out = base64.StdEncoding.AppendEncode(out, raw)
	return append(out, '"'), nil
}

// invoked is an InvokeModel answer.
type invoked struct {
	body        []byte
	tokens      int64
	tokensKnown bool
}

// invoke sends one InvokeModel call. It streams the answer, instead of
// using Do, for the token count header, which Do does not return; the
// body is still read whole, up to the client's MaxResponseBytes.
func (b *Bedrock) invoke(ctx context.Context, req *providers.Request, body []byte) (invoked, error) {
	hr, err := b.httpRequest(ctx, req, "invoke", body)
	if err != nil {
		return invoked{}, err
	}
	sr, err := b.c.Stream(ctx, &hr)
	if err != nil {
		return invoked{}, scrubbed(err, req.Cred)
	}
	defer sr.Close()
	limit := b.c.MaxResponseBytes()
	data, err := io.ReadAll(io.LimitReader(sr, int64(limit)+1))
	if err != nil {
		return invoked{}, scrubbed(err, req.Cred)
	}
	if len(data) > limit {
		return invoked{}, &providers.Error{Status: http.StatusBadGateway,
			Message: fmt.Sprintf("the upstream answer is larger than %d bytes", limit)}
	}
	ans := invoked{body: data}
	if h := sr.Header(tokenHeader); len(h) > 0 {
		if n, err := strconv.ParseInt(string(h), 10, 64); err == nil && n >= 0 {
			ans.tokens, ans.tokensKnown = n, true
		}
	}
	return ans, nil
}
