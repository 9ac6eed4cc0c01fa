package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// Client settings of the load generator.
const (
	// requestTimeout bounds one request: far above any loopback answer,
	// so a stuck server shows as an error instead of a hang.
	requestTimeout = 30 * time.Second
	// readBufferSize holds the response headers of both servers.
	readBufferSize = 16 << 10
	// startDelay separates a fixed-rate phase's first scheduled send from
	// the set-up of its senders.
	startDelay = 5 * time.Millisecond
)

// target is one kind of request to one server.
type target struct {
	url  string
	auth string // the Authorization header
	body []byte
	// stream marks an SSE request: its latency is the time to the first
	// content chunk.
	stream bool
	// contentKey is the JSON key whose first non-empty string value marks
	// a stream's first content event, and done the bytes its end must
	// hold; nil means the chat stream's "content": and data: [DONE].
	contentKey, done []byte
}

// client returns a client of t's host with conns connections at most.
func (t target) client(conns int) (*fasthttp.HostClient, error) {
	u, err := url.Parse(t.url)
	if err != nil {
		return nil, fmt.Errorf("target URL %q: %w", t.url, err)
	}
	return &fasthttp.HostClient{
		Addr:                u.Host,
		MaxConns:            conns,
		ReadTimeout:         requestTimeout,
		WriteTimeout:        requestTimeout,
		MaxIdleConnDuration: time.Minute,
		ReadBufferSize:      readBufferSize,
		StreamResponseBody:  t.stream,
	}, nil
}

// request fills req with t.
func (t target) request(req *fasthttp.Request) {
	req.SetRequestURI(t.url)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	req.Header.Set("Authorization", t.auth)
	req.SetBodyRaw(t.body)
}

// exchange is one sender's reusable request, response and stream buffer.
type exchange struct {
	t    target
	c    *fasthttp.HostClient
	req  fasthttp.Request
	resp fasthttp.Response
	acc  []byte // a stream's body so far
	// contentKey and done are t's, or the chat stream's by default.
	contentKey, done []byte
}

func newExchange(t target, c *fasthttp.HostClient) *exchange {
	x := &exchange{t: t, c: c, acc: make([]byte, 0, 4096), contentKey: t.contentKey, done: t.done}
	if x.contentKey == nil {
		x.contentKey = contentKey
	}
	if x.done == nil {
		x.done = doneEvent
	}
	t.request(&x.req)
	return x
}

// do sends the request and returns when the measured event happened: the
// whole answer read, or for a stream its first content chunk (the rest is
// read before do returns, so the connection can be reused).
func (x *exchange) do() (time.Time, error) {
	if err := x.c.Do(&x.req, &x.resp); err != nil {
		return time.Time{}, err
	}
	if x.resp.StatusCode() != fasthttp.StatusOK {
		return time.Time{}, fmt.Errorf("status %d: %.300s", x.resp.StatusCode(), x.resp.Body())
	}
	if !x.t.stream {
		return time.Now(), nil
	}
	return x.readStream()
}

var errNoContent = errors.New("stream ended without a content chunk or without [DONE]")

func (x *exchange) readStream() (time.Time, error) {
	defer x.resp.CloseBodyStream()
	if !isEventStream(x.resp.Header.ContentType()) {
		return time.Time{}, fmt.Errorf("stream answered Content-Type %q", x.resp.Header.ContentType())
	}
	r := x.resp.BodyStream()
	if r == nil { // the client read the whole (short) body already
		at := time.Now()
		if b := x.resp.Body(); !hasString(b, x.contentKey) || !bytes.Contains(b, x.done) {
			return time.Time{}, errNoContent
		}
		return at, nil
	}
	x.acc = x.acc[:0]
	var at time.Time
	for {
		if len(x.acc) == cap(x.acc) {
			x.acc = slices.Grow(x.acc, cap(x.acc))
		}
		n, err := r.Read(x.acc[len(x.acc):cap(x.acc)])
		x.acc = x.acc[:len(x.acc)+n]
		if at.IsZero() && n > 0 && hasString(x.acc, x.contentKey) {
			at = time.Now()
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return time.Time{}, fmt.Errorf("read stream: %w", err)
		}
	}
	if at.IsZero() || !bytes.Contains(x.acc, x.done) {
		return time.Time{}, errNoContent
	}
	return at, nil
}

var (
	contentKey = []byte(`"content":`)
	doneEvent  = []byte("data: [DONE]")
)

// hasContent reports whether b holds a chat chunk with non-empty content
// (the role chunk that starts a stream has "content":"").
func hasContent(b []byte) bool { return hasString(b, contentKey) }

// hasString reports whether b holds key followed by a non-empty JSON
// string.
func hasString(b, key []byte) bool {
	for {
		i := bytes.Index(b, key)
		if i < 0 {
			return false
		}
		b = bytes.TrimLeft(b[i+len(key):], " ")
		if len(b) >= 2 && b[0] == '"' && b[1] != '"' {
			return true
		}
	}
}

// ClosedLoop is a closed-loop phase's result.
type ClosedLoop struct {
	Requests  int64   `json:"requests"`
	Errors    int64   `json:"errors"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"requests_per_second"`
	// FirstError is the first failure's message, if any.
	FirstError string `json:"first_error,omitempty"`
}

// closedLoop keeps conns requests in flight for warmup+measure and counts
// the answers that completed within the measured window. cpu, when not
// nil, reads the gateway's CPU time at the window's edges.
func closedLoop(ctx context.Context, t target, conns int, warmup, measure time.Duration, cpu *cpuMeter) (ClosedLoop, error) {
	c, err := t.client(conns)
	if err != nil {
		return ClosedLoop{}, err
	}
	defer c.CloseIdleConnections()
	from := time.Now().Add(warmup)
	to := from.Add(measure)
	stopMeter := cpu.start(ctx, from, to)

	type tally struct {
		ok, failed int64
		err        error
	}
	tallies := make([]tally, conns)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			x := newExchange(t, c)
			tl := &tallies[i]
			for ctx.Err() == nil {
				_, err := x.do()
				done := time.Now()
				if !done.Before(to) {
					return
				}
				if done.Before(from) {
					continue
				}
				if err != nil {
					tl.failed++
					if tl.err == nil {
						tl.err = err
					}
					continue
				}
				tl.ok++
			}
		})
	}
	wg.Wait()
	if err := stopMeter(); err != nil {
		return ClosedLoop{}, err
	}
	if err := ctx.Err(); err != nil {
		return ClosedLoop{}, err
	}
	var r ClosedLoop
	for _, tl := range tallies {
		r.Requests += tl.ok
		r.Errors += tl.failed
		if tl.err != nil && r.FirstError == "" {
			r.FirstError = tl.err.Error()
		}
	}
	r.Seconds = measure.Seconds()
	r.PerSecond = float64(r.Requests) / r.Seconds
	if r.Requests == 0 {
		return r, fmt.Errorf("no request to %s succeeded: %s", t.url, r.FirstError)
	}
	return r, nil
}

// openOptions configure a fixed-rate phase.
type openOptions struct {
	rate             int
	senders          int
	warmup, duration time.Duration
	cpu              *cpuMeter // nil: not measured
}

// openLoop sends at o.rate per second on a fixed schedule, whatever the
// answers' speed, and measures each request from its scheduled send time:
// a late send (all senders busy, or the scheduler woken late) counts in the
// latency, so a slow server cannot hide its stalls by slowing the load
// (no coordinated omission). Sends scheduled in the warm-up are not
// counted.
func openLoop(ctx context.Context, t target, o openOptions) (Latencies, error) {
	c, err := t.client(o.senders)
	if err != nil {
		return Latencies{}, err
	}
	defer c.CloseIdleConnections()
	interval := time.Duration(float64(time.Second) / float64(o.rate))
	n := int((o.warmup + o.duration) / interval)
	start := time.Now().Add(startDelay)
	from := start.Add(o.warmup)
	stopMeter := o.cpu.start(ctx, from, start.Add(o.warmup+o.duration))

	// slots carries scheduled send times to the senders. Its size, a tenth
	// of a second of sends, absorbs a sender's hiccup; when it is full the
	// scheduler blocks and later sends go out late, which the latency
	// (measured from the schedule) shows.
	slots := make(chan time.Time, max(o.senders, o.rate/10))
	type samples struct {
		lat, late []time.Duration
		failed    int64
		err       error
	}
	per := make([]samples, o.senders)
	var wg sync.WaitGroup
	for i := range o.senders {
		wg.Go(func() {
			x := newExchange(t, c)
			s := &per[i]
			for at := range slots {
				sent := time.Now()
				done, err := x.do()
				if at.Before(from) {
					continue
				}
				if err != nil {
					s.failed++
					if s.err == nil {
						s.err = err
					}
					continue
				}
				s.lat = append(s.lat, done.Sub(at))
				s.late = append(s.late, sent.Sub(at))
			}
		})
	}
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		at := start.Add(time.Duration(i) * interval)
		sleepUntil(at)
		slots <- at
		// Let the sender just woken run on this P now: the next
		// sleepUntil holds the P in a system call, and a goroutine queued
		// on it would wait for the runtime to take the P back.
		runtime.Gosched()
	}
	close(slots)
	wg.Wait()
	if err := stopMeter(); err != nil {
		return Latencies{}, err
	}
	if err := ctx.Err(); err != nil {
		return Latencies{}, err
	}
	var lat, late []time.Duration
	var l Latencies
	for _, s := range per {
		lat = append(lat, s.lat...)
		late = append(late, s.late...)
		l.Errors += s.failed
		if s.err != nil && l.FirstError == "" {
			l.FirstError = s.err.Error()
		}
	}
	if len(lat) == 0 {
		return l, fmt.Errorf("no request to %s succeeded: %s", t.url, l.FirstError)
	}
	l.summarize(lat, late)
	return l, nil
}

// Latencies are a fixed-rate phase's result, in milliseconds.
type Latencies struct {
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	P50MS    float64 `json:"p50_ms"`
	P90MS    float64 `json:"p90_ms"`
	P99MS    float64 `json:"p99_ms"`
	MaxMS    float64 `json:"max_ms"`
	// SendLateP99MS is the 99th percentile of how late requests left
	// after their scheduled time: the load generator's own precision.
	SendLateP99MS float64 `json:"send_late_p99_ms"`
	FirstError    string  `json:"first_error,omitempty"`
}

func (l *Latencies) summarize(lat, late []time.Duration) {
	slices.Sort(lat)
	slices.Sort(late)
	l.Requests = int64(len(lat))
	l.P50MS = ms(percentile(lat, 50))
	l.P90MS = ms(percentile(lat, 90))
	l.P99MS = ms(percentile(lat, 99))
	l.MaxMS = ms(lat[len(lat)-1])
	l.SendLateP99MS = ms(percentile(late, 99))
}

// minus returns l − d at each percentile: the latency the gateway adds.
func (l Latencies) minus(d Latencies) Added {
	return Added{P50MS: l.P50MS - d.P50MS, P90MS: l.P90MS - d.P90MS, P99MS: l.P99MS - d.P99MS}
}

// Added is the latency added by the gateway at each percentile.
type Added struct {
	P50MS float64 `json:"p50_ms"`
	P90MS float64 `json:"p90_ms"`
	P99MS float64 `json:"p99_ms"`
}

// percentile returns the p-th percentile of sorted d (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(float64(len(sorted))*p/100)) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
