package providertest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/openaischema"
)

// postResponses sends body to /v1/responses with a bearer key.
func postResponses(t *testing.T, s *Server, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+"/v1/responses", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestResponsesPlain(t *testing.T) {
	s := start(t)
	for _, tt := range []struct{ name, input string }{
		{"string input", `"Say hi"`},
		{"item list", `[{"role":"developer","content":"Be brief."},{"role":"user","content":[{"type":"input_text","text":"Say hi"}]}]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := postResponses(t, s, `{"model":"gpt-4.1","input":`+tt.input+`}`)
			body := readAll(t, resp)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			openaischema.Check(t, openaischema.Response, "the response", body)
			var got struct {
				Status string `json:"status"`
				Output []struct {
					Content []struct{ Text string } `json:"content"`
				} `json:"output"`
				Usage struct {
					InputTokens  int `json:"input_tokens"`
					OutputTokens int `json:"output_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if got.Status != "completed" || len(got.Output) != 1 || got.Output[0].Content[0].Text != "Hello from mock: Say hi" ||
				got.Usage.InputTokens < 2 || got.Usage.OutputTokens != 5 {
				t.Errorf("answer %s", body)
			}
		})
	}
	if rec := s.Requests()[0]; rec.Path != "/v1/responses" {
		t.Errorf("recorded %s", rec.Path)
	}
}

func TestResponsesStream(t *testing.T) {
	s := start(t)
	resp := postResponses(t, s, `{"model":"gpt-4.1","input":"Say hi","stream":true}`)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var names []string
	var text strings.Builder
	for _, ev := range anthropicEvents(t, resp) {
		name, data, _ := strings.Cut(ev, " ")
		openaischema.Check(t, openaischema.ResponseStreamEvent, name, []byte(data))
		var v struct {
			Type     string `json:"type"`
			Delta    string `json:"delta"`
			Response struct {
				Usage *struct {
					InputTokens int `json:"input_tokens"`
				} `json:"usage"`
			} `json:"response"`
		}
		if err := json.Unmarshal([]byte(data), &v); err != nil || v.Type != name {
			t.Fatalf("event %s: type %q, %v", name, v.Type, err)
		}
		if name == "response.completed" && (v.Response.Usage == nil || v.Response.Usage.InputTokens != 2) {
			t.Errorf("completed without usage: %s", data)
		}
		if len(names) == 0 || names[len(names)-1] != name {
			names = append(names, name)
		}
		text.WriteString(v.Delta)
	}
	want := "response.created response.in_progress response.output_item.added response.content_part.added " +
		"response.output_text.delta response.output_text.done response.content_part.done response.output_item.done response.completed"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("events\n%s\nwant\n%s", got, want)
	}
	if text.String() != "Hello from mock: Say hi" {
		t.Errorf("deltas give %q", text.String())
	}
}
