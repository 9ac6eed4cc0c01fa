package providertest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLongAnswer: a Step with AnswerTokens answers that many tokens, or
// stops at the maximum output the request sets in its wire format's field
// with that format's "length" finish reason; PromptTokens replaces the
// prompt count.
func TestLongAnswer(t *testing.T) {
	formats := []struct {
		name string
		// body is a request, capped at max output tokens when max > 0.
		body func(max int) string
		send func(t *testing.T, s *Server, body string) *http.Response
		read func(t *testing.T, b []byte) got
		// length and normal are the finish reasons of a cut and a whole
		// answer.
		length, normal string
	}{
		{
			name: "openai max_tokens",
			body: func(max int) string { return openAIBody("max_tokens", max) },
			send: func(t *testing.T, s *Server, body string) *http.Response {
				return post(t, s, "/v1/chat/completions", testKey, body)
			},
			read: readOpenAI, length: "length", normal: "stop",
		},
		{
			name: "openai max_completion_tokens",
			body: func(max int) string { return openAIBody("max_completion_tokens", max) },
			send: func(t *testing.T, s *Server, body string) *http.Response {
				return post(t, s, "/v1/chat/completions", testKey, body)
			},
			read: readOpenAI, length: "length", normal: "stop",
		},
		{
			name: "azure",
			body: func(max int) string { return openAIBody("max_tokens", max) },
			send: func(t *testing.T, s *Server, body string) *http.Response {
				return postAzure(t, s, azureChatPath, testKey, body)
			},
			read: readOpenAI, length: "length", normal: "stop",
		},
		{
			name: "anthropic",
			body: func(max int) string {
				if max == 0 {
					max = 100000 // required by the API
				}
				return `{"model":"claude-x","max_tokens":` + itoa(max) + `,"messages":[{"role":"user","content":"hi there"}]}`
			},
			send: func(t *testing.T, s *Server, body string) *http.Response {
				return postAnthropic(t, s, testKey, "2023-06-01", body)
			},
			read: func(t *testing.T, b []byte) got {
				var a struct {
					Content    []struct{ Text string }
					StopReason string `json:"stop_reason"`
					Usage      struct {
						Input  int `json:"input_tokens"`
						Output int `json:"output_tokens"`
					}
				}
				must(t, json.Unmarshal(b, &a))
				return got{a.Usage.Input, a.Usage.Output, a.StopReason, len(strings.Fields(a.Content[0].Text))}
			},
			length: "max_tokens", normal: "end_turn",
		},
		{
			name: "gemini",
			body: func(max int) string {
				gc := ""
				if max > 0 {
					gc = `,"generationConfig":{"maxOutputTokens":` + itoa(max) + `}`
				}
				return `{"contents":[{"role":"user","parts":[{"text":"hi there"}]}]` + gc + `}`
			},
			send: func(t *testing.T, s *Server, body string) *http.Response {
				return geminiPost(t, s, "/v1beta/models/gemini-x:generateContent", testKey, body)
			},
			read: func(t *testing.T, b []byte) got {
				var g geminiTestResponse
				must(t, json.Unmarshal(b, &g))
				c := g.Candidates[0]
				return got{g.UsageMetadata.PromptTokenCount, g.UsageMetadata.CandidatesTokenCount, c.FinishReason,
					len(strings.Fields(c.Content.Parts[0].Text))}
			},
			length: "MAX_TOKENS", normal: "STOP",
		},
		{
			name: "bedrock",
			body: func(max int) string {
				ic := ""
				if max > 0 {
					ic = `,"inferenceConfig":{"maxTokens":` + itoa(max) + `}`
				}
				return `{"messages":[{"role":"user","content":[{"text":"hi there"}]}]` + ic + `}`
			},
			send: func(t *testing.T, s *Server, body string) *http.Response {
				return bedrockSignedPost(t, s, "/model/amazon.nova-lite-v1:0/converse", body)
			},
			read: func(t *testing.T, b []byte) got {
				var a bedrockAnswer
				must(t, json.Unmarshal(b, &a))
				return got{a.Usage.InputTokens, a.Usage.OutputTokens, a.StopReason, len(strings.Fields(*a.Output.Message.Content[0].Text))}
			},
			length: "max_tokens", normal: "end_turn",
		},
		{
			name: "cohere",
			body: func(max int) string {
				mt := ""
				if max > 0 {
					mt = `,"max_tokens":` + itoa(max)
				}
				return `{"model":"command-x","messages":[{"role":"user","content":"hi there"}]` + mt + `}`
			},
			send: func(t *testing.T, s *Server, body string) *http.Response {
				return post(t, s, "/v2/chat", testKey, body)
			},
			read: func(t *testing.T, b []byte) got {
				var c struct {
					Message struct {
						Content []struct{ Text string }
					}
					FinishReason string `json:"finish_reason"`
					Usage        struct {
						Tokens struct {
							Input  int `json:"input_tokens"`
							Output int `json:"output_tokens"`
						}
					}
				}
				must(t, json.Unmarshal(b, &c))
				return got{c.Usage.Tokens.Input, c.Usage.Tokens.Output, c.FinishReason, len(strings.Fields(c.Message.Content[0].Text))}
			},
			length: "MAX_TOKENS", normal: "COMPLETE",
		},
	}
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			s := start(t)
			s.Script(Step{AnswerTokens: 500, PromptTokens: 77, Times: 2})
			for _, tc := range []struct {
				max  int
				want got
			}{
				{0, got{77, 500, f.normal, 500}},
				{120, got{77, 120, f.length, 120}},
				{0, got{2, 5, f.normal, 5}}, // the script is used up: the echo
			} {
				resp := f.send(t, s, f.body(tc.max))
				b := readAll(t, resp)
				if resp.StatusCode != 200 {
					t.Fatalf("max %d: status %d: %s", tc.max, resp.StatusCode, b)
				}
				if diff := cmp.Diff(tc.want, f.read(t, b)); diff != "" {
					t.Errorf("max %d: answer (-want +got):\n%s", tc.max, diff)
				}
			}
		})
	}
}

func openAIBody(field string, max int) string {
	mt := ""
	if max > 0 {
		mt = `,"` + field + `":` + itoa(max)
	}
	return `{"model":"gpt-x","messages":[{"role":"user","content":"hi there"}]` + mt + `}`
}

// got is what TestLongAnswer reads of an answer: the usage, the finish
// reason and the words of the text.
type got struct {
	Prompt, Completion int
	Finish             string
	Words              int
}

func readOpenAI(t *testing.T, b []byte) (g got) {
	var o struct {
		Choices []struct {
			Message      struct{ Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		}
	}
	must(t, json.Unmarshal(b, &o))
	g.Prompt, g.Completion, g.Finish = o.Usage.Prompt, o.Usage.Completion, o.Choices[0].FinishReason
	g.Words = len(strings.Fields(o.Choices[0].Message.Content))
	return g
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
