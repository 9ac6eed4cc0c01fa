package analytics

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/sluicehq/sluice/internal/ids"
)

const (
	// firstBackoff is the wait after the first failed write; it doubles up
	// to MaxBackoff.
	firstBackoff = 100 * time.Millisecond
	// spillChunk is how many records one spill append writes at most when
	// they need not stay together.
	spillChunk = 1024
	// errorLogEvery rate-limits the log line about a failing writer.
	errorLogEvery = time.Minute
)

// Pipeline carries records from the proxy to a Writer: a bounded in-memory
// queue, batches written by size or time, and a spill on disk for what the
// queue cannot hold or the writer cannot take.
//
// Guarantees. Enqueue never waits for the writer. A record is dropped only
// when the spill budget is exhausted or the disk refuses it, and is then
// counted. A batch is retried under the same id until Writer.Write returns
// nil, and spilled records are replayed under ids derived from their place
// in the spill, so an idempotent writer stores each record once. A
// graceful stop writes what it can within ShutdownTimeout and spills the
// rest. A SIGKILL loses what is only in memory: while the writer is
// healthy, the batch being written and the records queued since it was
// taken (the last FlushInterval's, or as long as a slow write has run, at
// most StallTimeout + FsyncInterval); while it fails or stalls (a write
// running past StallTimeout), the records of the last FsyncInterval:
// on every fsync tick the queue is moved to disk and the batch being
// retried is copied there (once, under its id; the copy is skipped on
// replay when the batch is acknowledged in the same run, and deduplicated
// by the writer after a restart). Spilled records survive a process kill;
// a power loss can take the last FsyncInterval of them.
type Pipeline struct {
	cfg   PipelineConfig
	log   *slog.Logger
	spill *spill

	// mu guards the ring (a FIFO of n records from head, with the Size
	// of each in sizes at the same index and their sum in bytes) and
	// closed.
	mu     sync.Mutex
	ring   []*Record
	sizes  []int64
	bytes  int64
	head   int
	n      int
	closed bool // Run has stopped: Enqueue spills directly
	wakeAt int  // queue length that wakes the writer: min(BatchSize, Queue)

	// notify (capacity 1) wakes the writer when the queue holds a full
	// batch. A send while one is pending is dropped: the writer takes what
	// it finds.
	notify chan struct{}

	// retryMu guards retry and retrySpilled: the live batch the writer
	// holds until it is acknowledged, and whether the syncer has copied it
	// to the spill (so that a SIGKILL during an outage does not lose it).
	retryMu      sync.Mutex
	retry        *Batch
	retrySpilled bool

	inflight   atomic.Int64 // records of the live batch being written
	moving     atomic.Int64 // records taken from the queue on their way to the spill
	healthy    atomic.Bool
	writeStart atomic.Int64 // unix nanoseconds when the running Write began; 0 when none runs
	lastErr    atomic.Pointer[string]
	started    atomic.Bool

	written, replayed, spilled, dropped, writeErrors *metrics.Counter

	logMu         sync.Mutex
	lastDropLog   time.Time
	dropsSinceLog int
	lastErrLog    time.Time
	errsSinceLog  int
}

// NewPipeline validates cfg, opens the spill directory and finds the
// segments a previous run left; Run replays them first.
func NewPipeline(cfg PipelineConfig) (*Pipeline, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Pipeline{
		cfg:    cfg,
		log:    cfg.Logger.With("component", "analytics-pipeline"),
		ring:   make([]*Record, cfg.Queue),
		sizes:  make([]int64, cfg.Queue),
		wakeAt: min(cfg.BatchSize, cfg.Queue),
		notify: make(chan struct{}, 1),
	}
	p.healthy.Store(true)
	sp, err := openSpill(spillConfig{dir: cfg.Dir, maxBytes: cfg.MaxSpillBytes, log: p.log, dropped: p.drop})
	if err != nil {
		return nil, err
	}
	p.spill = sp
	p.registerMetrics(cfg.Metrics)
	return p, nil
}

func (p *Pipeline) registerMetrics(set *metrics.Set) {
	counter := func(name string) *metrics.Counter {
		if set == nil {
			return new(metrics.Counter)
		}
		return set.NewCounter(name)
	}
	p.written = counter("sluice_pipeline_written_total")
	p.replayed = counter("sluice_pipeline_replayed_total")
	p.spilled = counter("sluice_pipeline_spilled_total")
	p.dropped = counter("sluice_pipeline_dropped_total")
	p.writeErrors = counter("sluice_pipeline_write_errors_total")
	if set == nil {
		return
	}
	set.NewGauge("sluice_pipeline_queue_depth", func() float64 { return float64(p.queued()) })
	set.NewGauge("sluice_pipeline_queue_bytes", func() float64 {
		p.mu.Lock()
		defer p.mu.Unlock()
		return float64(p.bytes)
	})
	set.NewGauge("sluice_pipeline_spill_bytes", func() float64 { return float64(p.spill.size()) })
	set.NewGauge("sluice_pipeline_writer_healthy", func() float64 {
		if p.healthy.Load() {
			return 1
		}
		return 0
	})
}

// Enqueue hands rec to the pipeline, which owns it from then on. It never
// waits for the writer: when the in-memory queue is full, in records or
// in bytes (or Run has stopped), the record is appended to the spill on
// disk instead.
func (p *Pipeline) Enqueue(rec *Record) {
	if rec == nil {
		return
	}
	size := rec.Size()
	p.mu.Lock()
	if !p.closed && p.n < len(p.ring) && p.bytes+size <= p.cfg.QueueBytes {
		i := p.head + p.n
		if i >= len(p.ring) {
			i -= len(p.ring)
		}
		p.ring[i], p.sizes[i] = rec, size
		p.n++
		p.bytes += size
		wake := p.ready()
		p.mu.Unlock()
		if wake {
			select {
			case p.notify <- struct{}{}:
			default:
			}
		}
		return
	}
	p.mu.Unlock()
	p.spillOne(rec)
}

// Stats reports the pipeline's figures.
func (p *Pipeline) Stats() PipelineStats {
	p.mu.Lock()
	queuedBytes := p.bytes
	p.mu.Unlock()
	st := PipelineStats{
		Queued:          p.queued(),
		QueuedBytes:     queuedBytes,
		SpilledBytes:    p.spill.size(),
		SpilledRecords:  int64(p.spilled.Get()),
		ReplayedRecords: int64(p.replayed.Get()),
		WrittenRecords:  int64(p.written.Get()),
		DroppedRecords:  int64(p.dropped.Get()),
		WriterHealthy:   p.healthy.Load(),
	}
	if e := p.lastErr.Load(); e != nil {
		st.LastError = *e
	}
	return st
}

func (p *Pipeline) queued() int64 {
	p.mu.Lock()
	n := p.n
	p.mu.Unlock()
	return int64(n) + p.inflight.Load() + p.moving.Load()
}

// takeLive removes up to limit records from the head of the queue and adds
// their number to holding (under the queue's lock, so that Stats never
// misses them between the queue and where they go).
func (p *Pipeline) takeLive(limit int, holding *atomic.Int64) []*Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := min(p.n, limit)
	if k == 0 {
		return nil
	}
	holding.Add(int64(k))
	out := make([]*Record, k)
	first := copy(out, p.ring[p.head:min(p.head+k, len(p.ring))])
	copy(out[first:], p.ring[:k-first])
	for i := range k { // release the slots for the collector
		j := p.head + i
		if j >= len(p.ring) {
			j -= len(p.ring)
		}
		p.ring[j] = nil
		p.bytes -= p.sizes[j]
	}
	p.head = (p.head + k) % len(p.ring)
	p.n -= k
	return out
}

// queueLen returns the records in the queue and whether they make a batch
// to write at once.
func (p *Pipeline) queueLen() (n int, ready bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n, p.ready()
}

// ready reports whether the queue holds a full batch, or half its bytes:
// the writer then takes a batch at once rather than at the next
// FlushInterval, so that the byte bound does not spill records that a
// write would make room for. The caller holds mu.
func (p *Pipeline) ready() bool {
	return p.n >= p.wakeAt || p.n > 0 && p.bytes >= p.cfg.QueueBytes/2
}

// spillOne spills a record that found the queue full.
func (p *Pipeline) spillOne(rec *Record) {
	bp := getBuf()
	defer putBuf(bp)
	b, err := appendFrame((*bp)[:0], rec, "")
	if err != nil {
		p.drop(1, "unencodable record", err)
		return
	}
	*bp = b
	if p.spill.append(b, 1) {
		p.spilled.Inc()
	}
}

// spillRecords spills recs. With a batchID (the id under which they were
// already attempted) they are written as one contiguous run, so that
// replay writes exactly that batch again under the same id.
func (p *Pipeline) spillRecords(recs []*Record, batchID string) {
	bp := getBuf()
	defer putBuf(bp)
	buf, n := (*bp)[:0], 0
	flush := func() {
		if p.spill.append(buf, n) {
			p.spilled.Add(n)
		}
		buf, n = buf[:0], 0
	}
	for _, rec := range recs {
		b, err := appendFrame(buf, rec, batchID)
		if err != nil {
			p.drop(1, "unencodable record", err)
			continue
		}
		buf, n = b, n+1
		if batchID == "" && n >= spillChunk {
			flush()
		}
	}
	flush()
	*bp = buf
}

// bufPool holds frame buffers of spill appends. Buffers above 1 MiB are not
// kept, so one large batch does not pin memory.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= 1<<20 {
		*b = (*b)[:0]
		bufPool.Put(b)
	}
}

// drop counts n lost records and logs at most once per dropLogEvery.
func (p *Pipeline) drop(n int, reason string, err error) {
	p.dropped.Add(n)
	p.logMu.Lock()
	p.dropsSinceLog += n
	now := p.cfg.Now()
	if !p.lastDropLog.IsZero() && now.Sub(p.lastDropLog) < dropLogEvery {
		p.logMu.Unlock()
		return
	}
	count := p.dropsSinceLog
	p.dropsSinceLog, p.lastDropLog = 0, now
	p.logMu.Unlock()
	p.log.Error("analytics records dropped (counted in sluice_pipeline_dropped_total)",
		"reason", reason, "records", count, "err", err)
}

// Run writes batches until ctx ends, then flushes what it can within
// ShutdownTimeout, spills the rest, fsyncs and returns nil. It owns the
// writer loop (the calling goroutine) and the syncer goroutine, which it
// stops and waits for before returning. It starts by replaying the
// segments a previous run left. Call it once.
func (p *Pipeline) Run(ctx context.Context) error {
	if !p.started.CompareAndSwap(false, true) {
		return errors.New("analytics pipeline: Run called twice")
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.syncLoop(stop)
	}()

	r := &runner{p: p, lastLive: time.Now(), timer: time.NewTimer(time.Hour), ackedCopies: map[string]struct{}{}}
	r.timer.Stop()
	if segs := p.spill.takeSealed(); len(segs) > 0 {
		p.log.Info("replaying spilled analytics records", "segments", len(segs), "bytes", p.spill.size())
		r.replay = &replayer{segs: segs, p: p}
		r.lastReplay = time.Now()
	}
	r.loop(ctx)
	r.shutdown(ctx)

	close(stop)
	wg.Wait()
	if err := p.spill.close(); err != nil {
		p.log.Error("close analytics spill", "err", err)
	}
	return nil
}

// syncLoop fsyncs the spill every FsyncInterval and after a rotation. On
// each tick while the writer fails or a write has run longer than
// StallTimeout, it moves the in-memory queue to the spill, so that a
// SIGKILL during an outage loses no more than one interval of records.
func (p *Pipeline) syncLoop(stop <-chan struct{}) {
	t := time.NewTicker(p.cfg.FsyncInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-p.spill.kick:
		case <-t.C:
			if p.stalled() {
				p.spillRetry()
				if recs := p.takeLive(len(p.ring), &p.moving); len(recs) > 0 {
					p.spillRecords(recs, "")
					p.moving.Add(-int64(len(recs)))
				}
			}
		}
		if err := p.spill.sync(); err != nil {
			p.log.Error("fsync analytics spill", "err", err)
		}
	}
}

// spillRetry copies the live batch being retried to the spill under its
// id, once. The batch stays in memory and is still retried: the copy only
// keeps it across a SIGKILL. When the spill refuses the copy nothing is
// counted as dropped (the batch is not lost) and the next tick tries again.
func (p *Pipeline) spillRetry() {
	p.retryMu.Lock()
	defer p.retryMu.Unlock()
	b := p.retry
	if b == nil || p.retrySpilled {
		return
	}
	bp := getBuf()
	defer putBuf(bp)
	buf, n := (*bp)[:0], 0
	for _, rec := range b.Records {
		f, err := appendFrame(buf, rec, b.ID)
		if err != nil {
			continue // unencodable: counted when the batch is dropped, if ever
		}
		buf, n = f, n+1
	}
	*bp = buf
	if n == 0 {
		return
	}
	p.spill.mu.Lock()
	_, err := p.spill.appendLocked(buf)
	p.spill.mu.Unlock()
	if err != nil {
		return
	}
	p.retrySpilled = true
	p.spilled.Add(n)
}

// setRetry records the live batch the writer now holds.
func (p *Pipeline) setRetry(b *Batch) {
	p.retryMu.Lock()
	p.retry, p.retrySpilled = b, false
	p.retryMu.Unlock()
}

// clearRetry forgets the live batch and reports whether it was copied to
// the spill.
func (p *Pipeline) clearRetry() (spilled bool) {
	p.retryMu.Lock()
	spilled = p.retrySpilled
	p.retry, p.retrySpilled = nil, false
	p.retryMu.Unlock()
	return spilled
}

func (p *Pipeline) stalled() bool {
	if !p.healthy.Load() {
		return true
	}
	ws := p.writeStart.Load()
	return ws != 0 && time.Since(time.Unix(0, ws)) > p.cfg.StallTimeout
}

// runner is the state of Run's writer loop; only that goroutine uses it.
type runner struct {
	p *Pipeline
	// cur is the batch being written, retried until acknowledged. curLive
	// tells a batch from the queue from a replayed one; curSeg is the
	// segment a replayed batch completes (removed once it is acknowledged).
	cur     *Batch
	curLive bool
	curSeg  *segment

	replay *replayer // nil when not replaying
	// ackedCopies are the ids of live batches acknowledged after the syncer
	// copied them to the spill: their copy is skipped on replay.
	ackedCopies map[string]struct{}
	lastLive    time.Time // when the last live batch was taken
	lastReplay  time.Time // when the last replay began
	timer       *time.Timer
	failures    int
}

// loop writes batches until ctx ends.
func (r *runner) loop(ctx context.Context) {
	for {
		if r.cur == nil && !r.next(ctx) {
			return
		}
		if r.write(ctx) {
			continue
		}
		if ctx.Err() != nil || !r.sleep(ctx, r.backoff()) {
			return
		}
	}
}

// next picks the next batch: a live one when a batch is full or a record
// has waited FlushInterval, else a replayed one, else it waits. It
// reports false when ctx ended.
func (r *runner) next(ctx context.Context) bool {
	p := r.p
	for {
		if ctx.Err() != nil {
			return false
		}
		if r.replay == nil {
			r.maybeReplay()
		}
		if n, ready := p.queueLen(); (ready || (n > 0 && time.Since(r.lastLive) >= p.cfg.FlushInterval)) && r.takeLive() {
			return true
		}
		if r.replay != nil {
			b, seg, ok := r.replay.next(p.cfg.BatchSize)
			if _, acked := r.ackedCopies[batchID(b)]; ok && acked {
				// The copy of a live batch written since: done already.
				delete(r.ackedCopies, b.ID)
				if seg != nil {
					if err := p.spill.remove(seg); err != nil {
						p.log.Error("analytics spill", "err", err)
					}
				}
				continue
			}
			if ok {
				r.cur, r.curLive, r.curSeg = b, false, seg
				return true
			}
			r.replay = nil
			continue
		}
		wait := p.cfg.FlushInterval - time.Since(r.lastLive)
		if wait <= 0 {
			wait = p.cfg.FlushInterval
		}
		r.timer.Reset(wait)
		select {
		case <-ctx.Done():
			r.timer.Stop()
			return false
		case <-p.notify:
			r.timer.Stop()
		case <-r.timer.C:
		}
	}
}

// maybeReplay starts a replay when records wait on disk: at once for
// sealed segments, and at most once per FlushInterval for the segment
// being appended to (sealing it), so a trickle of overflow does not turn
// into a storm of tiny segments.
func (r *runner) maybeReplay() {
	sealed, active := r.p.spill.pending()
	// While the writer fails, the active segment is left alone (sealing it
	// again and again would only make tiny segments); sealed segments are
	// still tried, as a probe, besides the retried batch.
	if !r.p.healthy.Load() {
		if sealed && time.Since(r.lastReplay) >= r.p.cfg.FlushInterval {
			r.lastReplay = time.Now()
			if segs := r.p.spill.takeSealedOnly(); len(segs) > 0 {
				r.replay = &replayer{segs: segs, p: r.p}
			}
		}
		return
	}
	if !sealed && !(active && time.Since(r.lastReplay) >= r.p.cfg.FlushInterval) {
		return
	}
	r.lastReplay = time.Now()
	if segs := r.p.spill.takeSealed(); len(segs) > 0 {
		r.replay = &replayer{segs: segs, p: r.p}
	}
}

// takeLive makes the next live batch of up to BatchSize records from the
// queue; false when the queue is empty.
func (r *runner) takeLive() bool {
	recs := r.p.takeLive(r.p.cfg.BatchSize, &r.p.inflight)
	r.lastLive = time.Now()
	if len(recs) == 0 {
		return false
	}
	r.cur = &Batch{ID: ids.New("batch"), Records: recs}
	r.curLive, r.curSeg = true, nil
	r.p.setRetry(r.cur)
	return true
}

// batchID is the id of b, "" for nil.
func batchID(b *Batch) string {
	if b == nil {
		return ""
	}
	return b.ID
}

// write writes r.cur once and reports whether it was acknowledged.
func (r *runner) write(ctx context.Context) bool {
	p := r.p
	wctx, cancel := context.WithTimeout(ctx, p.cfg.WriteTimeout)
	p.writeStart.Store(time.Now().UnixNano())
	err := p.cfg.Writer.Write(wctx, r.cur)
	p.writeStart.Store(0)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			r.fail(err)
		}
		return false
	}
	r.ack()
	return true
}

func (r *runner) ack() {
	p := r.p
	n := len(r.cur.Records)
	p.written.Add(n)
	if r.curLive {
		if p.clearRetry() {
			r.ackedCopies[r.cur.ID] = struct{}{}
		}
		p.inflight.Store(0)
	} else {
		p.replayed.Add(n)
	}
	if r.curSeg != nil {
		if err := p.spill.remove(r.curSeg); err != nil {
			p.log.Error("analytics spill", "err", err)
		}
	}
	r.cur, r.curSeg = nil, nil
	if !p.healthy.Load() {
		p.healthy.Store(true)
		p.lastErr.Store(nil)
		p.log.Info("analytics writer recovered", "failed_attempts", r.failures)
	}
	r.failures = 0
}

func (r *runner) fail(err error) {
	p := r.p
	p.writeErrors.Inc()
	msg := err.Error()
	p.lastErr.Store(&msg)
	r.failures++
	wasHealthy := p.healthy.Swap(false)
	p.logMu.Lock()
	p.errsSinceLog++
	now := p.cfg.Now()
	logIt := wasHealthy || now.Sub(p.lastErrLog) >= errorLogEvery
	count := p.errsSinceLog
	if logIt {
		p.errsSinceLog, p.lastErrLog = 0, now
	}
	p.logMu.Unlock()
	if logIt {
		p.log.Warn("analytics write failed; keeping the batch and retrying, records buffer and spill meanwhile",
			"batch", r.cur.ID, "records", len(r.cur.Records), "failures", count, "err", err)
	}
}

// backoff is the wait before the next retry: exponential from 100 ms to
// MaxBackoff, with ±20% jitter so replicas do not retry in step.
func (r *runner) backoff() time.Duration {
	d := min(firstBackoff, r.p.cfg.MaxBackoff)
	for i := 1; i < r.failures && d < r.p.cfg.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, r.p.cfg.MaxBackoff)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

func (r *runner) sleep(ctx context.Context, d time.Duration) bool {
	r.timer.Reset(d)
	select {
	case <-ctx.Done():
		r.timer.Stop()
		return false
	case <-r.timer.C:
		return true
	}
}

// shutdown writes the batch in hand and the queue within ShutdownTimeout,
// then closes the queue and spills what is left. A replay in progress
// stops: its segments stay on disk for the next run.
func (r *runner) shutdown(ctx context.Context) {
	p := r.p
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.ShutdownTimeout)
	defer cancel()
	if r.replay != nil {
		r.replay.close()
		r.replay = nil
	}
	if r.cur != nil && !r.curLive {
		r.cur, r.curSeg = nil, nil // still on disk
	}
	for wctx.Err() == nil {
		if r.cur == nil && !r.takeLive() {
			break // the queue is empty
		}
		if !r.write(wctx) {
			break
		}
	}
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	if r.cur != nil {
		// Unless the syncer copied it already (the syncer still runs: the
		// lock keeps it from copying it now).
		p.retryMu.Lock()
		if !p.retrySpilled {
			p.spillRecords(r.cur.Records, r.cur.ID)
		}
		p.retry, p.retrySpilled = nil, false
		p.retryMu.Unlock()
		p.inflight.Store(0)
		r.cur = nil
	}
	if rest := p.takeLive(len(p.ring), &p.moving); len(rest) > 0 {
		p.spillRecords(rest, "")
		p.moving.Add(-int64(len(rest)))
	}
	if st := p.Stats(); st.SpilledBytes > 0 {
		p.log.Info("analytics pipeline stopped; records kept on disk for the next start",
			"spill_bytes", st.SpilledBytes, "dir", p.cfg.Dir)
	}
}
