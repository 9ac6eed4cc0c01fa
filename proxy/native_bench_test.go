package proxy

import "testing"

// BenchmarkInferenceResponses is BenchmarkInferenceChat on the native
// Responses door: the same pipeline, the body passed through to the
// mock's /responses.
func BenchmarkInferenceResponses(b *testing.B) {
	h, c := benchServer(b, false)
	benchRequests(b, c, "http://sluice"+responsesPath, "Bearer "+h.token,
		`{"model":"gpt-4o-mini","instructions":"You are a helpful assistant.","input":[{"role":"user","content":"Say hello to the benchmark, please."}],"max_output_tokens":64}`)
}
