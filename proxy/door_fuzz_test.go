package proxy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/llm"
)

// The fuzz targets and golden files of the doors' decoders and encoders
// that door_messages_test.go and door_responses_test.go do not hold: the
// Messages door's decoder, the Responses door's answer encoder, the native
// doors' closing events and the model list. Their seed corpora are the
// golden inputs under testdata/ and ../internal/llm/testdata/.

// FuzzMessagesDoorDecode: client bytes on /compat/v1/messages (and its
// count_tokens) never panic the door, a refusal is a 400 of the gateway's
// codes, and what is accepted hands the pipeline a chat body that the chat
// door accepts.
func FuzzMessagesDoorDecode(f *testing.F) {
	files, _ := filepath.Glob("../internal/llm/testdata/messages/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && !strings.HasSuffix(p, ".openai.json") {
			f.Add(b, false)
		}
	}
	f.Add([]byte(`{"model":"m","max_tokens":5,"top_k":3,"messages":[{"role":"user","content":"x"}]}`), false)
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"count me"}]}`), true)
	f.Fuzz(func(t *testing.T, body []byte, count bool) {
		op := llm.OpChat
		if count {
			op = llm.OpCountTokens
		}
		checkDoorDecode(t, new(messagesDoor).decode, body, op)
	})
}

// FuzzResponsesDoorAnswer: whatever answer a provider's codec hands back,
// the Responses door writes JSON, or passes through what it cannot read.
func FuzzResponsesDoorAnswer(f *testing.F) {
	files, _ := filepath.Glob("testdata/responses/answer_*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if a := new(responsesDoor).answer(b); !bytes.Equal(a, b) && !json.Valid(a) {
			t.Fatalf("answer of %q is not JSON: %s", b, a)
		}
	})
}

// FuzzNativeDoorEnd: the error event that closes a native stream is one
// SSE event of valid JSON carrying the code and the message, whatever they
// hold.
func FuzzNativeDoorEnd(f *testing.F) {
	f.Add(502, "upstream_error", "the upstream broke off the stream")
	f.Add(429, "budget_exceeded", "quote \" newline \n and \x00")
	f.Fuzz(func(t *testing.T, status int, code, msg string) {
		e := apierr.New(status, code, "%s", msg)
		for _, d := range []door{nativeResponsesDoor{}, nativeMessagesDoor{}} {
			out := d.appendEnd(nil, e)
			data, ok := bytes.CutPrefix(out, []byte("event: error\ndata: "))
			if !ok || !bytes.HasSuffix(data, []byte("\n\n")) || bytes.Count(out, []byte("\n\n")) != 1 {
				t.Fatalf("%T: not one error event: %q", d, out)
			}
			var ev struct {
				Type  string
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(data, &ev); err != nil || ev.Type != "error" ||
				!sameText(ev.Error.Code, code) || !sameText(ev.Error.Message, msg) {
				t.Fatalf("%T: %q (%v)", d, data, err)
			}
		}
	})
}

// sameText reports whether a string read back from JSON is the one
// written; invalid UTF-8 is written with replacement characters, so only
// valid text is compared.
func sameText(got, written string) bool { return got == written || !utf8.ValidString(written) }

// TestModelListGolden pins the model list of /compat/models (owners from
// the ids, "sluice" for a route) and of a provider path.
func TestModelListGolden(t *testing.T) {
	ids := []string{"anthropic/claude-sonnet-4-5", "openai/gpt-4o-mini", "smart"}
	var out bytes.Buffer
	for _, b := range [][]byte{modelListBody(ids, nil), modelListBody([]string{"gpt-4o-mini"}, []byte("openai")), modelListBody(nil, nil)} {
		must(t, json.Indent(&out, b, "", "  "))
		out.WriteByte('\n')
	}
	golden(t, "testdata/models/lists.golden", out.Bytes())
}

// FuzzModelList: any ids make a list of the same ids in OpenAI's shape.
func FuzzModelList(f *testing.F) {
	f.Add("openai/gpt-4o-mini", "smart", "")
	f.Add("/x", "a/", "openai")
	f.Fuzz(func(t *testing.T, a, b, provider string) {
		var prov []byte
		if provider != "" {
			prov = []byte(provider)
		}
		var l modelList
		if err := json.Unmarshal(modelListBody([]string{a, b}, prov), &l); err != nil || l.Object != "list" || len(l.Data) != 2 {
			t.Fatalf("list of %q %q: %+v %v", a, b, l, err)
		}
		for i, id := range []string{a, b} {
			if d := l.Data[i]; !sameText(d.ID, id) || d.Object != "model" || d.OwnedBy == "" && provider == "" {
				t.Fatalf("entry %d: %+v", i, d)
			}
		}
	})
}

// checkDoorDecode decodes body with a door's decode as op: a refusal must
// be a 400 with a message and a request error's code, and a decoded body
// must parse as a chat.
func checkDoorDecode(t *testing.T, decode func(*fastjson.Parser, []byte, llm.Operation) (inbound, *apierr.Error), body []byte, op llm.Operation) {
	t.Helper()
	var p fastjson.Parser
	in, e := decode(&p, body, op)
	if e != nil {
		switch e.Code {
		case apierr.CodeInvalidJSON, apierr.CodeInvalidRequest, apierr.CodeUnsupportedFeature:
		default:
			t.Fatalf("refused with %d %s %q", e.Status, e.Code, e.Message)
		}
		if e.Status != 400 || e.Message == "" {
			t.Fatalf("refused with %d %s %q", e.Status, e.Code, e.Message)
		}
		return
	}
	if _, e := parseBody(&p, in.body, llm.OpChat); e != nil {
		t.Fatalf("the translated body %s is refused: %v", in.body, e)
	}
}
