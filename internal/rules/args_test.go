package rules

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// streamArgs pushes args in pieces of size bytes and returns what went
// out and the block, if any.
func streamArgs(s *Set, args string, size int) (string, *Finding) {
	a := s.NewArgStream(Response, nil)
	var out strings.Builder
	for i := 0; i < len(args); i += size {
		o, _, b := a.Push(args[i:min(i+size, len(args))])
		if b != nil {
			return out.String(), b
		}
		out.WriteString(o)
	}
	o, _, b := a.Flush()
	out.WriteString(o)
	return out.String(), b
}

// Streamed arguments are redacted string by string: cut anywhere, escapes
// and surrogate pairs included, they come out as the valid JSON the
// unstreamed redaction gives.
func TestArgStream(t *testing.T) {
	s := mustCompile(t,
		Rule{ID: "pii", Direction: Both, Kind: KindPII, PII: []string{"us_ssn", "credit_card", "email"}, Action: Redact},
		Rule{ID: "kw", Direction: Both, Kind: KindKeyword, Patterns: []string{"bluebird"}, Action: Redact},
	)
	args := `{"who": "Jane \"J\" Doe \ud83d\ude00", "ssn": "123-45-6789", "card": 4111111111111111, ` +
		`"tags": ["blue\u0062ird", "ok"], "mail": "x@example.io", "n": null}`
	want := map[string]any{"who": `Jane "J" Doe 😀`, "ssn": "[REDACTED:us_ssn]", "card": "[REDACTED:credit_card]",
		"tags": []any{"[REDACTED:keyword]", "ok"}, "mail": "[REDACTED:email]", "n": nil}
	for size := 1; size <= len(args); size++ {
		out, blocked := streamArgs(s, args, size)
		if blocked != nil {
			t.Fatalf("size %d: blocked", size)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("size %d: %q is not JSON: %v", size, out, err)
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Fatalf("size %d: got %s, want %s", size, gb, wb)
		}
	}
	// A block rule stops the arguments before the match goes out.
	b := mustCompile(t, Rule{ID: "b", Name: "no ssn", Direction: Both, Kind: KindPII, PII: []string{"us_ssn"}, Action: Block})
	for _, size := range []int{1, 4, 100} {
		out, blocked := streamArgs(b, args, size)
		if blocked == nil || strings.Contains(out, "6789") {
			t.Errorf("size %d: blocked %v after %q", size, blocked, out)
		}
	}
}

// batchArgs redacts args unstreamed, as tool-call arguments of a
// complete response.
func batchArgs(t *testing.T, s *Set, args string) string {
	body := `{"choices":[{"message":{"tool_calls":[{"function":{"arguments":` + string(AppendString(nil, args)) + `}}]}}]}`
	d, err := Walk([]byte(body), Message)
	if err != nil {
		t.Fatal(err)
	}
	texts := textsOf(d)
	res := s.Scan(Response, texts, nil)
	repl := make([]string, len(texts))
	for i := range texts {
		repl[i] = Redacted(texts[i], res.Hits[i])
	}
	var v struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					Function struct{ Arguments string }
				} `json:"tool_calls"`
			}
		}
	}
	if err := json.Unmarshal(d.Replace([]byte(body), repl), &v); err != nil {
		t.Fatal(err)
	}
	return v.Choices[0].Message.ToolCalls[0].Function.Arguments
}

// FuzzArgStream streams fuzzed arguments in fuzzed pieces: what goes out
// is valid UTF-8, and for JSON arguments it is the JSON value the
// unstreamed redaction gives.
func FuzzArgStream(f *testing.F) {
	f.Add(`{"a":"123-45-6789","b":[1,2,{"c":"\u00e9"}]}`, 3)
	f.Add(`{"x":"\ud83d\ude00 \\\" end"}`, 1)
	f.Add(`not json "123-45-6789`, 2)
	s, err := Compile([]Rule{{ID: "pii", Direction: Both, Kind: KindPII, PII: []string{"us_ssn", "credit_card"}, Action: Redact}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args string, size int) {
		if size < 1 || !utf8.ValidString(args) {
			return
		}
		out, _ := streamArgs(s, args, size)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out: %q", out)
		}
		if !json.Valid([]byte(args)) {
			return
		}
		var got, want any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%q in pieces of %d gave invalid JSON %q", args, size, out)
		}
		batch := batchArgs(t, s, args)
		if err := json.Unmarshal([]byte(batch), &want); err != nil {
			t.Fatalf("unstreamed redaction of %q gave invalid JSON %q", args, batch)
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Fatalf("%q in pieces of %d: streamed %s, unstreamed %s", args, size, gb, wb)
		}
	})
}
