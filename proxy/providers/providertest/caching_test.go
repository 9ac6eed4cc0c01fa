package providertest

import (
	"strings"
	"testing"
)

// TestBedrockCachePoints: the words before the last cachePoint are
// written to the mock's prompt cache by the first request and read by the
// next (cacheWriteInputTokens, cacheReadInputTokens, apart from
// inputTokens); a model without prompt caching refuses cache points.
func TestBedrockCachePoints(t *testing.T) {
	s := start(t)
	body := `{"system":[{"text":"Be brief and exact."},{"cachePoint":{"type":"default"}}],` +
		`"messages":[{"role":"user","content":[{"text":"Tell me"}]}]}`
	want := []string{
		`"usage":{"inputTokens":2,"outputTokens":5,"totalTokens":11,"cacheReadInputTokens":0,"cacheWriteInputTokens":4}`,
		`"usage":{"inputTokens":2,"outputTokens":5,"totalTokens":11,"cacheReadInputTokens":4,"cacheWriteInputTokens":0}`,
	}
	for i, w := range want {
		resp := bedrockSignedPost(t, s, "/model/anthropic.claude-sonnet-4-5-v1%3A0/converse", body)
		got := readAll(t, resp)
		if resp.StatusCode != 200 || !strings.Contains(string(got), w) {
			t.Errorf("request %d: status %d %s\nwant %s", i, resp.StatusCode, got, w)
		}
	}
	resp := bedrockSignedPost(t, s, "/model/meta.llama3-70b-instruct-v1%3A0/converse", body)
	if got := readAll(t, resp); resp.StatusCode != 400 || !strings.Contains(string(got), "caching") {
		t.Errorf("llama with a cachePoint: status %d %s", resp.StatusCode, got)
	}
}

// TestBedrockStopSequence: the answer stops before a stop sequence the
// echo holds, with stopReason stop_sequence and, when asked, the
// sequence in additionalModelResponseFields.
func TestBedrockStopSequence(t *testing.T) {
	s := start(t)
	body := `{"messages":[{"role":"user","content":[{"text":"one two END three"}]}],"inferenceConfig":{"stopSequences":["END"]},` +
		`"additionalModelResponseFieldPaths":["/stop_sequence"]}`
	resp := bedrockSignedPost(t, s, "/model/anthropic.claude-sonnet-4-5-v1%3A0/converse", body)
	got := string(readAll(t, resp))
	if !strings.Contains(got, `{"text":"Hello from mock: one two "}]}},"stopReason":"stop_sequence","additionalModelResponseFields":{"stop_sequence":"END"}`) {
		t.Errorf("answer %s", got)
	}
}

// TestAnthropicCacheAndStop: cache_control breakpoints count cache
// writes, then reads; a stop sequence in the echo ends the answer with
// stop_reason stop_sequence and the sequence.
func TestAnthropicCacheAndStop(t *testing.T) {
	s := start(t)
	body := `{"model":"claude","max_tokens":50,"stop_sequences":["END"],` +
		`"system":[{"type":"text","text":"Be brief and exact.","cache_control":{"type":"ephemeral"}}],` +
		`"messages":[{"role":"user","content":"one two END three"}]}`
	want := []string{
		`"stop_reason":"stop_sequence","stop_sequence":"END","usage":{"input_tokens":4,"cache_creation_input_tokens":4,"cache_read_input_tokens":0,`,
		`"stop_reason":"stop_sequence","stop_sequence":"END","usage":{"input_tokens":4,"cache_creation_input_tokens":0,"cache_read_input_tokens":4,`,
	}
	for i, w := range want {
		resp := postAnthropic(t, s, "k", "2023-06-01", body)
		got := readAll(t, resp)
		if resp.StatusCode != 200 || !strings.Contains(string(got), w) {
			t.Errorf("request %d: status %d %s\nwant %s", i, resp.StatusCode, got, w)
		}
	}
}
