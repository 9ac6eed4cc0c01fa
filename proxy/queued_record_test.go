package proxy

import (
	"runtime"
	"testing"
)

// TestQueuedRecordMemory (issue 17): what the sink keeps of a request
// until its record is written is the record, its spans and its strings,
// not the request's whole call (about 2 KiB with the upstream's answer
// and the parsed request it points to). With the record inside the call
// a queued chat record held 4.5–4.7 KiB of heap; it holds about 2.4 KiB
// (the mock's own record of each request included).
func TestQueuedRecordMemory(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	body := chatBody("openai/gpt-4o-mini", "")
	chat := func(n int) {
		for range n {
			if resp, b := h.chat(body); resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
		}
	}
	chat(100)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n = 2000
	chat(n)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := len(h.sink.Records()); got != n+100 {
		t.Fatalf("the sink holds %d records, want %d", got, n+100)
	}
	perRecord := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d bytes of heap per queued record", perRecord)
	if perRecord > 3500 {
		t.Errorf("%d bytes of heap per queued record, want under 3500: does the record keep the call alive?", perRecord)
	}
}
