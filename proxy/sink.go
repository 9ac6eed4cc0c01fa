package proxy

import (
	"sync"

	"github.com/sluicehq/sluice/analytics"
)

// Sink receives the record of every inference request, rejected ones too
// (401 aside). Enqueue must never block the request: the analytics
// pipeline buffers and spills; it owns rec after the call.
type Sink interface {
	Enqueue(rec *analytics.Record)
}

// MemorySink keeps the last Max records in memory. It serves tests and
// processes without analytics.
type MemorySink struct {
	Max  int // default 10000
	mu   sync.Mutex
	recs []*analytics.Record
}

// Enqueue keeps rec, dropping the oldest record beyond Max.
func (m *MemorySink) Enqueue(rec *analytics.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	max := m.Max
	if max <= 0 {
		max = 10000
	}
	if len(m.recs) >= max {
		copy(m.recs, m.recs[1:])
		m.recs = m.recs[:len(m.recs)-1]
	}
	m.recs = append(m.recs, rec)
}

// Records returns a copy of the kept records, oldest first.
func (m *MemorySink) Records() []analytics.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]analytics.Record, len(m.recs))
	for i, r := range m.recs {
		out[i] = *r
	}
	return out
}
