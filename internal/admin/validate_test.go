package admin

import (
	"context"
	"net/netip"
	"testing"
)

// staticResolver resolves every name to the same addresses.
type staticResolver []netip.Addr

func (r staticResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return r, nil
}

// TestBaseURLEmbeddedIPv4 checks that a base_url whose host is, or
// resolves to, an IPv6 address carrying a refused IPv4 address is refused
// like that IPv4 address, and that public ones still pass.
func TestBaseURLEmbeddedIPv4(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		url          string
		resolves     string // the address a host name resolves to
		allowPrivate bool
		ok           bool
	}{
		{url: "http://[64:ff9b::a9fe:a9fe]/", allowPrivate: true},                   // NAT64
		{url: "http://[::a9fe:a9fe]/", allowPrivate: true},                          // IPv4-compatible
		{url: "http://[2002:a9fe:a9fe::]/", allowPrivate: true},                     // 6to4
		{url: "http://[64:ff9b:1::a9fe:a9fe]/", allowPrivate: true},                 // local-use NAT64
		{url: "http://[2001:0:4136:e378:8000:63bf:5601:5601]/", allowPrivate: true}, // Teredo
		{url: "http://[64:ff9b::7f00:1]:8000/v1"},                                   // NAT64 loopback
		{url: "http://[2002:a00:5::1]/v1"},                                          // 6to4 of 10.0.0.5
		{url: "https://nat64.example/v1", resolves: "64:ff9b::a9fe:a9fe", allowPrivate: true},
		{url: "https://nat64.example/v1", resolves: "64:ff9b::a00:5"},
		{url: "http://[64:ff9b::7f00:1]:8000/v1", allowPrivate: true, ok: true},
		{url: "https://[64:ff9b::5db8:d822]/v1", ok: true},
		{url: "https://public.example/v1", resolves: "2002:5db8:d822::1", ok: true},
	} {
		t.Run(tc.url+"/"+tc.resolves, func(t *testing.T) {
			var r Resolver
			if tc.resolves != "" {
				r = staticResolver{netip.MustParseAddr(tc.resolves)}
			}
			err := checkBaseURL(ctx, r, tc.url, tc.allowPrivate)
			switch {
			case tc.ok && err != nil:
				t.Errorf("checkBaseURL(%s, allowPrivate=%v) = %v, want accepted", tc.url, tc.allowPrivate, err)
			case !tc.ok:
				wantErrParam(t, err, 400, "invalid_request", "base_url")
			}
		})
	}
}
