package bedrock

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkBedrockStream translates a 20-delta text stream.
func BenchmarkBedrockStream(b *testing.B) {
	frames := []frame{ev("messageStart", `{"role":"assistant"}`)}
	for range 20 {
		frames = append(frames, ev("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hello there"}}`))
	}
	frames = append(frames, ev("messageStop", `{"stopReason":"end_turn"}`),
		ev("metadata", `{"usage":{"inputTokens":25,"outputTokens":40,"totalTokens":65},"metrics":{"latencyMs":100}}`))
	data := encodeBedrockFrames(b, frames)
	r := bytes.NewReader(data)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r.Reset(data)
		s := newBedrockStream(r, testMeta, true, cred(""))
		for {
			if _, err := s.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
		s.Close()
	}
}
