package proxy

import (
	"testing"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/llm"
)

// benchResponsesBody is benchBody in the Responses shape.
const benchResponsesBody = `{"model":"openai/gpt-4o-mini","instructions":"You are a helpful assistant.",` +
	`"input":[{"role":"user","content":"Summarise the plot of Hamlet in two sentences, please."}],"temperature":0.2,"max_output_tokens":128}`

// benchChatAnswer is an OpenAI chat answer of the size the mock gives.
const benchChatAnswer = `{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion","created":1741569952,"model":"gpt-4o-mini-2024-07-18",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"Prince Hamlet seeks revenge on his uncle Claudius, who murdered Hamlet's father.","refusal":null},` +
	`"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":41,"completion_tokens":18,"total_tokens":59}}`

// BenchmarkInferenceCompatResponses is BenchmarkInferenceChat on the
// compat Responses door: the same request in the Responses shape,
// translated to the mock's OpenAI chat wire and its answer back.
func BenchmarkInferenceCompatResponses(b *testing.B) {
	h, c := benchServer(b, false)
	benchRequests(b, c, "http://sluice"+compatResponsesPath, "Bearer "+h.token, benchResponsesBody)
}

// BenchmarkResponsesDoor is the door's own work on one request: the
// decode of the Responses body into a chat body, and the answer back.
func BenchmarkResponsesDoor(b *testing.B) {
	body, answer := []byte(benchResponsesBody), []byte(benchChatAnswer)
	var p fastjson.Parser
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		d := new(responsesDoor)
		if _, e := d.decode(&p, body, llm.OpResponses); e != nil {
			b.Fatal(e)
		}
		d.answer(answer)
	}
}
