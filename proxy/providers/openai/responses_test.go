package openai

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
)

// TestResponsesStreamGolden: a Responses stream is relayed event by event
// as it came, and its usage read from response.completed.
func TestResponsesStreamGolden(t *testing.T) {
	in, err := os.ReadFile("testdata/native/responses_stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	out, u, err := codectest.RelayAll(providers.NewNativeReader(responsesWire{}, bytes.NewReader(in), ""))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, in) {
		t.Errorf("relayed\n%s\nwant it as it came\n%s", out, in)
	}
	want := llm.Usage{PromptTokens: 12, CompletionTokens: 6, TotalTokens: 18, CachedTokens: 4, ReasoningTokens: 2, Present: true}
	if u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
}

func TestResponsesStreamEnds(t *testing.T) {
	for _, tc := range []struct{ name, in, err string }{
		{"cut before response.completed", "event: response.created\ndata: {\"type\":\"response.created\"}\n\n", "the stream ended before its last event"},
		{"error event", "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"boom\"}\n\n", "boom"},
		{"not JSON where usage is read", "event: response.completed\ndata: {\n\n", providers.ErrInvalidResponse},
		{"no event names", "data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":1,\"output_tokens\":2}}}\n\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, u, err := codectest.RelayAll(providers.NewNativeReader(responsesWire{}, strings.NewReader(tc.in), ""))
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.err == "":
				if u.PromptTokens != 1 || u.CompletionTokens != 2 || !bytes.HasPrefix(out, []byte("data: {")) {
					t.Errorf("out %q usage %+v", out, u)
				}
			case err == nil || !strings.Contains(err.Error(), tc.err):
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

func TestResponsesAnswer(t *testing.T) {
	body, err := os.ReadFile("testdata/native/responses.json")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := providers.NativeAnswer(responsesWire{}, body, "")
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Usage{PromptTokens: 12, CompletionTokens: 6, TotalTokens: 18, Present: true}
	if resp.Usage != want || resp.Model != "gpt-4.1" || !bytes.Equal(resp.Body, body) {
		t.Errorf("usage %+v model %q", resp.Usage, resp.Model)
	}
	if _, err := providers.NativeAnswer(responsesWire{}, []byte(`{"error":{"message":"bad key"}}`), ""); err == nil {
		t.Error("an error object with 200 is no answer")
	}
}

// FuzzResponsesStream: any upstream bytes are relayed or refused, never a
// panic, and every relayed frame is one SSE event that reads back as the
// event it came from.
func FuzzResponsesStream(f *testing.F) {
	if in, err := os.ReadFile("testdata/native/responses_stream.sse"); err == nil {
		f.Add(in)
	}
	f.Add([]byte("event: error\ndata: {}\n\n"))
	f.Add([]byte("data: a\ndata: b\n\n: comment\n\nevent: response.completed\ndata: {\"response\":{\"usage\":{}}}\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		st := providers.NewNativeReader(responsesWire{}, bytes.NewReader(in), "")
		defer st.Close()
		for range 10000 {
			frame, err := st.Next()
			if err != nil {
				return
			}
			if !bytes.HasSuffix(frame, []byte("\n\n")) || bytes.Contains(frame[:len(frame)-2], []byte("\n\n")) {
				t.Fatalf("frame %q is not one event", frame)
			}
		}
	})
}
