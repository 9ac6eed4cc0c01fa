package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sluicehq/sluice/internal/apierr"
)

// strictRules decodes itself strictly, as a nested body would, and so
// returns the decoder's own errors from UnmarshalJSON.
type strictRules struct {
	Match string `json:"match"`
}

func (s *strictRules) UnmarshalJSON(b []byte) error {
	type plain strictRules
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*s = strictRules(p)
	return nil
}

// level rejects unknown values with its own error.
type level string

func (l *level) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	switch s {
	case "low", "high":
		*l = level(s)
		return nil
	case "forbidden":
		return apierr.Invalid("level", "level forbidden is reserved")
	}
	return fmt.Errorf("level must be low or high, not %q", s)
}

type retry struct {
	MaxAttempts int `json:"max_attempts"`
}

type gatewayBody struct {
	Slug    string       `json:"slug"`
	Name    *string      `json:"name"`
	Enabled bool         `json:"enabled"`
	Retry   retry        `json:"retry"`
	Tags    []string     `json:"tags"`
	Rules   *strictRules `json:"rules"`
	Level   level        `json:"level"`
	Until   time.Time    `json:"until"`
	Cost    float64      `json:"cost"`
}

func jsonRequest(body, contentType string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/admin/v1/gateways", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

func TestDecodeJSON(t *testing.T) {
	const ct = "application/json"
	tests := []struct {
		name        string
		body, ctype string
		want        wireError
	}{
		{"empty", "", ct, wireError{Status: 400, Type: "invalid_request_error", Code: "invalid_json", Message: "request body is empty"}},
		{"empty without content type", "", "", wireError{Status: 400, Type: "invalid_request_error", Code: "invalid_json", Message: "request body is empty"}},
		{"whitespace only", " \n\t", ct, wantErr(400, "invalid_json", "")},
		{"no content type", `{"slug":"a"}`, "", wantErr(415, "unsupported_media_type", "")},
		{"text/plain", `{"slug":"a"}`, "text/plain", wantErr(415, "unsupported_media_type", "")},
		{"form", `slug=a`, "application/x-www-form-urlencoded", wantErr(415, "unsupported_media_type", "")},
		{"json suffix type", `{"slug":"a"}`, "application/merge-patch+json", wantErr(415, "unsupported_media_type", "")},
		{"latin1 charset", `{"slug":"a"}`, "application/json; charset=iso-8859-1", wantErr(415, "unsupported_media_type", "")},
		{"malformed content type", `{"slug":"a"}`, "application/json; =", wantErr(415, "unsupported_media_type", "")},
		{"malformed", `{"slug":}`, ct, wireError{Status: 400, Type: "invalid_request_error", Code: "invalid_json",
			Message: "the request body is not valid JSON: invalid character '}' looking for beginning of value (at offset 9)"}},
		{"truncated", `{"slug":"a"`, ct, wireError{Status: 400, Type: "invalid_request_error", Code: "invalid_json",
			Message: "the request body is not valid JSON: it ends early (at offset 11)"}},
		{"trailing data", `{"slug":"a"} {"slug":"b"}`, ct, wireError{Status: 400, Type: "invalid_request_error", Code: "invalid_json",
			Message: "the request body has data after the JSON value, at offset 13"}},
		{"trailing garbage", `{"slug":"a"}x`, ct, wantErr(400, "invalid_json", "")},
		{"unknown field", `{"slug":"a","api_base":"http://attacker:9999"}`, ct, wireError{Status: 400, Type: "invalid_request_error",
			Code: "invalid_request", Message: `unknown field "api_base"`, Param: ptr("api_base")}},
		{"wrong type string for int", `{"retry":{"max_attempts":"3"}}`, ct, wireError{Status: 400, Type: "invalid_request_error",
			Code: "invalid_request", Message: "field retry.max_attempts must be a number", Param: ptr("retry.max_attempts")}},
		{"fraction for int", `{"retry":{"max_attempts":1.5}}`, ct, wireError{Status: 400, Type: "invalid_request_error",
			Code: "invalid_request", Message: "field retry.max_attempts must be an integer", Param: ptr("retry.max_attempts")}},
		{"number for string", `{"slug":1}`, ct, wireError{Status: 400, Type: "invalid_request_error",
			Code: "invalid_request", Message: "field slug must be a string", Param: ptr("slug")}},
		{"number for *string", `{"name":1}`, ct, wireError{Status: 400, Type: "invalid_request_error",
			Code: "invalid_request", Message: "field name must be a string", Param: ptr("name")}},
		{"string for bool", `{"enabled":"yes"}`, ct, wireError{Status: 400, Type: "invalid_request_error",
			Code: "invalid_request", Message: "field enabled must be a boolean", Param: ptr("enabled")}},
		{"object for array", `{"tags":{}}`, ct, wireError{Status: 400, Type: "invalid_request_error",
			Code: "invalid_request", Message: "field tags must be an array", Param: ptr("tags")}},
		{"string for object", `{"retry":"x"}`, ct, wireError{Status: 400, Type: "invalid_request_error",
			Code: "invalid_request", Message: "field retry must be an object", Param: ptr("retry")}},
		{"string for float", `{"cost":"1"}`, ct, wireError{Status: 400, Type: "invalid_request_error",
			Code: "invalid_request", Message: "field cost must be a number", Param: ptr("cost")}},
		{"array body", `[]`, ct, wireError{Status: 400, Type: "invalid_request_error",
			Code: "invalid_request", Message: "the request body must be an object"}},
		{"nested strict unknown field", `{"rules":{"match":"x","extra":1}}`, ct, wireError{Status: 400, Type: "invalid_request_error",
			Code: "invalid_request", Message: `unknown field "extra"`, Param: ptr("extra")}},
		{"custom unmarshal error", `{"level":"medium"}`, ct, wireError{Status: 400, Type: "invalid_request_error",
			Code: "invalid_request", Message: `level must be low or high, not "medium"`}},
		{"custom unmarshal apierr", `{"level":"forbidden"}`, ct, wireError{Status: 400, Type: "invalid_request_error",
			Code: "invalid_request", Message: "level forbidden is reserved", Param: ptr("level")}},
		{"bad time", `{"until":"tomorrow"}`, ct, wantErr(400, "invalid_request", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v gatewayBody
			err := DecodeJSON(jsonRequest(tt.body, tt.ctype), &v)
			if _, ok := errors.AsType[*apierr.Error](err); !ok {
				t.Fatalf("DecodeJSON error = %v, want a *apierr.Error", err)
			}
			if diff := diffError(asWire(t, err), tt.want); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeJSONAccepts(t *testing.T) {
	tests := []struct {
		name, body, ctype string
		want              gatewayBody
	}{
		{"plain", `{"slug":"prod","retry":{"max_attempts":3}}`, "application/json",
			gatewayBody{Slug: "prod", Retry: retry{MaxAttempts: 3}}},
		{"charset", `{"slug":"prod"}`, "application/json; charset=utf-8", gatewayBody{Slug: "prod"}},
		{"charset upper", `{"slug":"prod"}`, "Application/JSON; charset=UTF-8", gatewayBody{Slug: "prod"}},
		{"trailing whitespace", "{\"slug\":\"prod\"}\n\r\n ", "application/json", gatewayBody{Slug: "prod"}},
		{"nested strict", `{"rules":{"match":"x"},"level":"high","name":"N"}`, "application/json",
			gatewayBody{Rules: &strictRules{Match: "x"}, Level: "high", Name: ptr("N")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got gatewayBody
			if err := DecodeJSON(jsonRequest(tt.body, tt.ctype), &got); err != nil {
				t.Fatalf("DecodeJSON = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeJSONTooLarge(t *testing.T) {
	// Valid JSON, 2 MiB: the size alone is the fault.
	big := `{"slug":"` + strings.Repeat("a", 2<<20) + `"}`
	tests := []struct {
		name string
		req  func() *http.Request
	}{
		{"declared length", func() *http.Request { return jsonRequest(big, "application/json") }},
		{"unknown length", func() *http.Request {
			r := jsonRequest("", "application/json")
			r.Body = io.NopCloser(strings.NewReader(big))
			r.ContentLength = -1
			return r
		}},
		{"lying length", func() *http.Request {
			r := jsonRequest(big, "application/json")
			r.ContentLength = 10
			return r
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v gatewayBody
			err := DecodeJSON(tt.req(), &v)
			if diff := diffError(asWire(t, err), wantErr(413, "body_too_large", "")); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("through the router", func(t *testing.T) {
		rt := NewRouter()
		rt.Handle("POST", "/admin/v1/gateways", func(w http.ResponseWriter, r *http.Request, _ Params) error {
			var v gatewayBody
			if err := DecodeJSON(r, &v); err != nil {
				return err
			}
			return JSON(w, http.StatusCreated, v)
		})
		rec := httptest.NewRecorder()
		rt.ServeHTTP(rec, jsonRequest(big, "application/json"))
		if diff := diffError(readError(t, rec), wantErr(413, "body_too_large", "")); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
	})
}

func TestDecodeJSONExactLimit(t *testing.T) {
	body := `{"slug":"` + strings.Repeat("a", MaxBodyBytes-len(`{"slug":""}`)) + `"}`
	if len(body) != MaxBodyBytes {
		t.Fatalf("body is %d bytes, want %d", len(body), MaxBodyBytes)
	}
	var v gatewayBody
	if err := DecodeJSON(jsonRequest(body, "application/json"), &v); err != nil {
		t.Fatalf("DecodeJSON of exactly MaxBodyBytes = %v", err)
	}
}

func TestDecodeJSONNonPointerIsInternal(t *testing.T) {
	logs := captureLog(t)
	err := DecodeJSON(jsonRequest(`{"slug":"a"}`, "application/json"), gatewayBody{})
	if diff := diffError(asWire(t, err), wantErr(500, "internal_error", "")); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if !strings.Contains(logs.String(), "non-pointer") {
		t.Errorf("log = %s, want the decoder's error", logs)
	}
}
