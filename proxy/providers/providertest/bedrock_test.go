package providertest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/google/go-cmp/cmp"
)

// bedrockPost sends body to path (escaped, e.g. /model/x%3A0/converse),
// signed with the SDK's SigV4 signer for keyID and secretKey, or
// unsigned when keyID is "".
func bedrockPost(t *testing.T, s *Server, path, body, keyID, secretKey string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if keyID != "" {
		sum := sha256.Sum256([]byte(body))
		hash := hex.EncodeToString(sum[:])
		req.Header.Set("X-Amz-Content-Sha256", hash)
		creds := aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secretKey}
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hash, "bedrock", "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func bedrockSignedPost(t *testing.T, s *Server, path, body string) *http.Response {
	t.Helper()
	return bedrockPost(t, s, path, body, MockAccessKeyID, MockSecretAccessKey)
}

const bedrockChatBody = `{"messages":[{"role":"user","content":[{"text":"Hi"},{"text":" there"}]},{"role":"assistant","content":[{"text":"Yes?"}]},{"role":"user","content":[{"toolResult":{"toolUseId":"t","content":[{"text":"ok fine"}]}},{"text":"Tell me"}]}],"system":[{"text":"Be brief."}]}`

type bedrockAnswer struct {
	Output struct {
		Message struct {
			Role    string `json:"role"`
			Content []struct {
				Text    *string `json:"text"`
				ToolUse *struct {
					ToolUseID string          `json:"toolUseId"`
					Name      string          `json:"name"`
					Input     json.RawMessage `json:"input"`
				} `json:"toolUse"`
			} `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason string `json:"stopReason"`
	Usage      *struct {
		InputTokens  int `json:"inputTokens"`
		OutputTokens int `json:"outputTokens"`
		TotalTokens  int `json:"totalTokens"`
	} `json:"usage"`
	Message string `json:"message"`
}

func TestBedrockConverse(t *testing.T) {
	s := start(t)
	resp := bedrockPost(t, s, "/model/amazon.nova-lite-v1%3A0/converse", bedrockChatBody, "AKIAANYOTHERKEY00001", "not-checked")
	body := readAll(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	a := decode[bedrockAnswer](t, body)
	if a.Output.Message.Role != "assistant" || len(a.Output.Message.Content) != 1 || *a.Output.Message.Content[0].Text != "Hello from mock: Tell me" || a.StopReason != "end_turn" {
		t.Errorf("answer %s", body)
	}
	// Words: Be brief. (2) Hi there (2) Yes? (1) ok fine (2) Tell me (2).
	if u := a.Usage; u == nil || u.InputTokens != 9 || u.OutputTokens != 5 || u.TotalTokens != 14 {
		t.Errorf("usage %+v", a.Usage)
	}
	if rec := s.Requests()[0]; rec.Path != "/model/amazon.nova-lite-v1:0/converse" {
		t.Errorf("recorded path %q", rec.Path)
	}
}

func TestBedrockToolUse(t *testing.T) {
	s := start(t)
	body := `{"messages":[{"role":"user","content":[{"text":"Paris"}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"a","inputSchema":{"json":{}}}},{"toolSpec":{"name":"b","inputSchema":{"json":{}}}}],"toolChoice":{"tool":{"name":"b"}}}}`
	a := decode[bedrockAnswer](t, readAll(t, bedrockSignedPost(t, s, "/model/m/converse", body)))
	c := a.Output.Message.Content
	if len(c) != 1 || c[0].ToolUse == nil || c[0].ToolUse.Name != "b" || string(c[0].ToolUse.Input) != `{"text":"Paris"}` || a.StopReason != "tool_use" {
		t.Errorf("answer %+v", a)
	}
}

func TestBedrockAuth(t *testing.T) {
	s := start(t)
	tests := []struct {
		name, keyID, secret string
		status              int
		errType             string
	}{
		{"unsigned", "", "", 403, "MissingAuthenticationTokenException"},
		{"verified key, wrong secret", MockAccessKeyID, "wrong", 403, "InvalidSignatureException"},
		{"verified key", MockAccessKeyID, MockSecretAccessKey, 200, ""},
		{"other key, taken on trust", "AKIAANYOTHERKEY00001", "anything", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := bedrockPost(t, s, "/model/amazon.nova-lite-v1%3A0/converse", bedrockChatBody, tt.keyID, tt.secret)
			body := readAll(t, resp)
			if resp.StatusCode != tt.status || !strings.HasPrefix(resp.Header.Get("X-Amzn-ErrorType"), tt.errType) {
				t.Errorf("status %d, type %q: %s", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), body)
			}
			if tt.status != 200 && decode[bedrockAnswer](t, body).Message == "" {
				t.Errorf("no message: %s", body)
			}
		})
	}

	// A body changed after signing fails the payload hash.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+"/model/m/converse", strings.NewReader(bedrockChatBody))
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: MockAccessKeyID, SecretAccessKey: MockSecretAccessKey},
		req, strings.Repeat("0", 64), "bedrock", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("tampered payload: status %d", resp.StatusCode)
	}
}

// bedrockReadFrames decodes an event stream body with the SDK's decoder.
func bedrockReadFrames(t *testing.T, r io.Reader) ([]eventstream.Message, error) {
	t.Helper()
	dec := eventstream.NewDecoder()
	var out []eventstream.Message
	for {
		m, err := dec.Decode(r, nil)
		if err != nil {
			if errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, m.Clone())
	}
}

func bedrockHeaderOf(m eventstream.Message, name string) string {
	if v := m.Headers.Get(name); v != nil {
		return v.String()
	}
	return ""
}

func TestBedrockConverseStream(t *testing.T) {
	s := start(t)
	resp := bedrockSignedPost(t, s, "/model/amazon.nova-lite-v1%3A0@chunks=4/converse-stream", bedrockChatBody)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/vnd.amazon.eventstream" {
		t.Fatalf("status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	frames, err := bedrockReadFrames(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	var text strings.Builder
	for _, f := range frames {
		if bedrockHeaderOf(f, ":message-type") != "event" || bedrockHeaderOf(f, ":content-type") != "application/json" {
			t.Errorf("headers %v", f.Headers)
		}
		ev := bedrockHeaderOf(f, ":event-type")
		events = append(events, ev)
		var p struct {
			Delta struct {
				Text string `json:"text"`
			} `json:"delta"`
			StopReason string `json:"stopReason"`
			Usage      *struct {
				InputTokens int `json:"inputTokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(f.Payload, &p); err != nil {
			t.Fatalf("%s payload %s: %v", ev, f.Payload, err)
		}
		text.WriteString(p.Delta.Text)
		if ev == "metadata" && (p.Usage == nil || p.Usage.InputTokens != 9) {
			t.Errorf("metadata %s", f.Payload)
		}
	}
	want := []string{"messageStart", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if text.String() != "Hello from mock: Tell me" {
		t.Errorf("text %q", text.String())
	}
}

func TestBedrockStreamNoUsageAndReset(t *testing.T) {
	s := start(t)
	s.Script(Step{NoUsage: true}, Step{ResetAfter: 1})
	frames, err := bedrockReadFrames(t, bedrockSignedPost(t, s, "/model/m/converse-stream", bedrockChatBody).Body)
	if err != nil || len(frames) == 0 || bedrockHeaderOf(frames[len(frames)-1], ":event-type") != "metadata" ||
		bytes.Contains(frames[len(frames)-1].Payload, []byte("usage")) {
		t.Fatalf("no-usage stream: %d frames, %v", len(frames), err)
	}
	frames, err = bedrockReadFrames(t, bedrockSignedPost(t, s, "/model/m/converse-stream", bedrockChatBody).Body)
	if len(frames) != 2 || err == nil {
		t.Errorf("reset after 1 chunk: %d frames, err %v; want messageStart, one delta and a cut", len(frames), err)
	}
}

func TestBedrockInvoke(t *testing.T) {
	s := start(t)
	resp := bedrockSignedPost(t, s, "/model/amazon.titan-embed-text-v2%3A0/invoke", `{"inputText":"one two three","dimensions":256}`)
	titan := decode[struct {
		Embedding []float64 `json:"embedding"`
		Tokens    int       `json:"inputTextTokenCount"`
	}](t, readAll(t, resp))
	if len(titan.Embedding) != embeddingDims || titan.Tokens != 3 || resp.Header.Get("X-Amzn-Bedrock-Input-Token-Count") != "3" {
		t.Errorf("titan %+v, header %q", titan, resp.Header.Get("X-Amzn-Bedrock-Input-Token-Count"))
	}

	resp = bedrockSignedPost(t, s, "/model/cohere.embed-english-v3/invoke", `{"texts":["a b","one two three"],"input_type":"search_document"}`)
	cohere := decode[struct {
		Embeddings   [][]float64 `json:"embeddings"`
		ResponseType string      `json:"response_type"`
	}](t, readAll(t, resp))
	if len(cohere.Embeddings) != 2 || len(cohere.Embeddings[1]) != embeddingDims || cohere.ResponseType != "embeddings_floats" ||
		resp.Header.Get("X-Amzn-Bedrock-Input-Token-Count") != "5" {
		t.Errorf("cohere %+v", cohere)
	}
	// Equal texts, equal vectors, whatever the format.
	if diff := cmp.Diff(titan.Embedding, cohere.Embeddings[1]); diff != "" {
		t.Errorf("titan and cohere vectors of one text differ:\n%s", diff)
	}

	for _, tc := range []struct{ path, body string }{
		{"/model/meta.llama3-8b-instruct-v1%3A0/invoke", `{"prompt":"x"}`},
		{"/model/amazon.titan-embed-text-v1/invoke", `{"texts":["x"]}`},
		{"/model/cohere.embed-english-v3/invoke", `{"texts":[]}`},
	} {
		if resp := bedrockSignedPost(t, s, tc.path, tc.body); resp.StatusCode != 400 || !strings.HasPrefix(resp.Header.Get("X-Amzn-ErrorType"), "ValidationException") {
			t.Errorf("%s %s: status %d", tc.path, tc.body, resp.StatusCode)
		}
	}
}

func TestBedrockErrors(t *testing.T) {
	s := start(t)
	s.Script(Step{Status: 429, RetryAfter: "2"}, Step{Status: 500})
	resp := bedrockSignedPost(t, s, "/model/m/converse", bedrockChatBody)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || !strings.HasPrefix(resp.Header.Get("X-Amzn-ErrorType"), "ThrottlingException:") {
		t.Errorf("throttled: %d %v", resp.StatusCode, resp.Header)
	}
	if m := decode[bedrockAnswer](t, readAll(t, resp)).Message; !strings.Contains(m, "Too many requests") {
		t.Errorf("message %q", m)
	}
	// A scripted error is answered before the signature is checked.
	if resp := bedrockPost(t, s, "/model/m/converse-stream", bedrockChatBody, "", ""); resp.StatusCode != 500 ||
		!strings.HasPrefix(resp.Header.Get("X-Amzn-ErrorType"), "InternalServerException") {
		t.Errorf("server error: %d", resp.StatusCode)
	}
	tests := []struct {
		path   string
		status int
		typ    string
	}{
		{"/model/m@status=503/converse", 503, "ServiceUnavailableException"},
		{"/model/m@bogus=1/converse", 400, "ValidationException"},
		{"/model/m/converse-nope", 404, "UnknownOperationException"},
		{"/model/", 404, "UnknownOperationException"},
	}
	for _, tt := range tests {
		resp := bedrockSignedPost(t, s, tt.path, bedrockChatBody)
		if resp.StatusCode != tt.status || !strings.HasPrefix(resp.Header.Get("X-Amzn-ErrorType"), tt.typ) {
			t.Errorf("%s: %d %q, want %d %s", tt.path, resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), tt.status, tt.typ)
		}
	}
	if resp := bedrockSignedPost(t, s, "/model/m/converse", `{"messages":[]}`); resp.StatusCode != 400 {
		t.Errorf("no messages: %d", resp.StatusCode)
	}
	if resp := bedrockSignedPost(t, s, "/model/m/converse", `{`); resp.StatusCode != 400 {
		t.Errorf("bad JSON: %d", resp.StatusCode)
	}
}
