package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"
)

const ChunkHi = `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`

// TestDialControl checks the dialer's Control hook, the check that holds
// whatever resolved the address a socket connects to.
func TestDialControl(t *testing.T) {
	tests := []struct {
		address      string
		allowPrivate bool
		want         string // the ForbiddenAddrError reason, "" for allowed
	}{
		{"169.254.169.254:80", true, "link-local"},
		{"[64:ff9b::a9fe:a9fe]:80", true, "link-local"},
		{"[::a9fe:a9fe]:80", true, "link-local"},
		{"[2002:a9fe:a9fe::]:80", true, "link-local"},
		{"[64:ff9b::7f00:1]:443", false, "loopback"},
		{"127.0.0.1:443", false, "loopback"},
		{"127.0.0.1:443", true, ""},
		{"93.184.216.34:443", false, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v", tt.address, tt.allowPrivate), func(t *testing.T) {
			c := NewClient(ClientConfig{AllowPrivate: tt.allowPrivate})
			err := c.controlDial("tcp", tt.address, nil)
			var fe *ForbiddenAddrError
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want allowed", err)
			case tt.want != "" && !errors.As(err, &fe):
				t.Errorf("got %v, want a ForbiddenAddrError", err)
			case tt.want != "" && fe.Reason != tt.want:
				t.Errorf("refused as %q, want %q", fe.Reason, tt.want)
			}
		})
	}
}

func TestScrub(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "The model `gpt-5` does not exist", "The model `gpt-5` does not exist"},
		{"openai masked key", "Incorrect API key provided: sk-proj-****************************abcd. You can find your API key at https://platform.openai.com/account/api-keys.",
			"Incorrect API key provided: [REDACTED]. You can find your API key at https://platform.openai.com/account/api-keys."},
		{"bearer", "header was Bearer abc.def-ghi and more", "header was Bearer [REDACTED] and more"},
		{"bearer case", "authorization: bearer   xyz123", "authorization: bearer   [REDACTED]"},
		{"our key", "key sk-test-0123456789abcdefghij is invalid", "key [REDACTED] is invalid"},
		{"our key fragment", "got 0123456789abcd, expected something", "got [REDACTED], expected something"},
		{"other prefixes", "gsk_abcdefgh12 xai-abcdefgh12 AIzaSyA1234567", "[REDACTED] [REDACTED] [REDACTED]"},
		{"short sk- word", "ask-me task-force sk-1", "ask-me task-force sk-1"},
		{"control chars", "line1\nline2\r\x00end", "line1 line2  end"},
		{"invalid utf8", "bad \xff byte", "bad \uFFFD byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Scrub(tt.in, TestKey); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	long := Scrub(strings.Repeat("é", 600), "")
	if len(long) > MaxMessage || !utf8.ValidString(long) {
		t.Errorf("long message: %d bytes, valid UTF-8 %v", len(long), utf8.ValidString(long))
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"ms wins", map[string]string{"Retry-After": "7", "retry-after-ms": "1500"}, 1500 * time.Millisecond},
		{"date", map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"negative", map[string]string{"Retry-After": "-5"}, 0},
		{"capped", map[string]string{"Retry-After": "999999"}, MaxRetryAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h fasthttp.ResponseHeader
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := retryAfter(&h, now); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDialRefusesForbiddenAddresses(t *testing.T) {
	LeakCheck(t)
	u := NewUpstream(t, SSEHandler())
	port := u.Listener.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	resolver := FakeResolver{
		"private.example":  {netip.MustParseAddr("10.0.0.5")},
		"metadata.example": {netip.MustParseAddr("169.254.169.254")},
		"mixed.example":    {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("127.0.0.1")},
		"upstream.test":    {netip.MustParseAddr("127.0.0.1")},
		"nat64.example":    {netip.MustParseAddr("64:ff9b::a9fe:a9fe")},
	}
	tests := []struct {
		name         string
		base         string
		allowPrivate bool
		want         string // the ForbiddenAddrError reason, "" for success
	}{
		{"metadata ip", "http://169.254.169.254/v1", true, "link-local"},
		{"metadata ip mapped", "http://[::ffff:a9fe:a9fe]/v1", true, "link-local"},
		{"metadata ip NAT64", "http://[64:ff9b::a9fe:a9fe]/v1", true, "link-local"},
		{"metadata ip IPv4-compatible", "http://[::a9fe:a9fe]/v1", true, "link-local"},
		{"metadata ip 6to4", "http://[2002:a9fe:a9fe::]/v1", true, "link-local"},
		{"metadata ip local-use NAT64", "http://[64:ff9b:1::a9fe:a9fe]/v1", true, "link-local"},
		{"metadata ip Teredo client", "http://[2001:0:4136:e378:8000:63bf:5601:5601]/v1", true, "link-local"},
		{"name to NAT64 metadata", "http://nat64.example/v1", true, "link-local"},
		{"loopback NAT64", fmt.Sprintf("http://[64:ff9b::7f00:1]:%d/v1", port), false, "loopback"},
		{"name to private", "http://private.example/v1", false, "private"},
		{"name to metadata", fmt.Sprintf("http://metadata.example:%d/v1", port), true, "link-local"},
		{"one bad address of two", "https://mixed.example/v1", false, "loopback"},
		{"loopback test server", u.URL, false, "loopback"},
		{"loopback name", fmt.Sprintf("http://upstream.test:%d", port), false, "loopback"},
		{"loopback allowed", u.URL, true, ""},
		{"loopback name allowed", fmt.Sprintf("http://upstream.test:%d", port), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClient(ClientConfig{AllowPrivate: tt.allowPrivate, Resolver: resolver, DialTimeout: time.Second})
			defer c.CloseIdleConnections()
			before := len(u.Requests())
			resp, err := c.Do(context.Background(), &HTTPRequest{BaseURL: tt.base, Path: "chat/completions", Body: []byte(`{}`)})
			var fe *ForbiddenAddrError
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("got %v, want success", err)
			case tt.want == "" && resp.Status != 200:
				t.Fatalf("got status %d", resp.Status)
			case tt.want != "" && !errors.As(err, &fe):
				t.Fatalf("got %v, want ForbiddenAddrError", err)
			case tt.want != "" && fe.Reason != tt.want:
				t.Errorf("refused as %q, want %q", fe.Reason, tt.want)
			}
			if tt.want != "" {
				if n := len(u.Requests()) - before; n != 0 {
					t.Errorf("the server got %d requests, want 0", n)
				}
			}
		})
	}
}

func TestClientConfigValidate(t *testing.T) {
	if err := (ClientConfig{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
	for _, c := range []ClientConfig{{MaxConnsPerHost: -1}, {IdleTimeout: -1}, {MaxResponseBytes: -1}} {
		if c.Validate() == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
