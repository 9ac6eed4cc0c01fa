package providers_test

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/sluicehq/sluice/admin"
	"github.com/sluicehq/sluice/providers"
)

// TestForbiddenMatchesAdmin checks that the dialer's connect-time check
// and the admin API's base_url check refuse exactly the same addresses.
func TestForbiddenMatchesAdmin(t *testing.T) {
	addrs := []netip.Addr{}
	for _, s := range []string{
		"0.0.0.0", "127.0.0.1", "127.255.255.254", "10.0.0.5", "172.15.255.255", "172.16.0.1", "172.31.255.255",
		"172.32.0.1", "192.168.0.1", "169.254.169.254", "169.254.0.1", "100.63.255.255", "100.64.0.1",
		"100.127.255.255", "100.128.0.0", "224.0.0.1", "239.255.255.255", "255.255.255.255", "8.8.8.8",
		"::", "::1", "fe80::1", "fe80::1%eth0", "fc00::1", "fd00:ec2::254", "fd00:ec2::253", "ff02::1", "ff01::1",
		"::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.1.2.3", "::ffff:100.64.0.1", "64:ff9b::a9fe:a9fe",
		"2001:db8::1", "2606:4700::1111",
	} {
		addrs = append(addrs, netip.MustParseAddr(s))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b4 [4]byte
		var b16 [16]byte
		for i := range b4 {
			b4[i] = byte(r.UintN(256))
		}
		for i := range b16 {
			b16[i] = byte(r.UintN(256))
		}
		// Bias the v6 sample towards the interesting prefixes.
		switch r.UintN(4) {
		case 0:
			b16[0], b16[1] = 0xfe, 0x80
		case 1:
			b16[0] = 0xfd
		case 2:
			b16 = netip.AddrFrom4(b4).As16()
		}
		addrs = append(addrs, netip.AddrFrom4(b4), netip.AddrFrom16(b16))
	}
	for _, a := range addrs {
		for _, allow := range []bool{false, true} {
			if got, want := providers.Forbidden(a, allow), admin.ForbiddenAddr(a, allow); got != want {
				t.Errorf("%s allowPrivate=%v: dialer says %q, admin says %q", a, allow, got, want)
			}
		}
	}
}
