package rules

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTexts(t *testing.T) {
	body := `{"model":"sk-not-scanned","messages":[{"role":"system","content":"be \"nice\" \u00e9"},` +
		`{"role":"user","content":[{"type":"text","text":"part one"},{"type":"image_url","image_url":{"url":"http://x/a@b.io"}}]},` +
		`{"role":"user","content":null,"name":"bob@example.com"}],"user":"u@example.com","n":1,"input":["x","y"]}`
	texts, err := Texts([]byte(body), RequestFields)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tx := range texts {
		got = append(got, tx.Text)
		if body[tx.Start] != '"' || body[tx.End-1] != '"' {
			t.Errorf("text %q spans %q", tx.Text, body[tx.Start:tx.End])
		}
	}
	want := []string{`be "nice" é`, "part one", "x", "y"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	if texts[0].Item != 0 || texts[1].Item != 1 {
		t.Errorf("items %d %d, want 0 1", texts[0].Item, texts[1].Item)
	}

	repl := []string{"be [REDACTED:keyword]\u2028", "part one", "x", "[REDACTED:email]"}
	out := Replace([]byte(body), texts, repl)
	if !json.Valid(out) {
		t.Fatalf("Replace made invalid JSON: %s", out)
	}
	again, err := Texts(out, RequestFields)
	if err != nil {
		t.Fatal(err)
	}
	var got2 []string
	for _, tx := range again {
		got2 = append(got2, tx.Text)
	}
	if diff := cmp.Diff(repl, got2); diff != "" {
		t.Errorf("after Replace (-want +got):\n%s", diff)
	}
	if string(Replace([]byte(body), texts, want)) != body {
		t.Errorf("Replace with the same texts changed the body")
	}
}

func TestTextsResponse(t *testing.T) {
	body := `{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":"hi bob@example.com","tool_calls":[]},"finish_reason":"stop"},` +
		`{"index":1,"text":"legacy"}],"usage":{"prompt_tokens":1}}`
	texts, err := Texts([]byte(body), ResponseFields)
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 2 || texts[0].Text != "hi bob@example.com" || texts[1].Text != "legacy" || texts[1].Item != 1 {
		t.Errorf("texts %+v", texts)
	}
}

func TestTextsInvalid(t *testing.T) {
	for _, b := range []string{``, `{`, `{"a":}`, `{"messages":[{"content":"x}]}`, `[1,2`, `{"a":1}x`, `"abc`} {
		if _, err := Texts([]byte(b), RequestFields); err == nil {
			t.Errorf("Texts(%q): no error", b)
		}
	}
}

// FuzzTexts checks the walker on arbitrary bytes: no panic, spans within
// the body, and for valid JSON a Replace that keeps it valid.
func FuzzTexts(f *testing.F) {
	f.Add([]byte(`{"messages":[{"content":"a\"b"}],"prompt":["x"]}`))
	f.Add([]byte(`{"choices":[{"delta":{"content":"\ud83d\ude00"}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, fields := range []Fields{RequestFields, ChunkFields} {
			texts, err := Texts(b, fields)
			if err != nil {
				continue
			}
			repl := make([]string, len(texts))
			for i, tx := range texts {
				if tx.Start < 0 || tx.End > len(b) || tx.Start >= tx.End {
					t.Fatalf("span %d..%d of %d bytes", tx.Start, tx.End, len(b))
				}
				repl[i] = "[REDACTED:x]"
			}
			if out := Replace(b, texts, repl); json.Valid(b) && !json.Valid(out) {
				t.Fatalf("Replace made invalid JSON from %q: %q", b, out)
			}
		}
	})
}
