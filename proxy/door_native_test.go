package proxy

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// TestNativeAnthropicErrorTypes pins CONTRACT §12's error.type per status.
func TestNativeAnthropicErrorTypes(t *testing.T) {
	for status, want := range map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
		404: "not_found_error", 413: "request_too_large", 415: "invalid_request_error", 429: "rate_limit_error", 500: "api_error",
		502: "api_error", 503: "overloaded_error", 504: "api_error"} {
		body := nativeMessagesDoor{}.errorBody(apierr.New(status, "some_code", "went \"wrong\"").WithParam("model"))
		var e struct {
			Type  string
			Error struct{ Type, Message, Code, Param string }
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Type != "error" || e.Error.Type != want || e.Error.Code != "some_code" ||
			e.Error.Message != `went "wrong"` || e.Error.Param != "model" {
			t.Errorf("%d: %s (%v), want type %s", status, body, err, want)
		}
	}
}

// TestNativeStreamEnds pins the closing events: nothing after a clean end
// (the upstream's last event was relayed), the API's error event else.
func TestNativeStreamEnds(t *testing.T) {
	e := &apierr.Error{Type: apierr.TypeAPI, Code: apierr.CodeUpstreamError, Message: "broke"}
	for _, tc := range []struct {
		name string
		d    door
		want string
	}{
		{"responses", nativeResponsesDoor{}, "event: error\ndata: {\"type\":\"error\",\"code\":\"upstream_error\",\"message\":\"broke\",\"param\":null," +
			"\"error\":{\"type\":\"api_error\",\"code\":\"upstream_error\",\"message\":\"broke\",\"param\":null}}\n\n"},
		{"messages", nativeMessagesDoor{}, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"broke\",\"code\":\"upstream_error\"}}\n\n"},
	} {
		if got := tc.d.appendEnd(nil, nil); len(got) != 0 {
			t.Errorf("%s: clean end %q", tc.name, got)
		}
		if got := string(tc.d.appendEnd(nil, e)); got != tc.want {
			t.Errorf("%s: error end\n%q\nwant\n%q", tc.name, got, tc.want)
		}
		if got := string(tc.d.appendChunk([]byte("x"), []byte("event: a\ndata: {}\n\n"))); got != "xevent: a\ndata: {}\n\n" {
			t.Errorf("%s: chunk %q", tc.name, got)
		}
	}
}

// TestNativeStreamBroken: an upstream that breaks off mid-stream ends the
// client's stream with the API's error event, recorded as a partial 502.
func TestNativeStreamBroken(t *testing.T) {
	h := messagesHarness(t)
	for _, tc := range []struct {
		name, path, body, wantEvent string
		hdr                         http.Header
	}{
		{"responses", responsesPath, `{"model":"gpt-4o-mini","input":"say hello","stream":true}`, `"type":"error","code":"upstream_error"`, bearer(h.token)},
		{"messages", nativeMessagesPath, `{"model":"claude-sonnet-4-5","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"say hello"}]}`,
			`{"type":"error","error":{"type":"api_error"`, anthropicHeaders(h.token)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.mock.Script(providertest.Step{ResetAfter: 1})
			resp, answer := h.do("POST", tc.path, tc.hdr, tc.body)
			wantStatus(t, resp, answer, http.StatusOK)
			names, data := sseEvents(t, answer)
			if len(names) < 2 || names[len(names)-1] != "error" || !strings.Contains(data[len(data)-1], tc.wantEvent) {
				t.Fatalf("stream %s", answer)
			}
			rec := h.record(resp.Header.Get("x-sluice-request-id"))
			if rec.Status != http.StatusBadGateway || rec.ErrorCode != apierr.CodeUpstreamError || !strings.Contains(strings.Join(rec.Flags, ","), "partial") {
				t.Errorf("record status %d code %s flags %v", rec.Status, rec.ErrorCode, rec.Flags)
			}
		})
	}
}
