package bench

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStatTicks(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       uint64
		wantErr    bool
	}{
		{"plain", "4242 (sluice) S 1 4242 4242 0 -1 4194560 1200 0 0 0 150 37 0 0 20 0 9 0 100 0 0", 187, false},
		{"name with spaces and parentheses", "7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 1 0 0", 11, false},
		{"truncated", "7 (x) R 1 7 7", 0, true},
		{"no name", "7 R 1", 0, true},
		{"not a number", "7 (x) R 1 7 7 0 -1 0 0 0 0 0 a 6 0", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatTicks([]byte(tc.stat))
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %t", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("got %d ticks, want %d", got, tc.want)
			}
		})
	}
}

func TestParseHWM(t *testing.T) {
	got, err := parseHWM([]byte("Name:\tsluice\nVmPeak:\t 1300 kB\nVmHWM:\t   45678 kB\nVmRSS:\t 40000 kB\n"))
	if err != nil || got != 45678*1024 {
		t.Errorf("got %d, %v; want %d", got, err, 45678*1024)
	}
	if _, err := parseHWM([]byte("Name:\tsluice\n")); err == nil {
		t.Error("no VmHWM line: got no error")
	}
}

func TestParseBusyTicks(t *testing.T) {
	got, err := parseBusyTicks([]byte("cpu  100 5 30 9000 7 3 2 1 0 0\ncpu0 50 2 15 4500 3 1 1 0 0 0\n"))
	if err != nil || got != 135 {
		t.Errorf("got %d, %v; want 135 (user+nice+system)", got, err)
	}
	if _, err := parseBusyTicks([]byte("intr 1 2 3\n")); err == nil {
		t.Error("no cpu line: got no error")
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {90, 90 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := percentile(d, tc.p); got != tc.want {
			t.Errorf("p%g = %s, want %s", tc.p, got, tc.want)
		}
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one sample = %s, want it", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("p50 of nothing = %s, want 0", got)
	}
}

func TestHasContent(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`, false},
		{`data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}`, true},
		{`data: {"choices":[{"delta":{"role":"assistant","content":""}}]}` + "\n\n" + `data: {"choices":[{"delta":{"content": "lo"}}]}`, true},
		{`data: {"choices":[{"delta":{"content":`, false},
		{`data: [DONE]`, false},
	} {
		if got := hasContent([]byte(tc.in)); got != tc.want {
			t.Errorf("hasContent(%s) = %t, want %t", tc.in, got, tc.want)
		}
	}
}

// TestHasString covers the first content event of the Messages and
// Responses doors' streams: the opening events carry empty strings.
func TestHasString(t *testing.T) {
	text, delta := []byte(`"text":`), []byte(`"delta":`)
	for _, tc := range []struct {
		in   string
		key  []byte
		want bool
	}{
		{`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, text, false},
		{`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`, text, true},
		{`event: response.content_part.added` + "\n" + `data: {"type":"response.content_part.added","part":{"type":"output_text","text":""}}`, delta, false},
		{`event: response.output_text.delta` + "\n" + `data: {"type":"response.output_text.delta","delta":"Hel"}`, delta, true},
	} {
		if got := hasString([]byte(tc.in), tc.key); got != tc.want {
			t.Errorf("hasString(%s, %s) = %t, want %t", tc.in, tc.key, got, tc.want)
		}
	}
}

func TestDoorTargets(t *testing.T) {
	ds := doorTargets("http://127.0.0.1:1", "sk-x")
	var got []string
	for _, d := range ds {
		got = append(got, d.plain.url, d.stream.url)
		if !d.stream.stream || d.plain.stream || d.stream.contentKey == nil || d.stream.done == nil {
			t.Errorf("%s: streamed target %+v, plain %+v", d.name, d.stream, d.plain)
		}
		for _, b := range [][]byte{d.plain.body, d.stream.body} {
			if !json.Valid(b) {
				t.Errorf("%s: body is not JSON: %s", d.name, b)
			}
		}
	}
	want := []string{
		"http://127.0.0.1:1/v1/bench/prod/compat/v1/messages", "http://127.0.0.1:1/v1/bench/prod/compat/v1/messages",
		"http://127.0.0.1:1/v1/bench/prod/openai/responses", "http://127.0.0.1:1/v1/bench/prod/openai/responses",
		"http://127.0.0.1:1/v1/bench/prod/compat/responses", "http://127.0.0.1:1/v1/bench/prod/compat/responses",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("URLs (-want +got):\n%s", diff)
	}
}

func TestJudgeDoors(t *testing.T) {
	r := &Report{Throughput: Throughput{CPUPerRequestMS: 0.1}, Doors: []Door{
		{Name: "messages", OverChatP50MS: 0.04, StreamAddedP50MS: 0.2, CPUOverChatMS: 0.005},
		{Name: "responses", OverChatP50MS: 0.06, StreamAddedP50MS: 0.4, CPUOverChatMS: 0.02},
	}}
	r.judge()
	var met []bool
	for _, tg := range r.Targets[4:] {
		met = append(met, tg.Met)
	}
	if diff := cmp.Diff([]bool{true, true, true, false, false, false}, met); diff != "" {
		t.Errorf("door verdicts (-want +got):\n%s\n%+v", diff, r.Targets)
	}
	if r.Targets[6].Limit != 0.01 {
		t.Errorf("CPU limit %g ms, want 10%% of 0.1 ms", r.Targets[6].Limit)
	}
}

func TestEnvWithout(t *testing.T) {
	got := envWithout([]string{"PATH=/bin", "SLUICE_DATABASE_URL=postgres://x", "HOME=/root", "SLUICE_LISTEN=:80"}, "SLUICE_")
	if diff := cmp.Diff([]string{"PATH=/bin", "HOME=/root"}, got); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

func TestConfigValidate(t *testing.T) {
	c := Config{Gateway: []string{"sluice"}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Duration != DefaultDuration || c.Rate != DefaultRate || c.Concurrency != DefaultConcurrency || c.Warmup != time.Second {
		t.Errorf("defaults: %+v", c)
	}
	for name, bad := range map[string]Config{
		"no gateway":      {},
		"tiny duration":   {Gateway: []string{"sluice"}, Duration: time.Millisecond},
		"negative rate":   {Gateway: []string{"sluice"}, Rate: -1},
		"huge fan-out":    {Gateway: []string{"sluice"}, Concurrency: 100000},
		"negative warmup": {Gateway: []string{"sluice"}, Warmup: -time.Second},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%s: got no error", name)
		}
	}
}

func TestTail(t *testing.T) {
	tl := &tail{max: 8}
	tl.Write([]byte("hello "))
	tl.Write([]byte("world\n"))
	if got := string(tl.b); got != "o world\n" {
		t.Errorf("kept %q, want the last 8 bytes", got)
	}
}

func TestOtherProcessesSum(t *testing.T) {
	o := OtherProcesses{Phases: []PhaseShare{{Phase: "a", Share: 0, Seconds: 10}, {Phase: "b", Share: 0.5, Seconds: 10}}}
	o.sum()
	if o.CPUS != 5 || o.Seconds != 20 || o.Share != 0.25 {
		t.Errorf("got %+v, want 5 CPU-seconds over 20 s, share 0.25", o)
	}
}

// TestSettle: settle returns at the first window in which the process
// spent less than the share of it, and not before, with that reading.
func TestSettle(t *testing.T) {
	readings := []float64{0, 0.5, 1.0, 1.0, 9}
	n := 0
	cpu := func() (float64, error) {
		v := readings[n]
		n++
		return v, nil
	}
	got, err := settle(t.Context(), cpu, time.Millisecond, 0.1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 || got != 1.0 {
		t.Errorf("read the CPU time %d times and returned %v, want 4 times (settled at the third window) and 1.0", n, got)
	}
}

// TestCPUMeterDrain: drain extends the window to the process's CPU time
// once it settled, here this idle test's own.
func TestCPUMeterDrain(t *testing.T) {
	m := &cpuMeter{pid: os.Getpid()}
	for { // spend a few clock ticks of CPU first
		if s, err := cpuSeconds(m.pid); err != nil || s >= 0.03 {
			break
		}
	}
	if err := m.drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if m.seconds() <= 0 {
		t.Errorf("window after drain: %v s of CPU, want this process's so far", m.seconds())
	}
	var none *cpuMeter
	if err := none.drain(t.Context()); err != nil {
		t.Errorf("drain of no meter: %v", err)
	}
}
