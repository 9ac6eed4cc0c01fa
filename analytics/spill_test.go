package analytics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/money"
)

// This file holds the white-box tests of the spill and the test doubles
// shared with pipeline_test.go (package analytics_test), exported to it
// only in the test build.

// ErrFakeDown is what FakeWriter returns while it is down.
var ErrFakeDown = errors.New("fake writer: down")

// ErrFakeUnknown is what FakeWriter returns after storing a batch when told
// to fail after storing: the caller cannot tell whether it was stored.
var ErrFakeUnknown = errors.New("fake writer: timeout after the insert was sent")

// FakeWriter is a test double of Writer (an interface, not a database). It
// stores records keyed by id, so that a batch written again stores nothing
// twice, as the real backends do. It can be down, fail after storing, or
// block until released.
type FakeWriter struct {
	mu        sync.Mutex
	down      bool
	failAfter int
	gate      chan struct{}
	stored    map[string]*Record
	order     []string
	acks      map[string]int
	attempts  []Attempt
}

// Attempt is one call of FakeWriter.Write.
type Attempt struct {
	Batch string
	IDs   []string
	Err   error
}

// NewFakeWriter returns a healthy writer.
func NewFakeWriter() *FakeWriter {
	return &FakeWriter{stored: map[string]*Record{}, acks: map[string]int{}}
}

// SetDown makes every write fail (true) or succeed (false).
func (w *FakeWriter) SetDown(down bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.down = down
}

// FailAfterStore makes the next n writes store their batch and then fail.
func (w *FakeWriter) FailAfterStore(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failAfter = n
}

// Block makes writes wait until Unblock (or their context ends).
func (w *FakeWriter) Block() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gate = make(chan struct{})
}

// Unblock releases the writes waiting since Block.
func (w *FakeWriter) Unblock() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gate != nil {
		close(w.gate)
		w.gate = nil
	}
}

// Write implements Writer.
func (w *FakeWriter) Write(ctx context.Context, b *Batch) error {
	w.mu.Lock()
	gate := w.gate
	w.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			w.mu.Lock()
			defer w.mu.Unlock()
			w.attempt(b, ctx.Err())
			return ctx.Err()
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.down {
		w.attempt(b, ErrFakeDown)
		return ErrFakeDown
	}
	for _, r := range b.Records {
		if _, ok := w.stored[r.ID]; !ok {
			w.stored[r.ID] = r
			w.order = append(w.order, r.ID)
		}
	}
	if w.failAfter > 0 {
		w.failAfter--
		w.attempt(b, ErrFakeUnknown)
		return ErrFakeUnknown
	}
	for _, r := range b.Records {
		w.acks[r.ID]++
	}
	w.attempt(b, nil)
	return nil
}

func (w *FakeWriter) attempt(b *Batch, err error) {
	a := Attempt{Batch: b.ID, Err: err}
	for _, r := range b.Records {
		a.IDs = append(a.IDs, r.ID)
	}
	w.attempts = append(w.attempts, a)
}

// Stored returns the stored records by id.
func (w *FakeWriter) Stored() map[string]*Record {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]*Record, len(w.stored))
	for k, v := range w.stored {
		out[k] = v
	}
	return out
}

// StoredCount returns how many distinct records are stored.
func (w *FakeWriter) StoredCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.stored)
}

// Acks returns, per record id, how many acknowledged writes held it.
func (w *FakeWriter) Acks() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.acks))
	for k, v := range w.acks {
		out[k] = v
	}
	return out
}

// Attempts returns every Write call so far.
func (w *FakeWriter) Attempts() []Attempt {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Attempt(nil), w.attempts...)
}

// NewTestRecord returns record number i with a span and a guardrail event.
func NewTestRecord(i int) *Record {
	id := fmt.Sprintf("rec-%07d", i)
	ts := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
	return &Record{
		ID: id, TS: ts, TenantID: "acme", GatewayID: "gw_1", Provider: "openai", Model: "gpt-4o-mini",
		Status: 200, LatencyMS: int64(i % 900), TokensIn: 12, TokensOut: 34,
		CostUSD: money.USD(1_234_567 + i), CacheSavedUSD: money.USD(i), Metadata: map[string]string{"k": "v"},
		TraceID: "tr-" + id,
		Spans: []Span{{TraceID: "tr-" + id, SpanID: "sp-" + id, Name: "gateway", Start: ts, DurationMS: 1.5,
			Status: "ok", Attributes: map[string]string{"attempt": "1"}}},
		Events: []GuardrailEvent{{ID: "ev-" + id, TS: ts, TenantID: "acme", GatewayID: "gw_1", RequestID: id,
			RuleID: "rule_1", Action: "flag"}},
	}
}

// WaitUntil polls cond until it holds, failing the test after 30 s.
func WaitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// StartPipeline runs p until the returned stop is called (or the test
// ends); stop waits for Run to return and checks its error.
func StartPipeline(t testing.TB, p *Pipeline) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1) // one send, by the goroutine running p
	go func() { done <- p.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// QuietLogger discards log lines.
func QuietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// SegmentFiles lists the spill segments in dir.
func SegmentFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+segmentExt))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSpillFixedSpanAttrs (issue 17): the attributes a span keeps in
// Fixed survive the spill, read back in its Attributes map with the map's
// own.
func TestSpillFixedSpanAttrs(t *testing.T) {
	rec := NewTestRecord(7)
	sp := Span{TraceID: rec.TraceID, SpanID: "b7ad6b7169203331", Name: "upstream openai", Attributes: map[string]string{"zone": "eu"}}
	sp.SetAttr("provider", "openai")
	sp.SetAttr("attempt", "2")
	rec.Spans = []Span{sp}
	frame, err := appendFrame(nil, rec, "")
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := decodeSpill(frame[frameHeader:])
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"zone": "eu", "provider": "openai", "attempt": "2"}
	if len(back.Spans) != 1 || !cmp.Equal(back.Spans[0].Attributes, want) {
		t.Errorf("spans after a round trip: %+v, want one with attributes %v", back.Spans, want)
	}
}

func TestSpillRecordRoundTrip(t *testing.T) {
	// The spill has its own record type (spillformat.go): every field of
	// Record, its spans and its events must survive the trip through it. A
	// new field of Record left out of spillRecord fails here.
	full := filled(reflect.TypeFor[Record](), 0).Interface().(Record)
	frame, err := appendFrame(nil, &full, "")
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := decodeSpill(frame[frameHeader:])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&full, back); diff != "" {
		t.Errorf("record with every field set, after a round trip (-want +got):\n%s", diff)
	}

	rec := NewTestRecord(42)
	rec.CostUSD = money.USD(123_456_789_012_345) // beyond float64's exact dollars-with-nanos
	rec.RequestBody, rec.ResponseBody = `{"q":"é\u0000"}`, "answer"
	frame, err = appendFrame(nil, rec, "batch_x")
	if err != nil {
		t.Fatal(err)
	}
	got, batch, err := decodeSpill(frame[frameHeader:])
	if err != nil {
		t.Fatal(err)
	}
	if batch != "batch_x" {
		t.Errorf("batch = %q, want batch_x", batch)
	}
	if diff := cmp.Diff(rec, got); diff != "" {
		t.Errorf("record after a round trip (-want +got):\n%s", diff)
	}
}

func newTestSpill(t *testing.T, dir string, segBytes, maxBytes int64) (*spill, *int) {
	t.Helper()
	dropped := new(int)
	var mu sync.Mutex
	s, err := openSpill(spillConfig{dir: dir, segmentBytes: segBytes, maxBytes: maxBytes, log: QuietLogger(),
		dropped: func(n int, _ string, _ error) { mu.Lock(); *dropped += n; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	return s, dropped
}

func appendRecords(t *testing.T, s *spill, from, to int, batch string) {
	t.Helper()
	var buf []byte
	for i := from; i < to; i++ {
		var err error
		if buf, err = appendFrame(buf, NewTestRecord(i), batch); err != nil {
			t.Fatal(err)
		}
		if batch == "" {
			if !s.append(buf, 1) {
				t.Fatalf("append of record %d refused", i)
			}
			buf = buf[:0]
		}
	}
	if batch != "" && !s.append(buf, to-from) {
		t.Fatalf("append of batch %s refused", batch)
	}
}

// replayAll reads every sealed segment as the pipeline does, removing each
// segment once its batches are read (as if acknowledged).
func replayAll(t *testing.T, p *Pipeline, s *spill, limit int) []*Batch {
	t.Helper()
	rp := &replayer{segs: s.takeSealed(), p: p}
	var out []*Batch
	for {
		b, done, ok := rp.next(limit)
		if !ok {
			return out
		}
		out = append(out, b)
		if done != nil {
			if err := s.remove(done); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// testPipeline is a pipeline whose spill is s (for replayer's logging and
// drop counting).
func testPipeline(t *testing.T, dir string) *Pipeline {
	t.Helper()
	p, err := NewPipeline(PipelineConfig{Writer: NewFakeWriter(), Dir: dir, Logger: QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSpillReplaysInOrderAcrossRotatedSegments(t *testing.T) {
	dir := t.TempDir()
	p := testPipeline(t, dir)
	s := p.spill
	s.cfg.segmentBytes = 4 << 10 // a few records per segment
	appendRecords(t, s, 0, 40, "")
	appendRecords(t, s, 40, 47, "batch_attempted") // a batch spilled after an attempt
	appendRecords(t, s, 47, 60, "")
	if err := s.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(SegmentFiles(t, dir)); n < 3 {
		t.Fatalf("%d segments, want rotation into several", n)
	}
	batches := replayAll(t, p, s, 5)
	var ids []string
	seen := map[string]bool{}
	for _, b := range batches {
		if seen[b.ID] {
			t.Errorf("batch id %s repeated", b.ID)
		}
		seen[b.ID] = true
		switch {
		case b.ID == "batch_attempted":
			if len(b.Records) != 7 {
				t.Errorf("attempted batch has %d records, want the 7 it was spilled with", len(b.Records))
			}
		case !strings.HasPrefix(b.ID, "spill-"):
			t.Errorf("replayed batch id %q, want spill-<segment>-<offset>", b.ID)
		case len(b.Records) > 5:
			t.Errorf("batch %s has %d records, want at most 5", b.ID, len(b.Records))
		}
		for _, r := range b.Records {
			ids = append(ids, r.ID)
		}
	}
	var want []string
	for i := range 60 {
		want = append(want, NewTestRecord(i).ID)
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("replay order (-want +got):\n%s", diff)
	}
	if n := len(SegmentFiles(t, dir)); n != 0 {
		t.Errorf("%d segments left after replay, want 0", n)
	}
	if b := s.size(); b != 0 {
		t.Errorf("spill size %d after replay, want 0", b)
	}

	// Replaying the same bytes again gives the same batch ids: a crash
	// during replay followed by a re-replay stays idempotent.
	dir2 := t.TempDir()
	first := replayIDs(t, dir2, func(s *spill) { appendRecords(t, s, 0, 30, "") })
	second := replayIDs(t, dir2, nil)
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("batch ids of a re-replay differ (-first +second):\n%s", diff)
	}
}

// replayIDs fills dir (when fill is set), closes the spill and reads the
// batch ids a new pipeline on dir would replay; the files stay.
func replayIDs(t *testing.T, dir string, fill func(*spill)) []string {
	t.Helper()
	p := testPipeline(t, dir)
	if fill != nil {
		fill(p.spill)
		if err := p.spill.close(); err != nil {
			t.Fatal(err)
		}
		p = testPipeline(t, dir)
	}
	rp := &replayer{segs: p.spill.takeSealed(), p: p}
	defer rp.close()
	var ids []string
	for {
		b, _, ok := rp.next(4)
		if !ok {
			return ids
		}
		ids = append(ids, b.ID)
	}
}

func TestSpillSkipsTornTailAndCorruptRecord(t *testing.T) {
	dir := t.TempDir()
	p := testPipeline(t, dir)
	appendRecords(t, p.spill, 0, 10, "")
	if err := p.spill.close(); err != nil {
		t.Fatal(err)
	}
	files := SegmentFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("segments: %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	// Corrupt one byte of record 3's payload and tear the last record.
	offs := frameOffsets(t, data)
	data[offs[3]+frameHeader+5] ^= 0xff
	data = data[:offs[9]+frameHeader+7]
	if err := os.WriteFile(files[0], data, 0o600); err != nil {
		t.Fatal(err)
	}

	p2 := testPipeline(t, dir)
	var ids []string
	for _, b := range replayAll(t, p2, p2.spill, 100) {
		for _, r := range b.Records {
			ids = append(ids, r.ID)
		}
	}
	var want []string
	for _, i := range []int{0, 1, 2, 4, 5, 6, 7, 8} {
		want = append(want, NewTestRecord(i).ID)
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("replayed records (-want +got):\n%s", diff)
	}
	if got := p2.Stats().DroppedRecords; got != 2 {
		t.Errorf("dropped = %d, want 2 (the corrupt and the torn record)", got)
	}
}

// frameOffsets returns the offset of every whole frame in data.
func frameOffsets(t *testing.T, data []byte) []int {
	t.Helper()
	var offs []int
	for off := 0; off+frameHeader <= len(data); {
		offs = append(offs, off)
		n := int(uint32(data[off]) | uint32(data[off+1])<<8 | uint32(data[off+2])<<16 | uint32(data[off+3])<<24)
		off += frameHeader + n
	}
	return offs
}

// TestPipelineSIGKILL simulates a kill -9 (and a power loss) while records
// spill: the disk is copied as it is at the moment of the crash, the last
// segment cut mid-record. A new pipeline on the copy replays everything up
// to the tear; what is lost is at most what was enqueued since the last
// fsync (plus what was only in memory: the queue and the batch in hand).
func TestPipelineSIGKILL(t *testing.T) {
	for _, tc := range []struct {
		name string
		// cut returns where the crash cuts the active segment, given its
		// size, the fsync'd size and its frame offsets.
		cut func(size, synced int64, offs []int) int64
	}{
		{"power loss after the last fsync", func(size, synced int64, offs []int) int64 {
			return synced + frameHeader + 3 // a torn record just past the fsync'd bytes
		}},
		{"process kill: unsynced bytes survive in the page cache", func(size, synced int64, offs []int) int64 {
			return int64(offs[len(offs)-1]) + 5 // the last record torn mid-header
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w := NewFakeWriter()
			w.SetDown(true)
			p, err := NewPipeline(PipelineConfig{Writer: w, Dir: dir, Queue: 1, BatchSize: 10,
				FlushInterval: time.Millisecond, FsyncInterval: time.Hour, MaxBackoff: time.Millisecond,
				Logger: QuietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			// The pipeline runs only after the crash image is taken: with no
			// runner, every record beyond the one-record queue goes straight
			// to the active segment, so the test decides what is fsync'd.

			const before, after = 200, 50
			for i := range before {
				p.Enqueue(NewTestRecord(i))
			}
			// The fsync tick (FsyncInterval is long so that the test decides
			// when it happens).
			if err := p.spill.sync(); err != nil {
				t.Fatal(err)
			}
			for i := before; i < before+after; i++ {
				p.Enqueue(NewTestRecord(i))
			}

			// The crash: copy the spill directory as the disk holds it; the
			// segments sealed before are whole (fsync'd at rotation).
			crashed := t.TempDir()
			p.spill.mu.Lock()
			active := p.spill.active
			size, synced := active.size, active.synced
			data, err := os.ReadFile(active.path)
			var sealedIDs []string
			for _, path := range SegmentFiles(t, dir) {
				if path == active.path {
					continue
				}
				b, rerr := os.ReadFile(path)
				if rerr != nil {
					t.Fatal(rerr)
				}
				sealedIDs = append(sealedIDs, readSegmentIDs(t, b)...)
				if werr := os.WriteFile(filepath.Join(crashed, filepath.Base(path)), b, 0o600); werr != nil {
					t.Fatal(werr)
				}
			}
			p.spill.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			StartPipeline(t, p)
			if int64(len(data)) != size || synced == 0 || synced >= size {
				t.Fatalf("segment of %d bytes (%d recorded), %d fsync'd: want unsynced bytes after synced ones", len(data), size, synced)
			}
			offs := frameOffsets(t, data)
			cut := tc.cut(size, synced, offs)
			if err := os.WriteFile(filepath.Join(crashed, filepath.Base(active.path)), data[:cut], 0o600); err != nil {
				t.Fatal(err)
			}
			inMemory := p.Stats().Queued

			// What the disk held up to the cut, record by record.
			onDisk := append(sealedIDs, readSegmentIDs(t, data[:cut])...)
			syncedIDs := append(sealedIDs, readSegmentIDs(t, data[:synced])...)

			w2 := NewFakeWriter()
			p2, err := NewPipeline(PipelineConfig{Writer: w2, Dir: crashed, Logger: QuietLogger(), Metrics: nil})
			if err != nil {
				t.Fatal(err)
			}
			StartPipeline(t, p2)
			WaitUntil(t, "the crashed spill is replayed", func() bool {
				return len(SegmentFiles(t, crashed)) == 0
			})
			stored := w2.Stored()
			for _, id := range syncedIDs {
				if stored[id] == nil {
					t.Errorf("record %s was fsync'd before the crash but is missing after replay", id)
				}
			}
			if len(stored) != len(onDisk) {
				t.Errorf("replayed %d records, want the %d whole ones on disk", len(stored), len(onDisk))
			}
			if got := p2.Stats().DroppedRecords; got != 1 {
				t.Errorf("dropped = %d, want 1 (the torn record)", got)
			}
			lost := before + after - len(stored)
			if bound := after + int(inMemory); lost > bound {
				t.Errorf("lost %d records, want at most %d enqueued since the last fsync plus %d held in memory", lost, after, inMemory)
			}
			if tc.name == "power loss after the last fsync" && len(stored) < before-int(inMemory) {
				t.Errorf("replayed %d records, want every one spilled before the fsync", len(stored))
			}
		})
	}
}

// readSegmentIDs returns the ids of the whole, valid records in data.
func readSegmentIDs(t *testing.T, data []byte) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "000001-x.seg")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rd, err := openSegmentReader(&segment{name: "x", path: path}, QuietLogger(), func(int, string, error) {})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.close()
	var ids []string
	for {
		rec, _, _, err := rd.next()
		if err == io.EOF {
			return ids
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.ID)
	}
}

func TestSpillBudgetAndRefusedWritesDropAndCount(t *testing.T) {
	t.Run("budget exhausted", func(t *testing.T) {
		var sizes [4]int
		for i := range sizes {
			f, err := appendFrame(nil, NewTestRecord(i), "")
			if err != nil {
				t.Fatal(err)
			}
			sizes[i] = len(f)
		}
		kept := int64(sizes[0] + sizes[1] + sizes[2])
		s, dropped := newTestSpill(t, t.TempDir(), 0, kept+int64(sizes[3]/2))
		appendRecords(t, s, 0, 3, "")
		frame, _ := appendFrame(nil, NewTestRecord(3), "")
		if s.append(frame, 1) {
			t.Fatal("append beyond the budget succeeded")
		}
		if *dropped != 1 {
			t.Errorf("dropped = %d, want 1", *dropped)
		}
		if got := s.size(); got != kept {
			t.Errorf("spill size = %d, want the 3 records kept (%d)", got, kept)
		}
		_ = s.close()
	})
	t.Run("disk refuses the write", func(t *testing.T) {
		dir := t.TempDir()
		s, dropped := newTestSpill(t, dir, 1, 1<<30) // every append rotates into a new segment
		appendRecords(t, s, 0, 2, "")
		// The directory vanishes (as good as a full disk for creating the
		// next segment): new records are dropped and counted, the existing
		// segments are kept.
		if err := os.Rename(dir, dir+".gone"); err != nil {
			t.Fatal(err)
		}
		frame, _ := appendFrame(nil, NewTestRecord(9), "")
		if s.append(frame, 1) {
			t.Fatal("append succeeded without a directory")
		}
		if *dropped != 1 {
			t.Errorf("dropped = %d, want 1", *dropped)
		}
		if err := os.Rename(dir+".gone", dir); err != nil {
			t.Fatal(err)
		}
		_ = s.close()
		if n := len(SegmentFiles(t, dir)); n != 2 {
			t.Errorf("%d segments, want the 2 written before", n)
		}
	})
}

func TestSpillAppendAfterCloseIsDurable(t *testing.T) {
	dir := t.TempDir()
	p := testPipeline(t, dir)
	appendRecords(t, p.spill, 0, 3, "")
	if err := p.spill.close(); err != nil {
		t.Fatal(err)
	}
	appendRecords(t, p.spill, 3, 5, "")
	p2 := testPipeline(t, dir)
	var n int
	for _, b := range replayAll(t, p2, p2.spill, 100) {
		n += len(b.Records)
	}
	if n != 5 {
		t.Errorf("replayed %d records, want 5", n)
	}
}

func TestSpillNamesAreUniqueAfterTheDirectoryEmpties(t *testing.T) {
	dir := t.TempDir()
	a := replayIDs(t, dir, func(s *spill) { appendRecords(t, s, 0, 3, "") })
	p := testPipeline(t, dir)
	replayAll(t, p, p.spill, 100) // empties the directory
	b := replayIDs(t, dir, func(s *spill) { appendRecords(t, s, 0, 3, "") })
	if a[0] == b[0] {
		t.Errorf("batch id %s reused for different records after the spill emptied", a[0])
	}
}
