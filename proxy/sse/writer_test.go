package sse

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/openaischema"
)

func TestAppendData(t *testing.T) {
	got := string(AppendData([]byte("x"), []byte(`{"a":1}`)))
	if want := "xdata: {\"a\":1}\n\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if string(Done) != "data: [DONE]\n\n" {
		t.Errorf("Done is %q", Done)
	}
}

func TestAppendError(t *testing.T) {
	tests := []struct{ typ, code, msg, want string }{
		{"upstream_error", "upstream_error", "openai answered 500", "openai answered 500"},
		{"content_policy", "content_blocked", "quote \" backslash \\ newline \n nul \x00 del \x7f", "quote \" backslash \\ newline \n nul \x00 del \x7f"},
		{"a", "b", "bad \xff\xfe end, \u2028 \u2029 🎉", "bad \ufffd\ufffd end, \u2028 \u2029 🎉"},
		{"", "", "", ""},
	}
	for _, tt := range tests {
		out := string(AppendError(nil, tt.typ, tt.code, tt.msg))
		data, ok := strings.CutPrefix(out, "data: ")
		if !ok || !strings.HasSuffix(data, "\n\n") || strings.Count(out, "\n") != 2 {
			t.Fatalf("not one data event: %q", out)
		}
		var got struct {
			Error struct{ Type, Code, Message string }
		}
		if err := json.Unmarshal([]byte(data), &got); err != nil {
			t.Fatalf("invalid JSON %q: %v", data, err)
		}
		openaischema.Check(t, openaischema.Error, "the error event", []byte(strings.TrimSpace(data)))
		if diff := cmp.Diff(tt.want, got.Error.Message); diff != "" || got.Error.Type != tt.typ || got.Error.Code != tt.code {
			t.Errorf("round trip of %q: type %q code %q message diff:\n%s", tt.msg, got.Error.Type, got.Error.Code, diff)
		}
		if strings.ContainsAny(data, "\u2028\u2029") {
			t.Errorf("unescaped line separator in %q", data)
		}
	}
}

func BenchmarkAppendError(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendError(buf[:0], "upstream_error", "upstream_error", "the upstream stream broke: unexpected EOF")
	}
}
