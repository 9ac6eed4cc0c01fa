package proxy

import (
	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/analytics"
)

// Observer is told of every request the pipeline records, at finish, once
// its record is complete (spans included) and before the sink takes it:
// the OTLP exporter (proxy/otlp) and the access log (proxy/accesslog).
// Observe runs on the request's goroutine, so it must return at once: it
// may hand copies of what it needs to a queue, never block on I/O it does
// not bound. It must not keep f, nor anything f points to, after it
// returns: the record then belongs to the sink.
type Observer interface {
	Observe(f *Finished)
}

// Finished is what an Observer learns of a finished request: its record,
// and what the record does not carry. It holds no body: an observer that
// wants the answer's model and finish reasons asks Answer, which reads
// them from the answer without handing its text out.
type Finished struct {
	// Record is the request's record; read only.
	Record *analytics.Record
	// Gateway is the gateway as "tenant/slug", "" for a request refused
	// before its gateway was known.
	Gateway string
	// RequestModel is the model the client asked for (a model id or a
	// route name), "" when the body was not read.
	RequestModel string
	// Traceparent is the W3C traceparent header the client sent, as sent
	// (observers validate it), "" when there was none.
	Traceparent string

	h *Inference
	c *call
}

// observe tells the observers of the finished call c.
func (h *Inference) observe(c *call) {
	f := Finished{Record: c.rec, RequestModel: c.in.model, h: h, c: c}
	if c.gw != nil {
		f.Gateway = c.gw.TenantID + "/" + c.gw.Slug
	}
	switch {
	case c.rec.TraceID == "":
		// No attempt started, so the handler finishes the call and still
		// owns its RequestCtx.
		f.Traceparent = string(c.ctx.Request.Header.Peek("traceparent"))
	case c.traceIn:
		// startAttempts forwards a valid traceparent as it came.
		f.Traceparent = c.trace
	}
	for _, o := range h.cfg.Observers {
		o.Observe(&f)
	}
}

// Answer returns the model the upstream says answered and the finish
// reasons of the answer (OpenAI's finish_reason, Anthropic's stop_reason,
// the Responses API's status), read from the answer the client got: the
// body of a non-streamed request, the kept chunks of a stream. Both are
// empty for a request no provider answered (and for a Finished not made
// by the pipeline, a test's). It parses the answer, so an
// observer calls it only for a request it exports.
func (f *Finished) Answer() (model string, reasons []string) {
	c := f.c
	if c == nil || !c.out.answered {
		return "", nil
	}
	p := f.h.parsers.Get()
	defer f.h.parsers.Put(p)
	if c.stream.sc == nil {
		if v, err := p.ParseBytes(c.out.respBody); err == nil {
			model, reasons = answerFacts(v, model, reasons)
		}
		return model, reasons
	}
	c.stream.sc.each(p, func(v *fastjson.Value) { model, reasons = answerFacts(v, model, reasons) })
	return model, reasons
}

// answerFacts adds what v, an answer or one event of a stream in any of
// the doors' shapes, says of the model that answered and why it ended.
func answerFacts(v *fastjson.Value, model string, reasons []string) (string, []string) {
	if model == "" {
		for _, path := range [][]string{{"model"}, {"message", "model"}, {"response", "model"}} {
			if m := v.GetStringBytes(path...); len(m) > 0 {
				model = string(m)
				break
			}
		}
	}
	for _, ch := range v.GetArray("choices") {
		if r := ch.GetStringBytes("finish_reason"); len(r) > 0 {
			reasons = append(reasons, string(r))
		}
	}
	for _, path := range [][]string{{"stop_reason"}, {"delta", "stop_reason"}} {
		if r := v.GetStringBytes(path...); len(r) > 0 {
			reasons = append(reasons, string(r))
		}
	}
	// The Responses API's status: of a non-streamed answer, or of the
	// stream's response.* events, once it is final.
	r := v.GetStringBytes("response", "status")
	if v.Get("output") != nil {
		r = v.GetStringBytes("status")
	}
	if s := string(r); s != "" && s != "in_progress" && s != "queued" {
		reasons = append(reasons, s)
	}
	return model, reasons
}
