package providertest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// openAIToolChat is a chat completion with one tool and the given
// tool_choice, and extra fields (a leading comma) appended.
func openAIToolChat(choice, extra string) string {
	return `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Please echo cats"}],` +
		`"tools":[{"type":"function","function":{"name":"echo"}},{"type":"function","function":{"name":"other"}}],` +
		`"tool_choice":` + choice + extra + `}`
}

// TestOpenAIToolCalls: a chat whose tool_choice forces a call is answered
// with one tool call, plain and streamed; auto, none and a conversation
// ending in a tool result are answered with text.
func TestOpenAIToolCalls(t *testing.T) {
	s := start(t)
	type call struct {
		ID       string
		Type     string
		Index    int
		Function struct{ Name, Arguments string }
	}
	type answer struct {
		Choices []struct {
			Message struct {
				Content   *string
				ToolCalls []call `json:"tool_calls"`
			}
			Delta struct {
				ToolCalls []call `json:"tool_calls"`
			}
			FinishReason *string `json:"finish_reason"`
		}
	}
	for _, tc := range []struct{ choice, name string }{
		{`"required"`, "echo"},
		{`{"type":"function","function":{"name":"other"}}`, "other"},
	} {
		a := decode[answer](t, readAll(t, post(t, s, "/v1/chat/completions", testKey, openAIToolChat(tc.choice, ""))))
		c := a.Choices[0]
		if *c.FinishReason != "tool_calls" || c.Message.Content != nil || len(c.Message.ToolCalls) != 1 {
			t.Fatalf("tool_choice %s: %+v", tc.choice, c)
		}
		got := c.Message.ToolCalls[0]
		if got.Type != "function" || got.Function.Name != tc.name || !strings.HasPrefix(got.ID, "call_mock_") ||
			got.Function.Arguments != `{"text":"Please echo cats"}` {
			t.Fatalf("tool_choice %s: call %+v", tc.choice, got)
		}

		// Streamed: the id and name, then the arguments in pieces.
		events, err := readSSE(t, post(t, s, "/v1/chat/completions", testKey, openAIToolChat(tc.choice, `,"stream":true`)), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var name, id, args, finish string
		for _, e := range events {
			if e.data == "[DONE]" {
				continue
			}
			ch := decode[answer](t, []byte(e.data)).Choices[0]
			for _, d := range ch.Delta.ToolCalls {
				if d.Index != 0 {
					t.Fatalf("tool call index %d", d.Index)
				}
				name += d.Function.Name
				id += d.ID
				args += d.Function.Arguments
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
		if name != tc.name || !strings.HasPrefix(id, "call_mock_") || args != `{"text":"Please echo cats"}` || finish != "tool_calls" {
			t.Fatalf("streamed tool call %q %q %q, finish %q", name, id, args, finish)
		}
	}

	for _, body := range []string{
		openAIToolChat(`"auto"`, ""),
		openAIToolChat(`"none"`, ""),
		`{"model":"gpt-4o-mini","tools":[{"type":"function","function":{"name":"echo"}}],"tool_choice":"required","messages":[` +
			`{"role":"user","content":"Please echo cats"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"echo","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":"cats"}]}`,
	} {
		a := decode[answer](t, readAll(t, post(t, s, "/v1/chat/completions", testKey, body)))
		c := a.Choices[0]
		if *c.FinishReason != "stop" || c.Message.Content == nil || *c.Message.Content != "Hello from mock: Please echo cats" {
			t.Fatalf("%s: %+v", body, c)
		}
	}
}

// TestGeminiToolCalls: function calling mode ANY is answered with a
// functionCall part, plain and streamed; a function response turn is
// answered with text about the question.
func TestGeminiToolCalls(t *testing.T) {
	s := start(t)
	tools := `"tools":[{"functionDeclarations":[{"name":"echo"},{"name":"other"}]}]`
	type part struct {
		Text         string
		FunctionCall *struct {
			Name string
			Args json.RawMessage
		}
	}
	type answer struct {
		Candidates []struct {
			Content      struct{ Parts []part }
			FinishReason string
		}
	}
	check := func(what string, a answer, name string) {
		t.Helper()
		c := a.Candidates[0]
		if c.FinishReason != "STOP" || len(c.Content.Parts) != 1 || c.Content.Parts[0].FunctionCall == nil {
			t.Fatalf("%s: %+v", what, c)
		}
		fc := c.Content.Parts[0].FunctionCall
		if fc.Name != name || string(fc.Args) != `{"text":"Please echo cats"}` {
			t.Fatalf("%s: functionCall %s %s", what, fc.Name, fc.Args)
		}
	}
	user := `{"role":"user","parts":[{"text":"Please echo cats"}]}`
	for _, tc := range []struct{ config, name string }{
		{`{"functionCallingConfig":{"mode":"ANY"}}`, "echo"},
		{`{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["other"]}}`, "other"},
	} {
		body := `{"contents":[` + user + `],` + tools + `,"toolConfig":` + tc.config + `}`
		check("plain", decode[answer](t, readAll(t, geminiPost(t, s, "/v1beta/models/gemini-2.5-flash:generateContent", "k", body))), tc.name)
		events, err := readSSE(t, geminiPost(t, s, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "k", body), time.Now())
		if err != nil || len(events) != 1 {
			t.Fatalf("streamed function call: %d events, %v", len(events), err)
		}
		check("streamed", decode[answer](t, []byte(strings.TrimRight(events[0].data, "\r"))), tc.name)
	}

	result := `{"contents":[` + user + `,{"role":"model","parts":[{"functionCall":{"name":"echo","args":{}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"echo","response":{"content":"cats"}}}]}],` +
		tools + `,"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}}`
	a := decode[answer](t, readAll(t, geminiPost(t, s, "/v1beta/models/gemini-2.5-flash:generateContent", "k", result)))
	if got := a.Candidates[0].Content.Parts; len(got) != 1 || got[0].Text != "Hello from mock: Please echo cats" {
		t.Fatalf("after a function response: %+v", a.Candidates[0])
	}
}

// TestJSONAnswers: a request for JSON output is answered with JSON in the
// OpenAI, Gemini and Cohere formats, plain and streamed.
func TestJSONAnswers(t *testing.T) {
	s := start(t)
	const want = `{"text":"Hello from mock: Answer in JSON"}`
	user := `"messages":[{"role":"user","content":"Answer in JSON"}]`
	for _, format := range []string{`{"type":"json_object"}`, `{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object"}}}`} {
		body := `{"model":"gpt-4o-mini",` + user + `,"response_format":` + format
		got := decode[chatResponse](t, readAll(t, post(t, s, "/v1/chat/completions", testKey, body+`}`))).Choices[0].Message.Content
		if got != want {
			t.Errorf("openai %s: content %s", format, got)
		}
		events, err := readSSE(t, post(t, s, "/v1/chat/completions", testKey, body+`,"stream":true}`), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(contents(t, events), ""); got != want {
			t.Errorf("openai %s streamed: %s", format, got)
		}
	}

	gemini := `{"contents":[{"role":"user","parts":[{"text":"Answer in JSON"}]}],"generationConfig":{"responseMimeType":"application/json"}}`
	g := decode[geminiTestResponse](t, readAll(t, geminiPost(t, s, "/v1beta/models/gemini-2.5-flash:generateContent", "k", gemini)))
	if got := g.Candidates[0].Content.Parts[0].Text; got != want {
		t.Errorf("gemini: %s", got)
	}
	events, err := readSSE(t, geminiPost(t, s, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "k", gemini), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var streamed string
	for _, e := range events {
		if c := decode[geminiTestResponse](t, []byte(strings.TrimRight(e.data, "\r"))).Candidates; len(c) > 0 && len(c[0].Content.Parts) > 0 {
			streamed += c[0].Content.Parts[0].Text
		}
	}
	if streamed != want {
		t.Errorf("gemini streamed: %s", streamed)
	}

	cohere := `{"model":"command-a-03-2025",` + user + `,"response_format":{"type":"json_object"}}`
	var c struct {
		Message struct{ Content []struct{ Text string } }
	}
	if err := json.Unmarshal(readAll(t, post(t, s, "/v2/chat", testKey, cohere)), &c); err != nil || len(c.Message.Content) != 1 || c.Message.Content[0].Text != want {
		t.Errorf("cohere: %+v %v", c, err)
	}
}

// TestResponsesToolCallsAndJSON: a Responses request whose tool_choice
// forces a call is answered with a function_call item, plain and streamed;
// after its output, with text; text.format json_schema with JSON.
func TestResponsesToolCallsAndJSON(t *testing.T) {
	s := start(t)
	tools := `"tools":[{"type":"function","name":"echo","parameters":{"type":"object"}}]`
	type item struct {
		Type, Status, Arguments, Name string
		CallID                        string `json:"call_id"`
		Content                       []struct{ Text string }
	}
	type response struct{ Output []item }
	for _, choice := range []string{`"required"`, `{"type":"function","name":"echo"}`} {
		body := `{"model":"gpt-4.1","input":"Please echo cats",` + tools + `,"tool_choice":` + choice
		out := decode[response](t, readAll(t, postResponses(t, s, body+`}`))).Output
		if len(out) != 1 || out[0].Type != "function_call" || out[0].Name != "echo" || out[0].Status != "completed" ||
			out[0].Arguments != `{"text":"Please echo cats"}` || out[0].CallID == "" {
			t.Fatalf("tool_choice %s: %+v", choice, out)
		}
		events, err := readSSE(t, postResponses(t, s, body+`,"stream":true}`), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var args, done string
		var final response
		for _, e := range events {
			var ev struct {
				Type, Delta, Arguments string
				Response               response
			}
			if err := json.Unmarshal([]byte(e.data), &ev); err != nil {
				t.Fatal(err)
			}
			switch ev.Type {
			case "response.function_call_arguments.delta":
				args += ev.Delta
			case "response.function_call_arguments.done":
				done = ev.Arguments
			case "response.completed":
				final = ev.Response
			}
		}
		if args != `{"text":"Please echo cats"}` || done != args || len(final.Output) != 1 || final.Output[0].Arguments != args {
			t.Fatalf("streamed call: deltas %q, done %q, final %+v", args, done, final)
		}
	}

	after := `{"model":"gpt-4.1",` + tools + `,"tool_choice":"required","input":[{"role":"user","content":"Please echo cats"},` +
		`{"type":"function_call","call_id":"c1","name":"echo","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"cats"}]}`
	if out := decode[response](t, readAll(t, postResponses(t, s, after))).Output; len(out) != 1 || out[0].Type != "message" ||
		out[0].Content[0].Text != "Hello from mock: Please echo cats" {
		t.Fatalf("after the call's output: %+v", out)
	}

	j := `{"model":"gpt-4.1","input":"Answer in JSON","text":{"format":{"type":"json_schema","name":"a","schema":{"type":"object"}}}}`
	if out := decode[response](t, readAll(t, postResponses(t, s, j))).Output; len(out) != 1 || out[0].Content[0].Text != `{"text":"Hello from mock: Answer in JSON"}` {
		t.Fatalf("json_schema: %+v", out)
	}
}

// TestAnthropicStructuredOutput: output_config.format json_schema is
// answered with a JSON text, plain and streamed.
func TestAnthropicStructuredOutput(t *testing.T) {
	s := start(t)
	const want = `{"text":"Hello from mock: Answer in JSON"}`
	body := `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"Answer in JSON"}],` +
		`"output_config":{"format":{"type":"json_schema","schema":{"type":"object"}}}`
	var m struct{ Content []struct{ Type, Text string } }
	if err := json.Unmarshal(readAll(t, postAnthropic(t, s, testKey, "2023-06-01", body+`}`)), &m); err != nil || len(m.Content) != 1 || m.Content[0].Text != want {
		t.Fatalf("plain: %+v %v", m, err)
	}
	events, err := readSSE(t, postAnthropic(t, s, testKey, "2023-06-01", body+`,"stream":true}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for _, e := range events {
		var ev struct {
			Type  string
			Delta struct{ Text string }
		}
		if json.Unmarshal([]byte(e.data), &ev) == nil && ev.Type == "content_block_delta" {
			text += ev.Delta.Text
		}
	}
	if text != want {
		t.Fatalf("streamed: %q", text)
	}
}
