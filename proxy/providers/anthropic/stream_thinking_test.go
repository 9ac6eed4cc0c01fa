package anthropic

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
)

// TestAnthropicStreamThinking: asked (providers.Request.ThinkingBlocks),
// the translator relays thinking as reasoning_content and the signature
// and redacted thinking as thinking_blocks; not asked, it relays neither,
// as before.
func TestAnthropicStreamThinking(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testdata, "streams", "thinking.sse"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		asked bool
	}{{"thinking", false}, {"thinking_blocks", true}} {
		t.Run(tt.name, func(t *testing.T) {
			got := translateStream(t, data, streamContext{created: 1700000000, model: "requested-model",
				wantUsage: true, key: codectest.TestKey, thinkingBlocks: tt.asked})
			if has := bytes.Contains(got, []byte("reasoning_content")) || bytes.Contains(got, []byte("thinking_blocks")); has != tt.asked {
				t.Errorf("thinking relayed=%v, want %v:\n%s", has, tt.asked, got)
			}
			codectest.Golden(t, filepath.Join(testdata, "streams", tt.name+".out"), got)
		})
	}
}
