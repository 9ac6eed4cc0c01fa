package gemini

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/proxy/providers"
)

// BenchmarkGeminiStream translates a 20-event text stream.
func BenchmarkGeminiStream(b *testing.B) {
	var sb strings.Builder
	for range 20 {
		sb.WriteString("data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Hello there\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 3,\"totalTokenCount\": 3},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"r-1\"}\r\n\r\n")
	}
	sb.WriteString("data: {\"candidates\": [{\"content\": {\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 3,\"candidatesTokenCount\": 20,\"totalTokenCount\": 23},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"r-1\"}\r\n\r\n")
	data := []byte(sb.String())
	req := &providers.Request{Model: "gemini-2.5-flash", ClientWantsUsage: true}
	now := time.Unix(1700000000, 0)
	r := bytes.NewReader(data)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r.Reset(data)
		s := newGeminiStream(r, req, now)
		for {
			if _, err := s.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}
