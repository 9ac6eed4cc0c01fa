package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// ev is an Event copied out of the Reader, for comparisons.
type ev struct{ Name, Data, ID string }

// readAll reads every event of r and the error that ended the stream.
func readAll(r *Reader) ([]ev, error) {
	var out []ev
	for {
		e, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev{string(e.Name), string(e.Data), string(e.ID)})
	}
}

// chunkReader returns the input in pieces of the given sizes, in turn.
type chunkReader struct {
	b     []byte
	sizes []int
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := c.sizes[c.i%len(c.sizes)]
	c.i++
	n = min(n, len(p), len(c.b))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}

func TestReader(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []ev
		wantErr error
	}{
		{
			name: "openai",
			in: "data: {\"id\":\"1\",\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
				"data: {\"id\":\"1\",\"choices\":[],\"usage\":{\"prompt_tokens\":3}}\n\n" +
				"data: [DONE]\n\n",
			want: []ev{
				{Data: `{"id":"1","choices":[{"delta":{"content":"Hi"}}]}`},
				{Data: `{"id":"1","choices":[],"usage":{"prompt_tokens":3}}`},
				{Data: "[DONE]"},
			},
			wantErr: io.EOF,
		},
		{
			name: "anthropic named events",
			in: "event: message_start\ndata: {\"type\":\"message_start\"}\n\n" +
				"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			want: []ev{
				{Name: "message_start", Data: `{"type":"message_start"}`},
				{Name: "ping", Data: `{"type": "ping"}`},
				{Name: "message_stop", Data: `{"type":"message_stop"}`},
			},
			wantErr: io.EOF,
		},
		{
			name:    "crlf",
			in:      "event: a\r\ndata: 1\r\ndata: 2\r\n\r\ndata: 3\r\n\r\n",
			want:    []ev{{Name: "a", Data: "1\n2"}, {Data: "3"}},
			wantErr: io.EOF,
		},
		{
			name:    "cr only",
			in:      "data: 1\rdata: 2\r\rdata: 3\r\r",
			want:    []ev{{Data: "1\n2"}, {Data: "3"}},
			wantErr: io.EOF,
		},
		{
			name:    "mixed endings",
			in:      "data: a\r\n\ndata: b\r\rdata: c\n\r\n",
			want:    []ev{{Data: "a"}, {Data: "b"}, {Data: "c"}},
			wantErr: io.EOF,
		},
		{
			name:    "comments retry and unknown fields",
			in:      ": keep-alive\n\nretry: 3000\nfoo: bar\ndata: x\n: inside\n\n:\n\n",
			want:    []ev{{Data: "x"}},
			wantErr: io.EOF,
		},
		{
			name:    "id and no space after colon",
			in:      "id:7\nevent:e\ndata:x\n\nid: 8\ndata:  two spaces\n\n",
			want:    []ev{{Name: "e", Data: "x", ID: "7"}, {Data: " two spaces", ID: "8"}},
			wantErr: io.EOF,
		},
		{
			name:    "empty data dispatches empty event",
			in:      "data\n\ndata:\ndata:\n\n",
			want:    []ev{{Data: ""}, {Data: "\n"}},
			wantErr: io.EOF,
		},
		{
			name:    "event without data dispatches nothing",
			in:      "event: lonely\n\ndata: y\n\n",
			want:    []ev{{Data: "y"}},
			wantErr: io.EOF,
		},
		{
			name:    "bom",
			in:      "\xef\xbb\xbfdata: z\n\n",
			want:    []ev{{Data: "z"}},
			wantErr: io.EOF,
		},
		{
			name:    "utf8",
			in:      "data: {\"content\":\"héllo wörld 日本語 🎉\"}\n\n",
			want:    []ev{{Data: `{"content":"héllo wörld 日本語 🎉"}`}},
			wantErr: io.EOF,
		},
		{
			name:    "empty stream",
			in:      "",
			wantErr: io.EOF,
		},
		{
			name:    "eof without blank line",
			in:      "data: 1\n\ndata: [DONE]\n",
			want:    []ev{{Data: "1"}},
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name:    "eof mid line",
			in:      "data: {\"a\":",
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name:    "eof after comment line",
			in:      "data: 1\n\n: bye\n",
			want:    []ev{{Data: "1"}},
			wantErr: io.EOF,
		},
	}
	splits := map[string][]int{
		"whole":    {1 << 20},
		"bytes":    {1},
		"mixed":    {3, 1, 7, 2},
		"odd":      {5},
		"straddle": {8, 1},
	}
	for _, tt := range tests {
		for sname, sizes := range splits {
			t.Run(tt.name+"/"+sname, func(t *testing.T) {
				r := NewReader(&chunkReader{b: []byte(tt.in), sizes: sizes}, 0)
				got, err := readAll(r)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("got error %v, want %v", err, tt.wantErr)
				}
				if _, err2 := r.Next(); err2 != err {
					t.Errorf("error not sticky: got %v after %v", err2, err)
				}
			})
		}
	}
}

func TestReaderSplitUTF8(t *testing.T) {
	// "é" is C3 A9 and "🎉" is F0 9F 8E 89: cut inside both.
	in := []byte("data: caf\xc3\xa9 \xf0\x9f\x8e\x89\n\n")
	cut1 := bytes.IndexByte(in, 0xc3) + 1
	cut2 := bytes.IndexByte(in, 0xf0) + 2
	r := NewReader(io.MultiReader(
		bytes.NewReader(in[:cut1]), bytes.NewReader(in[cut1:cut2]), bytes.NewReader(in[cut2:]),
	), 0)
	got, err := readAll(r)
	if want := []ev{{Data: "café 🎉"}}; !cmp.Equal(got, want) || err != io.EOF {
		t.Errorf("got %q, %v; want %q, EOF", got, err, want)
	}
}

func TestReaderLimit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
	}{
		{"one long line", "data: " + strings.Repeat("x", 100) + "\n\n", 64},
		{"many lines", strings.Repeat("data: "+strings.Repeat("x", 20)+"\n", 10) + "\n", 64},
		{"endless line", strings.Repeat("y", 10000), 64},
		{"long comment", ":" + strings.Repeat("c", 200) + "\n\ndata: ok\n\n", 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(iotest.HalfReader(strings.NewReader(tt.in)), tt.max)
			_, err := readAll(r)
			if !errors.Is(err, ErrEventTooLarge) {
				t.Errorf("got %v, want ErrEventTooLarge", err)
			}
		})
	}
	// Exactly at the limit is fine.
	in := "data: " + strings.Repeat("x", 58) + "\r\n\r\n"
	got, err := readAll(NewReader(strings.NewReader(in), 64))
	if len(got) != 1 || err != io.EOF {
		t.Errorf("at the limit: got %d events, %v", len(got), err)
	}
}

func TestReaderSourceError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("data: 1\n\ndata: 2"), iotest.ErrReader(boom)), 0)
	got, err := readAll(r)
	if len(got) != 1 || err != boom {
		t.Errorf("got %q, %v; want one event and boom", got, err)
	}
}

func TestReaderNoProgress(t *testing.T) {
	r := NewReader(zeroReader{}, 0)
	if _, err := r.Next(); err != io.ErrNoProgress {
		t.Errorf("got %v, want io.ErrNoProgress", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

// serialize writes events back as an event stream.
func serialize(evs []ev) []byte {
	var b []byte
	for _, e := range evs {
		if e.Name != "" {
			b = append(b, "event: "+e.Name+"\n"...)
		}
		if e.ID != "" {
			b = append(b, "id: "+e.ID+"\n"...)
		}
		for line := range strings.SplitSeq(e.Data, "\n") {
			b = append(b, "data: "+line+"\n"...)
		}
		b = append(b, '\n')
	}
	return b
}

// FuzzReader checks that parsing never panics, does not depend on how the
// input is split into reads, and that re-serialised events parse back to
// the same events.
func FuzzReader(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[]}\n\ndata: [DONE]\n\n"), uint8(3))
	f.Fuzz(func(t *testing.T, in []byte, split uint8) {
		for _, limit := range []int{0, 256} {
			whole, errWhole := readAll(NewReader(bytes.NewReader(in), limit))
			sizes := []int{int(split%16) + 1, int(split>>4) + 1}
			parts, errParts := readAll(NewReader(&chunkReader{b: in, sizes: sizes}, limit))
			if !cmp.Equal(whole, parts) || errWhole != errParts {
				t.Fatalf("limit %d: split reads differ: %q, %v vs %q, %v", limit, whole, errWhole, parts, errParts)
			}
			for _, e := range whole {
				if strings.ContainsAny(e.Name+e.ID, "\r\n") || strings.Contains(e.Data, "\r") {
					t.Fatalf("line break inside a field: %q", e)
				}
			}
			if errWhole != io.EOF {
				continue
			}
			again, err := readAll(NewReader(bytes.NewReader(serialize(whole)), 0))
			if err != io.EOF || !cmp.Equal(whole, again) {
				t.Fatalf("re-serialised events differ: %q vs %q (%v)", whole, again, err)
			}
		}
	})
}

func BenchmarkReader(b *testing.B) {
	chunk := `data: {"id":"chatcmpl-AbC123","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n"
	in := []byte(strings.Repeat(chunk, 100) + "data: [DONE]\n\n")
	rd := bytes.NewReader(in)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	r := NewReader(rd, 0)
	for b.Loop() {
		rd.Reset(in)
		r.Reset(rd)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}
