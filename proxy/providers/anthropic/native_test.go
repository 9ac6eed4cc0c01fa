package anthropic

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
)

// TestNativeStreamGolden: a Messages stream (thinking with its signature,
// text, cache reads and writes) is relayed event by event as it came,
// ping included, with the usage of message_start and message_delta.
func TestNativeStreamGolden(t *testing.T) {
	in, err := os.ReadFile("testdata/native/messages_stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	out, u, err := codectest.RelayAll(providers.NewNativeReader(messagesWire{}, bytes.NewReader(in), ""))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, in) {
		t.Errorf("relayed\n%s\nwant it as it came\n%s", out, in)
	}
	want := llm.Usage{PromptTokens: 2125, CompletionTokens: 42, TotalTokens: 2167, CachedTokens: 2000, CacheCreationTokens: 100, Present: true}
	if u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
}

func TestNativeStreamErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, err string }{
		{"cut before message_stop", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n", "the stream ended before its last event"},
		{"error event", "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", "Overloaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := codectest.RelayAll(providers.NewNativeReader(messagesWire{}, strings.NewReader(tc.in), ""))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

func TestNativeAnswer(t *testing.T) {
	body := []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hi"}],` +
		`"stop_reason":"end_turn","usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":20,"output_tokens":3}}`)
	resp, err := decodeNative(body, &providers.Request{Op: llm.OpMessages})
	want := llm.Usage{PromptTokens: 35, CompletionTokens: 3, TotalTokens: 38, CachedTokens: 20, CacheCreationTokens: 5, Present: true}
	if err != nil || resp.Usage != want || resp.Model != "claude-sonnet-4-5" || !bytes.Equal(resp.Body, body) {
		t.Errorf("resp %+v, err %v", resp, err)
	}
	resp, err = decodeNative([]byte(`{"input_tokens":12}`), &providers.Request{Op: llm.OpCountTokens})
	if err != nil || resp.Usage != (llm.Usage{Present: true}) || string(resp.Body) != `{"input_tokens":12}` {
		t.Errorf("count %+v, err %v", resp, err)
	}
	if _, err := decodeNative([]byte(`{"type":"error","error":{"type":"api_error","message":"x"}}`), &providers.Request{Op: llm.OpMessages}); err == nil {
		t.Error("an error object with 200 is no answer")
	}
}

func TestNativeEncode(t *testing.T) {
	req := &providers.Request{Op: llm.OpMessages, Wire: llm.WireAnthropicMessages, Model: "claude-sonnet-4-5-20250929",
		Body:            []byte(`{"model":"claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":"hi"}]}`),
		MaxOutputTokens: 64, Header: map[string][]string{"Anthropic-Version": {"2023-06-01"}, "Anthropic-Beta": {"b1"}},
		Cred: providers.Credential{BaseURL: "http://up/v1"}}
	enc, err := encodeNative(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(enc.HTTP.Body); got != `{"model":"claude-sonnet-4-5-20250929","stream":true,"messages":[{"role":"user","content":"hi"}],"max_tokens":64}` {
		t.Errorf("body %s", got)
	}
	if enc.HTTP.Path != "v1/messages" || enc.HTTP.BaseURL != "http://up" || enc.HTTP.Header.Get("Anthropic-Beta") != "b1" {
		t.Errorf("request %+v", enc.HTTP)
	}
	req.Op = llm.OpCountTokens
	if enc, _ = encodeNative(req); enc.HTTP.Path != "v1/messages/count_tokens" || bytes.Contains(enc.HTTP.Body, []byte("max_tokens")) {
		t.Errorf("count %s %s", enc.HTTP.Path, enc.HTTP.Body)
	}
}

func FuzzNativeStream(f *testing.F) {
	if in, err := os.ReadFile("testdata/native/messages_stream.sse"); err == nil {
		f.Add(in)
	}
	f.Add([]byte("event: message_delta\ndata: {\"usage\":{\"output_tokens\":-1}}\n\nevent: message_stop\ndata: {}\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		st := providers.NewNativeReader(messagesWire{}, bytes.NewReader(in), "")
		defer st.Close()
		for range 10000 {
			frame, err := st.Next()
			if err != nil {
				return
			}
			if !bytes.HasSuffix(frame, []byte("\n\n")) || bytes.Contains(frame[:len(frame)-2], []byte("\n\n")) {
				t.Fatalf("frame %q is not one event", frame)
			}
			if u := st.Usage(); u.PromptTokens < 0 || u.CompletionTokens < 0 {
				t.Fatalf("usage %+v", u)
			}
		}
	})
}
