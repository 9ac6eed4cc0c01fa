package analytics

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// The spill is the pipeline's disk buffer: append-only segment files in
// PipelineConfig.Dir named "<seq>-<ulid>.seg" (seq orders them, the ULID
// makes every name unique for ever, so that batch ids derived from it never
// repeat even after the directory emptied and seq restarted at 1). Each
// record is one frame:
//
//	[length uint32 LE][CRC-32C of the payload uint32 LE][payload: JSON spillRecord]
//
// The payload is versioned (spillformat.go): a build replays the versions
// it knows and keeps a segment of a later one on disk.
//
// A segment is written by one process run only (a new run starts a new
// segment), sealed at segmentBytes or when the writer takes it for replay,
// and deleted once every record in it was acknowledged by Writer.Write.
const (
	defaultSegmentBytes = 64 << 20
	frameHeader         = 8
	// maxFramePayload refuses a record larger than a whole segment; such a
	// record is dropped and counted rather than written.
	maxFramePayload = defaultSegmentBytes
	segmentExt      = ".seg"
	// dropLogEvery rate-limits the log line about dropped records (disk
	// full, spill budget exhausted): the metric counts every one.
	dropLogEvery = time.Minute
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendFrame appends the frame of rec to dst. batchID is the id of the
// live batch rec belonged to when that batch was attempted before being
// spilled ("" for a record spilled from the queue).
func appendFrame(dst []byte, rec *Record, batchID string) ([]byte, error) {
	payload, err := encodeSpill(rec, batchID)
	if err != nil {
		return dst, fmt.Errorf("encode record %s: %w", rec.ID, err)
	}
	if len(payload) > maxFramePayload {
		return dst, fmt.Errorf("record %s is %d bytes, more than a segment", rec.ID, len(payload))
	}
	var h [frameHeader]byte
	binary.LittleEndian.PutUint32(h[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[4:8], crc32.Checksum(payload, castagnoli))
	dst = append(dst, h[:]...)
	return append(dst, payload...), nil
}

// segment is one spill file.
type segment struct {
	seq  uint64
	name string // file name without the extension, unique for ever
	path string
	size int64
	// f and synced belong to the active segment only: its open file and
	// how many of its bytes are known to be on stable storage.
	f      *os.File
	synced int64
}

// spillConfig configures a spill.
type spillConfig struct {
	dir          string
	maxBytes     int64
	segmentBytes int64
	log          *slog.Logger
	// dropped counts records that could not be spilled (disk full, budget
	// exhausted, unencodable); it is called without the spill's lock.
	dropped func(n int, reason string, err error)
}

// spill is the disk buffer. append is safe for concurrent use (Enqueue
// calls it on overflow); sync, takeSealed, remove and close are called by
// the pipeline's own goroutines.
type spill struct {
	cfg spillConfig

	// syncMu serialises sync and close, so that a file is never closed
	// while another call fsyncs it.
	syncMu sync.Mutex

	mu       sync.Mutex
	seq      uint64     // highest segment number in use
	active   *segment   // the segment appended to; nil until the next append
	sealed   []*segment // complete segments not yet handed to replay, oldest first
	unsynced []*os.File // files of sealed segments awaiting their final fsync
	dirDirty bool       // a segment was created or removed since the last directory fsync
	bytes    int64      // bytes of every segment on disk, those being replayed included
	closed   bool       // close was called: appends are written and fsync'd one by one
	late     *segment   // the segment of appends after close

	// kick (capacity 1) asks the syncer to fsync now, after a rotation. A
	// kick while one is pending is dropped: the pending one covers it.
	kick chan struct{}
}

// openSpill creates dir when missing and finds the segments a previous run
// left, which become the first to replay.
func openSpill(cfg spillConfig) (*spill, error) {
	if cfg.segmentBytes <= 0 {
		cfg.segmentBytes = defaultSegmentBytes
	}
	if err := os.MkdirAll(cfg.dir, 0o700); err != nil {
		return nil, fmt.Errorf("create spill directory: %w", err)
	}
	s := &spill{cfg: cfg, kick: make(chan struct{}, 1)}
	entries, err := os.ReadDir(cfg.dir)
	if err != nil {
		return nil, fmt.Errorf("read spill directory: %w", err)
	}
	for _, e := range entries {
		seg, ok := parseSegmentName(cfg.dir, e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("spill segment %s: %w", e.Name(), err)
		}
		seg.size = info.Size()
		s.sealed = append(s.sealed, seg)
		s.bytes += seg.size
		s.seq = max(s.seq, seg.seq)
	}
	sort.Slice(s.sealed, func(i, j int) bool {
		a, b := s.sealed[i], s.sealed[j]
		if a.seq != b.seq {
			return a.seq < b.seq
		}
		return a.name < b.name
	})
	return s, nil
}

// parseSegmentName recognises "<seq>-<id>.seg".
func parseSegmentName(dir, file string) (*segment, bool) {
	name, ok := strings.CutSuffix(file, segmentExt)
	if !ok {
		return nil, false
	}
	num, _, ok := strings.Cut(name, "-")
	if !ok {
		return nil, false
	}
	seq, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return nil, false
	}
	return &segment{seq: seq, name: name, path: filepath.Join(dir, file)}, true
}

// newSegmentLocked names the next segment.
func (s *spill) newSegmentLocked() *segment {
	s.seq++
	name := fmt.Sprintf("%06d-%s", s.seq, strings.ToLower(ulid.Make().String()))
	return &segment{seq: s.seq, name: name, path: filepath.Join(s.cfg.dir, name+segmentExt)}
}

// append writes buf, which holds n whole frames, to the active segment as
// one contiguous run: all or nothing. When the budget is exhausted or the
// disk refuses the write, the n records are dropped and counted, existing
// segments are kept, and append reports false.
func (s *spill) append(buf []byte, n int) bool {
	if n == 0 {
		return true
	}
	s.mu.Lock()
	reason, err := s.appendLocked(buf)
	s.mu.Unlock()
	if err != nil {
		s.cfg.dropped(n, reason, err)
		return false
	}
	return true
}

func (s *spill) appendLocked(buf []byte) (reason string, err error) {
	size := int64(len(buf))
	if s.bytes+size > s.cfg.maxBytes {
		return "spill budget exhausted", fmt.Errorf("spill holds %d bytes, the limit is %d", s.bytes, s.cfg.maxBytes)
	}
	if s.closed {
		return s.appendLateLocked(buf)
	}
	if s.active != nil && s.active.size > 0 && s.active.size+size > s.cfg.segmentBytes {
		s.rotateLocked()
	}
	if s.active == nil {
		seg := s.newSegmentLocked()
		f, err := os.OpenFile(seg.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if err != nil {
			s.seq-- // nothing was created
			return "spill write failed", fmt.Errorf("create spill segment: %w", err)
		}
		seg.f = f
		s.active = seg
		s.dirDirty = true
	}
	seg := s.active
	if _, err := seg.f.Write(buf); err != nil {
		// A short write left a torn frame at the end: cut it off, so that
		// later frames stay readable. If that fails too, seal the segment;
		// replay stops at its torn tail.
		if terr := seg.f.Truncate(seg.size); terr != nil {
			if st, serr := seg.f.Stat(); serr == nil {
				s.bytes += st.Size() - seg.size
				seg.size = st.Size()
			}
			s.rotateLocked()
		}
		return "spill write failed", fmt.Errorf("write spill segment %s: %w", seg.name, err)
	}
	seg.size += size
	s.bytes += size
	return "", nil
}

// appendLateLocked writes records enqueued after the pipeline stopped: each
// append is fsync'd before it returns, since no syncer runs any more.
func (s *spill) appendLateLocked(buf []byte) (reason string, err error) {
	created := false
	if s.late == nil {
		s.late = s.newSegmentLocked()
		created = true
	}
	f, err := os.OpenFile(s.late.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return "spill write failed", fmt.Errorf("open spill segment: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(buf); err != nil {
		if terr := f.Truncate(s.late.size); terr != nil {
			s.late = nil // a new segment for the next append; replay skips the torn tail
		}
		return "spill write failed", fmt.Errorf("write spill segment: %w", err)
	}
	if err := f.Sync(); err != nil {
		// The frames are in the file; only their durability is in doubt.
		s.cfg.log.Warn("fsync spill segment", "segment", s.late.name, "err", err)
	}
	if created {
		if err := syncDir(s.cfg.dir); err != nil {
			s.cfg.log.Warn("fsync spill directory", "err", err)
		}
	}
	s.late.size += int64(len(buf))
	s.bytes += int64(len(buf))
	return "", nil
}

// rotateLocked seals the active segment. Its file stays open until the
// syncer has fsync'd it, so that an append never waits for an fsync.
func (s *spill) rotateLocked() {
	seg := s.active
	if seg == nil {
		return
	}
	s.active = nil
	s.unsynced = append(s.unsynced, seg.f)
	seg.f = nil
	if seg.size > 0 {
		s.sealed = append(s.sealed, seg)
	} else {
		// Nothing was written: remove it rather than replay an empty file.
		_ = os.Remove(seg.path)
		s.dirDirty = true
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// takeSealed seals the active segment (when it holds anything) and returns
// every sealed segment, oldest first; the caller replays them.
func (s *spill) takeSealed() []*segment {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active != nil && s.active.size > 0 {
		s.rotateLocked()
	}
	segs := s.sealed
	s.sealed = nil
	return segs
}

// takeSealedOnly returns the sealed segments without sealing the active one.
func (s *spill) takeSealedOnly() []*segment {
	s.mu.Lock()
	defer s.mu.Unlock()
	segs := s.sealed
	s.sealed = nil
	return segs
}

// pending reports whether records wait on disk outside a replay.
func (s *spill) pending() (sealed, active bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sealed) > 0, s.active != nil && s.active.size > 0
}

// remove deletes a fully acknowledged segment.
func (s *spill) remove(seg *segment) error {
	err := os.Remove(seg.path)
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	s.mu.Lock()
	if err == nil {
		s.bytes -= seg.size
		s.dirDirty = true
	}
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("remove spill segment %s: %w", seg.name, err)
	}
	return nil
}

// size returns the bytes of the spill on disk.
func (s *spill) size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// sync fsyncs the active segment, the sealed ones not yet fsync'd (then
// closes them) and, after a segment was created or removed, the directory.
// Appends go on meanwhile: sync holds the spill's lock only to pick the
// files.
func (s *spill) sync() error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	unsynced := s.unsynced
	s.unsynced = nil
	active := s.active
	var f *os.File
	var size int64
	if active != nil && active.synced < active.size {
		f, size = active.f, active.size
	}
	dirDirty := s.dirDirty
	s.dirDirty = false
	s.mu.Unlock()

	var errs []error
	for _, uf := range unsynced {
		if err := uf.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("fsync spill segment: %w", err))
		}
		if err := uf.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close spill segment: %w", err))
		}
	}
	if f != nil {
		if err := f.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("fsync spill segment: %w", err))
		} else {
			s.mu.Lock()
			if s.active == active {
				active.synced = max(active.synced, size)
			}
			s.mu.Unlock()
		}
	}
	if dirDirty {
		if err := syncDir(s.cfg.dir); err != nil {
			errs = append(errs, fmt.Errorf("fsync spill directory: %w", err))
			s.mu.Lock()
			s.dirDirty = true
			s.mu.Unlock()
		}
	}
	return errors.Join(errs...)
}

// close fsyncs and closes every open segment. Appends after close still
// succeed: each is written and fsync'd on its own.
func (s *spill) close() error {
	err := s.sync()
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	if s.active != nil {
		// Written after the sync above: fsync it here.
		if err := s.active.f.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("fsync spill segment: %w", err))
		}
		if err := s.active.f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close spill segment: %w", err))
		}
		if s.active.size > 0 {
			s.sealed = append(s.sealed, s.active)
		} else {
			_ = os.Remove(s.active.path)
		}
		s.active = nil
	}
	for _, f := range s.unsynced {
		if err := f.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("fsync spill segment: %w", err))
		}
		_ = f.Close()
	}
	s.unsynced = nil
	if err := syncDir(s.cfg.dir); err != nil {
		errs = append(errs, fmt.Errorf("fsync spill directory: %w", err))
	}
	return errors.Join(errs...)
}

// syncDir fsyncs a directory, making the creation and removal of its files
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// segmentReader reads the frames of one sealed segment in order.
type segmentReader struct {
	seg *segment
	f   *os.File
	r   *bufio.Reader
	off int64 // offset of the next frame
	log *slog.Logger
	// dropped counts records lost to corruption.
	dropped func(n int, reason string, err error)
	buf     []byte
}

func openSegmentReader(seg *segment, log *slog.Logger, dropped func(int, string, error)) (*segmentReader, error) {
	f, err := os.Open(seg.path)
	if err != nil {
		return nil, fmt.Errorf("open spill segment %s: %w", seg.name, err)
	}
	return &segmentReader{seg: seg, f: f, r: bufio.NewReaderSize(f, 256<<10), log: log, dropped: dropped}, nil
}

// next returns the next record, its frame's offset and the batch id it was
// spilled with. It returns io.EOF at the end of the segment, a torn tail
// included (logged). A frame whose checksum or JSON is bad is skipped,
// logged and counted as dropped. A frame of a format version this build
// does not read stops the segment with an error: nothing is dropped, and
// the file stays for a build that reads it.
func (sr *segmentReader) next() (*Record, int64, string, error) {
	for {
		off := sr.off
		var h [frameHeader]byte
		n, err := io.ReadFull(sr.r, h[:])
		if err == io.EOF {
			return nil, 0, "", io.EOF
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				sr.torn(off, fmt.Sprintf("a %d-byte frame header", n))
				return nil, 0, "", io.EOF
			}
			return nil, 0, "", fmt.Errorf("read spill segment %s: %w", sr.seg.name, err)
		}
		length := binary.LittleEndian.Uint32(h[0:4])
		sum := binary.LittleEndian.Uint32(h[4:8])
		if length == 0 || length > maxFramePayload {
			// A length no writer produces: the rest of the file cannot be
			// framed (a torn write, or zeros from a crash).
			sr.torn(off, fmt.Sprintf("a frame length of %d", length))
			return nil, 0, "", io.EOF
		}
		if cap(sr.buf) < int(length) {
			sr.buf = make([]byte, length)
		}
		payload := sr.buf[:length]
		if _, err := io.ReadFull(sr.r, payload); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
				sr.torn(off, "a frame cut short")
				return nil, 0, "", io.EOF
			}
			return nil, 0, "", fmt.Errorf("read spill segment %s: %w", sr.seg.name, err)
		}
		sr.off = off + frameHeader + int64(length)
		if crc32.Checksum(payload, castagnoli) != sum {
			sr.log.Error("analytics spill: skipped a record with a bad checksum", "segment", sr.seg.name, "offset", off)
			sr.dropped(1, "corrupt spill record", errors.New("checksum mismatch"))
			continue
		}
		rec, batch, err := decodeSpill(payload)
		if verr, ok := errors.AsType[*spillVersionError](err); ok {
			return nil, 0, "", fmt.Errorf("spill segment %s, record at offset %d: %w; the segment is kept on disk, unread, "+
				"for a build that reads it (or for inspection)", sr.seg.name, off, verr)
		}
		if err != nil {
			sr.log.Error("analytics spill: skipped an unreadable record", "segment", sr.seg.name, "offset", off, "err", err)
			sr.dropped(1, "corrupt spill record", err)
			continue
		}
		return rec, off, batch, nil
	}
}

func (sr *segmentReader) torn(off int64, what string) {
	sr.log.Warn("analytics spill: skipped the torn tail of a segment (the process stopped mid-write)",
		"segment", sr.seg.name, "offset", off, "found", what)
	sr.dropped(1, "torn spill record", errors.New("torn tail"))
}

func (sr *segmentReader) close() { _ = sr.f.Close() }

// replayer reads sealed segments, oldest first, as batches.
type replayer struct {
	p    *Pipeline
	segs []*segment // segs[0] is being read
	rd   *segmentReader
	peek *spilledRecord // read ahead of the last batch
}

type spilledRecord struct {
	rec   *Record
	off   int64
	batch string
}

// next returns the next batch and, when that batch ends its segment, the
// segment (to remove once the batch is acknowledged). Records spilled
// with a batch id form that batch again; others are grouped by up to limit
// under the id "spill-<segment>-<offset of the first>". ok is false when
// every segment was read.
func (rp *replayer) next(limit int) (b *Batch, done *segment, ok bool) {
	for len(rp.segs) > 0 {
		seg := rp.segs[0]
		if rp.rd == nil {
			rd, err := openSegmentReader(seg, rp.p.log, rp.p.drop)
			if err != nil {
				// Left on disk for the next start.
				rp.p.log.Error("analytics spill: cannot replay a segment", "err", err)
				rp.segs = rp.segs[1:]
				continue
			}
			rp.rd, rp.peek = rd, nil
		}
		first, err := rp.read()
		if first == nil {
			rp.endSegment()
			if err == nil {
				// Every record of it was acknowledged (or it held none).
				if rerr := rp.p.spill.remove(seg); rerr != nil {
					rp.p.log.Error("analytics spill", "err", rerr)
				}
			} else {
				rp.p.log.Error("analytics spill: replay of a segment stopped; it stays for the next start", "err", err)
			}
			continue
		}
		b = &Batch{ID: first.batch, Records: []*Record{first.rec}}
		if b.ID == "" {
			b.ID = "spill-" + seg.name + "-" + strconv.FormatInt(first.off, 10)
		}
		for {
			nx, err := rp.read()
			if nx == nil {
				rp.endSegment()
				if err != nil {
					rp.p.log.Error("analytics spill: replay of a segment stopped; it stays for the next start", "err", err)
					return b, nil, true
				}
				return b, seg, true
			}
			if nx.batch != first.batch || (first.batch == "" && len(b.Records) >= limit) {
				rp.peek = nx
				return b, nil, true
			}
			b.Records = append(b.Records, nx.rec)
		}
	}
	return nil, nil, false
}

// read returns the read-ahead record or the next one; nil at the end of
// the segment, with an error when reading failed.
func (rp *replayer) read() (*spilledRecord, error) {
	if rp.peek != nil {
		r := rp.peek
		rp.peek = nil
		return r, nil
	}
	rec, off, batch, err := rp.rd.next()
	if err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, err
	}
	return &spilledRecord{rec: rec, off: off, batch: batch}, nil
}

func (rp *replayer) endSegment() {
	rp.rd.close()
	rp.rd, rp.peek = nil, nil
	rp.segs = rp.segs[1:]
}

func (rp *replayer) close() {
	if rp.rd != nil {
		rp.rd.close()
		rp.rd = nil
	}
}
