package providertest

import (
	"bufio"
	"net"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
)

// stream is a streamed response body built up front by a wire format and
// played with a Step's timing by sendStream. Every wire format's stream
// (SSE, Bedrock's binary event stream) is a sequence of frames, some of
// which carry content: those are the ones ChunkDelay precedes and
// ResetAfter counts.
type stream struct {
	contentType string
	buf         []byte // all frames back to back
	ends        []int  // ends[i] is where frame i ends in buf
	first, last int    // frames [first, last) carry content
}

// end marks the end of the frame just appended to buf.
func (sm *stream) end() { sm.ends = append(sm.ends, len(sm.buf)) }

func (sm *stream) frame(i int) []byte {
	start := 0
	if i > 0 {
		start = sm.ends[i-1]
	}
	return sm.buf[start:sm.ends[i]]
}

// sendStream answers ctx with sm, taking st's status, ChunkDelay and
// ResetAfter. Frames are flushed one by one through fasthttp's stream
// writer; a reset needs control of the connection, so it is played on the
// hijacked connection instead. Both run after the handler has returned:
// they use only sm, st and the shutdown channel, never ctx.
func (s *Server) sendStream(ctx *fasthttp.RequestCtx, sm *stream, st Step) {
	status := st.Status
	if status == 0 {
		status = fasthttp.StatusOK
	}
	done := ctx.Done()
	if st.ResetAfter > 0 {
		n := sm.first + min(st.ResetAfter, sm.last-sm.first)
		ctx.HijackSetNoResponse(true)
		ctx.Hijack(func(c net.Conn) {
			if !s.work.enter() {
				return
			}
			defer s.work.leave()
			w := bufio.NewWriter(c)
			w.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + fasthttp.StatusMessage(status) + "\r\n")
			w.WriteString("Content-Type: " + sm.contentType + "\r\nCache-Control: no-cache\r\n")
			if st.RetryAfter != "" {
				w.WriteString("Retry-After: " + st.RetryAfter + "\r\n")
			}
			w.WriteString("Transfer-Encoding: chunked\r\n\r\n")
			sm.play(w, n, st.ChunkDelay, done, true)
			// Returning closes c (Server.KeepHijackedConns is false): the
			// client sees the body end without its last chunk.
		})
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType(sm.contentType)
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		if !s.work.enter() {
			return
		}
		defer s.work.leave()
		sm.play(w, len(sm.ends), st.ChunkDelay, done, false)
	})
}

// play writes frames [0, n) to w, flushing each, with delay before each
// content frame; chunked frames each as an HTTP/1.1 chunk. It stops early
// when the client is gone or the server shuts down.
func (sm *stream) play(w *bufio.Writer, n int, delay time.Duration, done <-chan struct{}, chunked bool) {
	var t *time.Timer
	for i := range n {
		if delay > 0 && i >= sm.first && i < sm.last {
			if t == nil {
				t = time.NewTimer(delay)
				defer t.Stop()
			} else {
				t.Reset(delay)
			}
			select {
			case <-t.C:
			case <-done:
				return
			}
		}
		f := sm.frame(i)
		if chunked {
			w.WriteString(strconv.FormatInt(int64(len(f)), 16))
			w.WriteString("\r\n")
			w.Write(f)
			w.WriteString("\r\n")
		} else {
			w.Write(f)
		}
		if err := w.Flush(); err != nil {
			return
		}
	}
}

// reply ends a scripted answer the way every wire format does: the Step's
// latency, a reset connection instead of a non-streamed answer when the
// Step asks for one, its Retry-After, then the stream built by events or
// the JSON body built by body, with the Step's status.
func (s *Server) reply(ctx *fasthttp.RequestCtx, st Step, streamed bool, events func(chunks int) *stream, body func() []byte) {
	if !sleep(ctx, st.Latency) {
		return
	}
	if st.ResetAfter > 0 && !streamed {
		abort(ctx)
		return
	}
	if st.RetryAfter != "" {
		ctx.Response.Header.Set("Retry-After", st.RetryAfter)
	}
	if streamed {
		s.sendStream(ctx, events(st.Chunks), st)
		return
	}
	if st.Status != 0 {
		ctx.SetStatusCode(st.Status)
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(body())
}
