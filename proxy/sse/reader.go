// Package sse reads and writes Server-Sent Events (the text/event-stream
// format of the HTML Living Standard, §9.2) as the gateway needs them:
// a streaming reader for upstream bodies, and append-style writers for the
// chunks the proxy relays to clients.
package sse

import (
	"bytes"
	"errors"
	"io"
)

// ErrEventTooLarge is returned by Reader.Next when an event, or a single
// line, is larger than the reader's limit.
var ErrEventTooLarge = errors.New("sse: event larger than the limit")

// DefaultMaxEvent is the event size limit NewReader uses when given a
// limit of zero or less.
const DefaultMaxEvent = 1 << 20

// initialBufSize is the first read buffer: a typical OpenAI chunk is
// 200–800 bytes, so a few of them fit and a reader for a short answer never
// grows. The buffer doubles as needed up to the event limit.
const initialBufSize = 4 << 10

// Event is one dispatched event. Its slices belong to the Reader and are
// valid until the next call to Next.
type Event struct {
	// Name is the event type ("event:" field), empty when none was given.
	Name []byte
	// Data is the event's data lines joined with "\n".
	Data []byte
	// ID is the event's "id:" field, empty when it had none.
	ID []byte
}

// Reader parses an event stream incrementally. Lines may end in CRLF, CR
// or LF; an event may arrive split across any number of reads, including
// in the middle of a multi-byte UTF-8 sequence (lines are only split at
// ASCII CR and LF, so such a sequence is never cut).
//
// A Reader is not safe for concurrent use.
type Reader struct {
	src io.Reader
	max int

	buf        []byte // read buffer; buf[start:end] is unparsed input
	start, end int

	// The event being assembled. They are reused between events, so
	// steady-state parsing does not allocate.
	data, name, id []byte
	hasData        bool // a data field was seen (an empty one counts)
	pending        bool // any field was seen: EOF now would cut an event

	skipLF  bool // the last line ended in CR: a following LF belongs to it
	started bool // the first line was read (a leading BOM is dropped then)
	srcErr  error
	err     error // sticky result once the stream is over or broken
}

// NewReader returns a Reader of r that refuses events (and lines) larger
// than maxEvent bytes; maxEvent <= 0 means DefaultMaxEvent.
func NewReader(r io.Reader, maxEvent int) *Reader {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEvent
	}
	return &Reader{src: r, max: maxEvent}
}

// Reset makes r read a new stream from src with the same limit, keeping
// its buffers, so that an owner can pool Readers.
func (r *Reader) Reset(src io.Reader) {
	*r = Reader{src: src, max: r.max, buf: r.buf[:cap(r.buf)], data: r.data[:0], name: r.name[:0], id: r.id[:0]}
}

// Next returns the next event. At the clean end of the stream (EOF on an
// event boundary) it returns io.EOF; EOF in the middle of an event or line
// returns io.ErrUnexpectedEOF; an event over the limit returns
// ErrEventTooLarge. Read errors of the source are returned as they are.
// Errors are sticky.
//
// Comment lines (":…") and "retry:" fields are skipped, as are unknown
// fields. Following the standard, a block of lines without any "data:"
// field dispatches nothing.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	r.data, r.name, r.id = r.data[:0], r.name[:0], r.id[:0]
	r.hasData, r.pending = false, false
	for {
		line, ok := r.line()
		if !ok {
			if err := r.fill(); err != nil {
				r.err = err
				return Event{}, err
			}
			continue
		}
		if len(line) == 0 {
			if r.hasData {
				return Event{Name: r.name, Data: r.data, ID: r.id}, nil
			}
			r.name, r.id = r.name[:0], r.id[:0]
			r.pending = false
			continue
		}
		if err := r.field(line); err != nil {
			r.err = err
			return Event{}, err
		}
	}
}

// line returns the next complete line without its terminator, and false
// when buf holds no complete line. The slice points into buf.
func (r *Reader) line() ([]byte, bool) {
	if r.skipLF && r.start < r.end {
		if r.buf[r.start] == '\n' {
			r.start++
		}
		r.skipLF = false
	}
	b := r.buf[r.start:r.end]
	// Two IndexByte scans (vectorised) beat one IndexAny over "\r\n".
	i := bytes.IndexByte(b, '\n')
	limit := b
	if i >= 0 {
		limit = b[:i]
	}
	if j := bytes.IndexByte(limit, '\r'); j >= 0 {
		// CR ends the line; a directly following LF is part of it. When
		// the CR is the last byte read so far, skipLF decides later.
		r.start += j + 1
		if j+1 < len(b) {
			if b[j+1] == '\n' {
				r.start++
			}
		} else {
			r.skipLF = true
		}
		return r.strip(b[:j]), true
	}
	if i < 0 {
		return nil, false
	}
	r.start += i + 1
	return r.strip(b[:i]), true
}

// strip drops a UTF-8 byte order mark at the very start of the stream.
func (r *Reader) strip(line []byte) []byte {
	if !r.started {
		r.started = true
		line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
	}
	return line
}

// field applies one non-empty line to the event being assembled.
func (r *Reader) field(line []byte) error {
	if line[0] == ':' {
		return nil // comment
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) { // no allocation: the compiler compares in place
	case "data":
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.hasData = true
	case "event":
		r.name = append(r.name[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.id = append(r.id[:0], value...)
		}
	default:
		return nil // retry and unknown fields
	}
	r.pending = true
	if len(r.data)+len(r.name)+len(r.id) > r.max {
		return ErrEventTooLarge
	}
	return nil
}

// fill reads more input. It returns the error that ends the stream: the
// source's error, io.EOF at a clean end, io.ErrUnexpectedEOF inside an
// event, or ErrEventTooLarge when a line does not fit the limit.
func (r *Reader) fill() error {
	if r.srcErr != nil {
		if r.srcErr != io.EOF {
			return r.srcErr
		}
		if r.start < r.end || r.pending {
			return io.ErrUnexpectedEOF
		}
		return io.EOF
	}
	if r.start > 0 {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.start = 0
	}
	if r.end == len(r.buf) {
		// A line plus its CRLF may take max+2 bytes.
		if len(r.buf) >= r.max+2 {
			return ErrEventTooLarge
		}
		n := max(2*len(r.buf), initialBufSize)
		n = min(n, r.max+2)
		buf := make([]byte, n)
		copy(buf, r.buf[:r.end])
		r.buf = buf
	}
	// A reader may return 0, nil; give up after a few such reads as
	// bufio does, rather than spin.
	for range 100 {
		n, err := r.src.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			r.srcErr = err
			return nil // parse what arrived; the error surfaces next time
		}
		if n > 0 {
			return nil
		}
	}
	return io.ErrNoProgress
}
