package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/openaischema"
)

// TestGoldenAnswersConformToOpenAI checks every answer the translating
// adapters' golden tests pin — complete answers, each stream chunk and
// embeddings — against OpenAI's published schema (internal/openaischema),
// so that a golden file cannot pin a shape the OpenAI SDKs would not
// read. The goldens are what the adapters produce: a golden test fails
// when an adapter's output differs from its file.
func TestGoldenAnswersConformToOpenAI(t *testing.T) {
	for _, g := range []struct {
		pattern string
		schema  string
		lines   bool // one chunk per line, among other lines
	}{
		{"anthropic/testdata/responses/*.out.json", openaischema.ChatCompletion, false},
		{"anthropic/testdata/streams/*.out", openaischema.ChatCompletionChunk, true},
		{"gemini/testdata/responses/*.openai.json", openaischema.ChatCompletion, false},
		{"gemini/testdata/streams/*.chunks", openaischema.ChatCompletionChunk, true},
		{"bedrock/testdata/answer_*.golden", openaischema.ChatCompletion, false},
		{"bedrock/testdata/stream_*.golden", openaischema.ChatCompletionChunk, true},
		{"cohere/testdata/responses/*.out.json", openaischema.ChatCompletion, false},
		{"cohere/testdata/streams/*.out", openaischema.ChatCompletionChunk, true},
		{"cohere/testdata/embed/*.out", openaischema.Embeddings, false},
	} {
		files, err := filepath.Glob(g.pattern)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no golden files (%v)", g.pattern, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !g.lines {
				openaischema.Check(t, g.schema, f, answerOf(t, f, b))
				continue
			}
			n := 0
			for i, line := range bytes.Split(b, []byte("\n")) {
				if bytes.HasPrefix(line, []byte("{")) {
					n++
					openaischema.Check(t, g.schema, fmt.Sprintf("%s:%d", f, i+1), line)
				}
			}
			if n == 0 && !strings.Contains(f, "cut") && !strings.Contains(f, "error") && !strings.Contains(f, "crc") &&
				!strings.Contains(f, "frame") && !strings.Contains(f, "lengths") && !strings.Contains(f, "throttled") {
				t.Errorf("%s holds no chunk", f)
			}
		}
	}
}

// answerOf returns the answer a golden file pins: its first JSON value,
// or that value's "answer" when the golden wraps it with the usage.
func answerOf(t *testing.T, name string, b []byte) []byte {
	t.Helper()
	var first json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&first); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var wrapped struct {
		Answer json.RawMessage `json:"answer"`
	}
	if json.Unmarshal(first, &wrapped) == nil && wrapped.Answer != nil {
		return wrapped.Answer
	}
	return first
}
