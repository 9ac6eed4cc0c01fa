package proxy

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// cowMap is a copy-on-write map of series: readers load an immutable map
// through an atomic pointer, without a lock (the snapshot's pattern);
// add, which runs once per new label set, copies it under a mutex.
type cowMap[K comparable, V any] struct {
	p  atomic.Pointer[map[K]V]
	mu sync.Mutex // held by add only
}

// load returns the series of k, if it exists.
func (f *cowMap[K, V]) load(k K) (V, bool) {
	if m := f.p.Load(); m != nil {
		v, ok := (*m)[k]
		return v, ok
	}
	var zero V
	return zero, false
}

// add returns the series of k, made with mk when it does not exist yet.
func (f *cowMap[K, V]) add(k K, mk func() V) V {
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.p.Load()
	var n map[K]V
	if old != nil {
		if v, ok := (*old)[k]; ok {
			return v
		}
		n = make(map[K]V, len(*old)+1)
		for k, v := range *old {
			n[k] = v
		}
	} else {
		n = make(map[K]V, 1)
	}
	v := mk()
	n[k] = v
	f.p.Store(&n)
	return v
}

// all returns the current map; it must not be written.
func (f *cowMap[K, V]) all() map[K]V {
	if m := f.p.Load(); m != nil {
		return *m
	}
	return nil
}

// histogram is a Prometheus histogram over durationBucketsMS whose sum is
// kept in whole milliseconds (a record's latency_ms and ttfb_ms), so that
// it is exact and agrees with the request logs. Lock-free: observe adds
// the count before the bucket, and a scrape reads the buckets before the
// count, so that +Inf is never below a bucket.
type histogram struct {
	name   string // family name, without _bucket/_sum/_count
	labels string // the label list, without braces
	// buckets[i] counts the observations in (bound i-1, bound i].
	buckets [len(durationBucketsMS)]atomic.Uint64
	count   atomic.Uint64
	sumMS   atomic.Int64
}

func (h *histogram) observe(ms int64) {
	ms = max(ms, 0)
	h.count.Add(1)
	h.sumMS.Add(ms)
	for i, ub := range durationBucketsMS {
		if ms <= ub {
			h.buckets[i].Add(1)
			return
		}
	}
}

// leLabels are the le label values of durationBucketsMS, in seconds.
var leLabels = func() (l [len(durationBucketsMS)]string) {
	for i, ms := range durationBucketsMS {
		l[i] = strconv.FormatFloat(float64(ms)/1000, 'g', -1, 64)
	}
	return l
}()

// writeHistograms appends one histogram family in the text format,
// series in label order.
func writeHistograms(b []byte, hs map[durationKey]*histogram, ts map[gwProvider]*histogram) []byte {
	list := make([]*histogram, 0, len(hs)+len(ts))
	for _, h := range hs {
		list = append(list, h)
	}
	for _, h := range ts {
		list = append(list, h)
	}
	slices.SortFunc(list, func(a, b *histogram) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.labels, b.labels)
	})
	for i, h := range list {
		if i == 0 || list[i-1].name != h.name {
			b = append(b, "# TYPE "...)
			b = append(b, h.name...)
			b = append(b, " histogram\n"...)
		}
		var cum uint64
		for j := range h.buckets {
			cum += h.buckets[j].Load()
			b = h.appendSample(b, "_bucket", leLabels[j])
			b = strconv.AppendUint(b, cum, 10)
			b = append(b, '\n')
		}
		count := h.count.Load()
		b = h.appendSample(b, "_bucket", "+Inf")
		b = strconv.AppendUint(b, count, 10)
		b = append(b, '\n')
		b = h.appendSample(b, "_sum", "")
		b = strconv.AppendFloat(b, float64(h.sumMS.Load())/1000, 'g', -1, 64)
		b = append(b, '\n')
		b = h.appendSample(b, "_count", "")
		b = strconv.AppendUint(b, count, 10)
		b = append(b, '\n')
	}
	return b
}

// appendSample appends `name+suffix{labels[,le="le"]} `.
func (h *histogram) appendSample(b []byte, suffix, le string) []byte {
	b = append(b, h.name...)
	b = append(b, suffix...)
	b = append(b, '{')
	b = append(b, h.labels...)
	if le != "" {
		b = append(b, `,le="`...)
		b = append(b, le...)
		b = append(b, '"')
	}
	return append(b, "} "...)
}
