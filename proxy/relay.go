package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/snapshot"
)

// attempt makes one upstream call. On success it has answered the client
// (done is true) and set c.out (or c.err, when the response rules blocked
// the answer); an error means nothing reached the client, so the caller
// may retry.
func (h *Inference) attempt(c *call, prov providers.Provider, req *providers.Request) (done bool, err error) {
	if v, ok := prov.(providers.Validator); ok {
		if err := v.Validate(req); err != nil {
			c.attemptSpan(h.cfg.Now(), err)
			return false, err
		}
	}
	if req.Stream {
		return h.attemptStream(c, prov, req)
	}
	ctx := c.upctx // set by startAttempts: ends at the deadline, the hard stop or when the client goes away
	var resp *providers.Response
	switch req.Op {
	case llm.OpChat, llm.OpResponses, llm.OpMessages, llm.OpCountTokens:
		// A native door's operation is a chat call of its wire (req.Wire).
		resp, err = prov.Chat(ctx, req)
	case llm.OpCompletions:
		resp, err = prov.(providers.Completer).Complete(ctx, req)
	case llm.OpEmbeddings:
		resp, err = prov.(providers.Embedder).Embed(ctx, req)
	}
	c.attemptSpan(h.cfg.Now(), err)
	if err != nil {
		return false, err
	}
	c.rec.TTFBMS = since(c.start)
	body, blocked := h.responseRules(c, resp.Body)
	if blocked != nil {
		// The provider answered, so its tokens are billed; the client gets
		// the block instead of the answer.
		c.err, c.out = blocked, outcome{usage: resp.Usage, billed: true}
		return true, nil
	}
	h.success(c, req)
	c.ctx.SetStatusCode(http.StatusOK)
	c.ctx.SetContentType("application/json")
	c.ctx.SetBody(c.door.answer(body))
	h.cacheStore(c, body, resp.Usage)
	c.rec.Status, c.out = http.StatusOK, outcome{usage: h.estimate(c, resp.Usage, resp.Body, nil), billed: true, answered: true, respBody: body}
	return true, nil
}

// success sets the response headers of an answered request.
func (h *Inference) success(c *call, req *providers.Request) {
	hd := &c.ctx.Response.Header
	hd.Set("x-sluice-provider", c.rec.Provider)
	hd.Set("x-sluice-model", req.Model)
	hd.Set("x-sluice-attempts", strconv.Itoa(c.rec.Attempts))
	if c.cacheState == "" {
		c.cacheState = "BYPASS"
	}
	hd.Set("x-sluice-cache", c.cacheState)
	c.rec.Cache = c.cacheState
	if pr, ok := c.snap.Price(c.rec.Provider, req.Model); ok && pr.DeprecatedAt != nil && !c.start.Before(*pr.DeprecatedAt) {
		hd.Set("Deprecation", "@"+strconv.FormatInt(pr.DeprecatedAt.Unix(), 10))
		if pr.SunsetAt != nil {
			hd.Set("Sunset", pr.SunsetAt.UTC().Format(time.RFC1123))
		}
	}
}

// attemptStream opens the upstream stream; only once it answered with a
// success status are headers sent to the client, so that a failure before
// the first byte keeps its real status and can be retried elsewhere.
func (h *Inference) attemptStream(c *call, prov providers.Provider, req *providers.Request) (bool, error) {
	// The stream outlives the handler: its context ends only when the
	// stream ends or the shutdown grace period is over. The request
	// deadline bounds the time to the first byte (the adapter's Deadline).
	ctx, cancel := context.WithCancel(h.hardStop)
	var st providers.Stream
	var err error
	switch req.Op {
	case llm.OpCompletions:
		st, err = prov.(providers.Completer).CompleteStream(ctx, req)
	default:
		st, err = prov.ChatStream(ctx, req)
	}
	if err != nil {
		c.attemptSpan(h.cfg.Now(), err)
		cancel()
		return false, err
	}
	// The attempt's span ends with the stream (endStreamSpan), not at
	// the upstream's headers.
	c.streamSpan = true
	h.success(c, req)
	c.stream = openStream{st: st, cancel: cancel, sc: newStreamCopy(c.body)} // sc: for a usage estimate (proxy/estimate.go)
	// The stream holds the attempt's upstream slot until it ends.
	c.stream.up, c.upstream = c.upstream, nil
	return true, nil
}

// openStream is an upstream stream that answered: the handler opened it,
// and its writer relays it once the handler is done (startStream).
type openStream struct {
	st     providers.Stream
	cancel context.CancelFunc
	// up is the attempt's slot of the tenant's share of its upstream.
	up *snapshot.InFlight
	sc *streamCopy
}

// close ends a stream that is not relayed: the handler panicked after
// it was opened.
func (s *openStream) close() {
	_ = s.st.Close()
	s.cancel()
	releaseSlot(s.up)
	s.sc.release()
}

// startStream hands the call over to the stream's writer. finishHandler
// calls it as the handler's last act: fasthttp starts the writer at once,
// in its own goroutine, which owns the call from then on and is the only
// one to write to the client (relay).
func (h *Inference) startStream(c *call) {
	ctx := c.ctx
	ctx.SetStatusCode(http.StatusOK)
	ctx.SetContentType("text/event-stream")
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.Response.Header.Set("X-Accel-Buffering", "no")
	if c.gw.LogBodies {
		// Copied now: the stream outlives the handler, and the request's
		// buffer is not ours once the client is gone.
		c.rec.RequestBody = truncate(c.body, c.gw.BodyLogLimitBytes)
	}
	h.streams.Add(1)
	// The writer watches its client's writes (proxy/clientconn.go)
	// through the connection, read here: the RequestCtx is not the
	// writer's to touch.
	conn := ctx.Conn()
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) { h.writeStream(c, w, conn) })
}

// writeStream is a stream's writer: it relays the stream to its client
// and finishes the call.
func (h *Inference) writeStream(c *call, w *bufio.Writer, conn net.Conn) {
	s := &c.stream
	defer h.streams.Done()
	defer releaseSlot(s.up)
	defer s.cancel()
	defer s.st.Close()
	sw := newStreamWriter(w, conn, h.cfg.StreamWriteTimeout)
	defer sw.disarm()
	defer h.recoverStream(c, s.st, sw)
	h.relay(c, s.st, sw, s.sc)
}

// recoverStream is deferred by a stream's writer: fasthttp runs the writer
// in its own goroutine and does not recover a panic there, which would
// end the process. It logs the panic, ends the stream with an error event
// and records the request (500) unless it was recorded.
func (h *Inference) recoverStream(c *call, st providers.Stream, sw *streamWriter) {
	v := recover()
	if v == nil {
		return
	}
	h.log.Error("stream relay panicked", "request_id", c.rec.ID, "panic", v)
	_, _ = sw.Write(c.door.appendEnd(nil, &apierr.Error{Type: apierr.TypeAPI, Code: apierr.CodeInternal,
		Message: "the gateway failed while relaying the stream"}))
	_ = sw.Flush()
	c.endStreamSpan(h.cfg.Now(), nil)
	if !c.recorded {
		c.rec.Status, c.rec.ErrorCode = http.StatusInternalServerError, apierr.CodeInternal
		c.out = outcome{usage: st.Usage(), billed: true, answered: true}
		h.finish(c)
	}
	h.release(c, llmUsageZero)
}

// relay copies chunks to the client as they arrive, flushing each. It ends
// with [DONE] only after a clean upstream end; a broken upstream, a
// shutdown or a gone client end it with an SSE error event (or nothing,
// when nobody is listening) and no [DONE]. Every byte goes through out,
// the stream's one write path.
func (h *Inference) relay(c *call, st providers.Stream, w *streamWriter, sc *streamCopy) {
	out := streamOut{c: c, w: w, buf: make([]byte, 0, 1024), first: true}
	if c.gw.LogBodies {
		out.limit = c.gw.BodyLogLimitBytes
	}
	status, code := http.StatusOK, ""
	var upErr error // how the upstream broke off, for the attempt's span
	filter := h.newStreamFilter(c, st)
	var one [1][]byte
	for {
		chunk, err := st.Next()
		if err != nil {
			status, code = h.endStream(c, &out, filter, err)
			if !errors.Is(err, io.EOF) {
				upErr = err
			}
			break
		}
		sc.add(chunk)
		one[0] = chunk
		outs := one[:]
		if filter != nil {
			var blocked *apierr.Error
			if outs, blocked = filter.Push(chunk); blocked != nil {
				status, code = blocked.Status, blocked.Code
				out.end(blocked)
				break
			}
		}
		if !out.chunks(outs) {
			// The client went away, or did not read within the stream
			// write timeout: closing the stream cancels the upstream.
			status, code = w.clientStatus()
			break
		}
	}
	// Closing first cancels a stream cut short at once: the estimate
	// below may take a while, and the upstream must not generate (and
	// bill) meanwhile. Close is idempotent; the writer closes it again.
	_ = st.Close()
	c.endStreamSpan(h.cfg.Now(), upErr)
	c.rec.Status, c.rec.ErrorCode = status, code
	c.out = outcome{usage: h.estimate(c, st.Usage(), nil, sc), billed: true, answered: true, respBody: out.kept}
	h.finish(c)
	sc.release()
}

// endStream writes the end of a stream whose upstream ended with err:
// what the filter held back and [DONE] after a clean end (io.EOF), an
// error event otherwise. It returns the status and code to record.
func (h *Inference) endStream(c *call, out *streamOut, filter streamFilter, err error) (int, string) {
	if errors.Is(err, io.EOF) {
		if filter != nil && !out.chunks(filter.Flush()) {
			return out.w.clientStatus()
		}
		out.end(nil)
		return http.StatusOK, ""
	}
	if h.hardStop.Err() != nil {
		out.end(&apierr.Error{Type: apierr.TypeAPI, Code: apierr.CodeShuttingDown, Message: "the gateway is shutting down; the stream was cut"})
		return http.StatusServiceUnavailable, apierr.CodeShuttingDown
	}
	status, code := http.StatusBadGateway, apierr.CodeUpstreamError
	msg := "provider " + c.rec.Provider + " broke off the stream"
	if pe := providers.AsError(err); pe != nil && pe.Timeout {
		status, code, msg = http.StatusGatewayTimeout, apierr.CodeUpstreamTimeout, "provider "+c.rec.Provider+" stopped sending within the idle timeout"
		if !h.cfg.Now().Before(c.deadline) {
			msg = "the request timeout ended the stream: provider " + c.rec.Provider + " was still sending"
		}
	}
	out.end(&apierr.Error{Type: apierr.TypeAPI, Code: code, Message: msg})
	return status, code
}

// endStreamSpan records the span of the attempt whose stream is relayed,
// once, when the stream ended at end (err: how the upstream broke off,
// nil for a clean end or one the gateway or client chose).
func (c *call) endStreamSpan(end time.Time, err error) {
	if c.streamSpan {
		c.streamSpan = false
		c.attemptSpan(end, err)
	}
}

// streamOut is a stream's one write path to its client: data events,
// then one closing event. It keeps the start of the answer for the log
// (up to limit bytes) and the time to the first content (ttfb_ms).
type streamOut struct {
	c     *call
	w     *streamWriter
	buf   []byte // the event being written, reused
	kept  []byte // the response body for the log, bounded
	limit int
	// first is true until the first chunk; content until the first that
	// carries content.
	first, content bool
}

// chunks sends chunks as SSE data events, flushing after each; it
// returns false when the client is gone. ttfb_ms is the time to the
// first chunk that carries content (a role-only opening chunk does not);
// the first chunk's time stands until then, for a stream with none.
func (o *streamOut) chunks(chunks [][]byte) bool {
	for _, chunk := range chunks {
		if !o.content {
			o.content = carriesContent(chunk)
			if o.first || o.content {
				o.c.rec.TTFBMS = since(o.c.start)
			}
			o.first = false
		}
		if len(o.kept) < o.limit {
			o.kept = append(o.kept, chunk[:min(len(chunk), o.limit-len(o.kept))]...)
		}
		o.buf = o.c.door.appendChunk(o.buf[:0], chunk)
		if _, err := o.w.Write(o.buf); err != nil {
			return false
		}
		if err := o.w.Flush(); err != nil {
			return false
		}
	}
	return true
}

// end writes the closing event — the clean end when e is nil, else the
// error e — flushing it; the client may be gone already, which ends the
// stream as well.
func (o *streamOut) end(e *apierr.Error) {
	if e != nil {
		o.c.rec.ErrorMessage = e.Message
	}
	o.buf = o.c.door.appendEnd(o.buf[:0], e)
	_, _ = o.w.Write(o.buf)
	_ = o.w.Flush()
}

// contentKeys are the JSON keys whose non-empty string value (or, for
// tool calls, presence) makes a stream chunk one that carries content: the
// neutral chunk's text, reasoning, refusal and tool-call deltas, and the
// native doors' text, thinking, tool-input and Responses deltas.
var contentKeys = [...]string{`"content":`, `"text":`, `"arguments":`, `"reasoning_content":`, `"reasoning":`,
	`"refusal":`, `"thinking":`, `"partial_json":`, `"delta":`, `"tool_calls":`}

// carriesContent reports whether a stream chunk carries content for the
// client, as opposed to a role, a finish reason or usage alone.
func carriesContent(chunk []byte) bool {
	for _, k := range contentKeys {
		for rest := chunk; ; {
			i := bytes.Index(rest, []byte(k))
			if i < 0 {
				break
			}
			rest = trimSpace(rest[i+len(k):])
			if len(rest) == 0 {
				break
			}
			if k == `"tool_calls":` && rest[0] == '[' || rest[0] == '"' && len(rest) > 1 && rest[1] != '"' {
				return true
			}
		}
	}
	return false
}
