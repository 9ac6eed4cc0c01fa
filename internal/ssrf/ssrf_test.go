package ssrf

import (
	"fmt"
	"net/netip"
	"testing"
)

func TestReason(t *testing.T) {
	tests := []struct {
		addr         string
		allowPrivate bool
		want         string
	}{
		{"169.254.169.254", true, LinkLocal},
		{"169.254.169.254", false, LinkLocal},
		{"::ffff:169.254.169.254", true, LinkLocal},
		{"fe80::1", true, LinkLocal},
		{"fe80::1%eth0", true, LinkLocal},
		{"ff02::1", true, LinkLocal},
		{"224.0.0.251", true, LinkLocal},
		{"fd00:ec2::254", true, Metadata},
		{"100.100.100.200", true, Metadata},
		{"192.0.0.192", true, Metadata},
		{"0.0.0.0", true, NonUnicast},
		{"0.1.2.3", true, NonUnicast},
		{"::", true, NonUnicast},
		{"239.1.1.1", true, NonUnicast},
		{"ff01::1", true, NonUnicast},
		{"255.255.255.255", true, Reserved},
		{"240.0.0.1", true, Reserved},
		{"127.0.0.1", false, Loopback},
		{"127.0.0.1", true, ""},
		{"::1", false, Loopback},
		{"::1", true, ""},
		{"::ffff:127.0.0.1", false, Loopback},
		{"10.0.0.5", false, Private},
		{"10.0.0.5", true, ""},
		{"172.16.3.4", false, Private},
		{"192.168.1.1", false, Private},
		{"fd12:3456::1", false, Private},
		{"fec0::1", false, Private},
		{"fec0::1", true, ""},
		{"100.64.0.1", false, SharedNAT},
		{"100.64.0.1", true, ""},
		{"100.128.0.1", false, ""},
		{"93.184.216.34", false, ""},
		{"2606:4700::1111", false, ""},
		{"2001:db8::1", false, ""},

		// IPv6 forms that embed an IPv4 address are judged by it.
		{"64:ff9b::a9fe:a9fe", true, LinkLocal},       // NAT64 of 169.254.169.254
		{"64:ff9b::7f00:1", false, Loopback},          // NAT64 of 127.0.0.1
		{"64:ff9b::7f00:1", true, ""},                 // … allowed with private upstreams
		{"64:ff9b::a00:5", false, Private},            // NAT64 of 10.0.0.5
		{"64:ff9b::5db8:d822", false, ""},             // NAT64 of 93.184.216.34
		{"::a9fe:a9fe", true, LinkLocal},              // IPv4-compatible
		{"::7f00:1", false, Loopback},                 // IPv4-compatible 127.0.0.1
		{"::5db8:d822", false, ""},                    // IPv4-compatible public
		{"2002:a9fe:a9fe::", true, LinkLocal},         // 6to4
		{"2002:a9fe:a9fe:1::1", true, LinkLocal},      // 6to4, any host behind it
		{"2002:7f00:1::", false, Loopback},            // 6to4 of 127.0.0.1
		{"2002:5db8:d822::1", false, ""},              // 6to4 of a public address
		{"64:ff9b:1::a9fe:a9fe", true, LinkLocal},     // local-use NAT64, /96
		{"64:ff9b:1:a9fe:a9:fe00::", true, LinkLocal}, // local-use NAT64, /48
		{"64:ff9b:1:a9fe:a9:fe00::", false, Private},
		{"64:ff9b:1::5db8:d822", false, Private}, // local-use is local
		{"64:ff9b:1::5db8:d822", true, ""},
		// Teredo 2001:0::/32: server 65.54.227.120, client inverted.
		{"2001:0:4136:e378:8000:63bf:5601:5601", true, LinkLocal}, // client 169.254.169.254 (^0x5601 = a9fe)
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", false, Loopback}, // client 127.0.0.1
		{"2001:0:4136:e378:8000:63bf:3fd5:42a7", false, ""},       // client 192.42.189.88
		{"2001:0:a9fe:a9fe:8000:63bf:3fd5:42a7", true, LinkLocal}, // server 169.254.169.254
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v", tt.addr, tt.allowPrivate), func(t *testing.T) {
			if got := Reason(netip.MustParseAddr(tt.addr), tt.allowPrivate); got != tt.want {
				t.Errorf("Reason(%s, allowPrivate=%v) = %q, want %q", tt.addr, tt.allowPrivate, got, tt.want)
			}
		})
	}
}

// FuzzReason checks that an IPv6 address is never allowed when the IPv4
// address it embeds is refused, whatever the other bits are.
func FuzzReason(f *testing.F) {
	f.Add([]byte{169, 254, 169, 254}, []byte{}, false)
	f.Add([]byte{127, 0, 0, 1}, []byte{1, 2, 3, 4, 5, 6, 7, 8}, true)
	f.Fuzz(func(t *testing.T, v4 []byte, rest []byte, allowPrivate bool) {
		if len(v4) != 4 {
			return
		}
		a4 := netip.AddrFrom4([4]byte(v4))
		why4 := Reason(a4, allowPrivate)
		if why4 == "" {
			return
		}
		fill := func(b *[16]byte, from, to int) {
			for i := from; i < to && i-from < len(rest); i++ {
				b[i] = rest[i-from]
			}
		}
		var forms [][16]byte
		var b [16]byte
		copy(b[12:], v4)
		if a := netip.AddrFrom16(b); !a.IsUnspecified() && !a.IsLoopback() {
			forms = append(forms, b) // IPv4-compatible; :: and ::1 are IPv6's own
		}
		b = netip.MustParseAddr("64:ff9b::").As16()
		copy(b[12:], v4)
		forms = append(forms, b)
		b = [16]byte{0x20, 0x02}
		copy(b[2:6], v4)
		fill(&b, 6, 16)
		forms = append(forms, b)
		b = [16]byte{0x20, 0x01}
		for i := range 4 {
			b[12+i] = ^v4[i]
		}
		fill(&b, 4, 12)
		forms = append(forms, b)
		for _, f := range forms {
			a := netip.AddrFrom16(f)
			if Reason(a, allowPrivate) == "" {
				t.Errorf("%s (embedding %s, refused as %s) is allowed", a, a4, why4)
			}
		}
	})
}
