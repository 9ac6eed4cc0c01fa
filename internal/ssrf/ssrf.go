// Package ssrf decides which addresses Sluice may connect to upstream. One
// function, Reason, is the rule: the admin API applies it to the addresses
// of a provider key's base_url, and the provider client's dialer applies it
// again to the address each connection is made to (against DNS
// rebinding). Keeping the rule in one place means the two checks cannot
// drift apart.
package ssrf

import "net/netip"

// Reasons returned by Reason.
const (
	LinkLocal  = "link-local"
	Metadata   = "metadata"
	NonUnicast = "non-unicast"
	Reserved   = "reserved"
	Loopback   = "loopback"
	Private    = "private"
	SharedNAT  = "shared (CGNAT)"
)

var (
	// Cloud metadata services that do not live on a link-local address.
	awsMetadataV6     = netip.MustParseAddr("fd00:ec2::254")
	alibabaMetadata   = netip.MustParseAddr("100.100.100.200")
	oracleMetadataOld = netip.MustParseAddr("192.0.0.192")

	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	cgnat       = netip.MustParsePrefix("100.64.0.0/10")
	classE      = netip.MustParsePrefix("240.0.0.0/4") // reserved, and 255.255.255.255
	siteLocal   = netip.MustParsePrefix("fec0::/10")   // deprecated, still private

	// IPv6 ranges whose addresses carry an IPv4 address that the packets
	// end up at (RFC 4291, 6052, 8215, 3056, 4380).
	ipv4Compatible = netip.MustParsePrefix("::/96")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	teredo         = netip.MustParsePrefix("2001::/32")
)

// Reason says why Sluice may not connect to a, or "" when it may.
//
// Always refused: link-local addresses (169.254.0.0/16 with the cloud
// metadata address 169.254.169.254, fe80::/10, link-local multicast), the
// other cloud metadata addresses (fd00:ec2::254, 100.100.100.200,
// 192.0.0.192), unspecified, "this network" (0.0.0.0/8), multicast,
// broadcast and reserved (240.0.0.0/4) addresses. Refused unless
// allowPrivate: loopback, private (RFC 1918, fc00::/7, fec0::/10, the
// local-use NAT64 prefix 64:ff9b:1::/48) and shared CGNAT (100.64.0.0/10)
// addresses.
//
// An IPv6 address that carries an IPv4 address is judged by that address
// as well: IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d),
// NAT64 (64:ff9b::/96 and, at every RFC 6052 prefix length, 64:ff9b:1::/48),
// 6to4 (2002::/16) and Teredo (2001::/32: its server and its client
// address). Such an address reaches the IPv4 host wherever a translator or
// relay is on the path, so 64:ff9b::a9fe:a9fe is as much the metadata
// service as 169.254.169.254.
func Reason(a netip.Addr, allowPrivate bool) string {
	a = a.WithZone("")
	if a.Is4In6() {
		return reason4(a.Unmap(), allowPrivate)
	}
	if a.Is4() {
		return reason4(a, allowPrivate)
	}
	if why := reason6(a, allowPrivate); why != "" {
		return why
	}
	var embedded [4]netip.Addr
	for _, e := range embeddedIPv4(a, embedded[:0]) {
		if why := reason4(e, allowPrivate); why != "" {
			return why
		}
	}
	return ""
}

func reason4(a netip.Addr, allowPrivate bool) string {
	switch {
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return LinkLocal
	case a == alibabaMetadata || a == oracleMetadataOld:
		return Metadata
	case thisNetwork.Contains(a) || a.IsMulticast():
		return NonUnicast
	case classE.Contains(a):
		return Reserved
	case allowPrivate:
		return ""
	case a.IsLoopback():
		return Loopback
	case a.IsPrivate():
		return Private
	case cgnat.Contains(a):
		return SharedNAT
	}
	return ""
}

func reason6(a netip.Addr, allowPrivate bool) string {
	switch {
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return LinkLocal
	case a == awsMetadataV6:
		return Metadata
	case a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast():
		return NonUnicast
	case allowPrivate:
		return ""
	case a.IsLoopback():
		return Loopback
	case a.IsPrivate() || siteLocal.Contains(a) || nat64Local.Contains(a):
		return Private
	}
	return ""
}

// embeddedIPv4 appends the IPv4 addresses that the IPv6 address a carries
// to dst.
func embeddedIPv4(a netip.Addr, dst []netip.Addr) []netip.Addr {
	b := a.As16()
	v4 := func(p0, p1, p2, p3 byte) netip.Addr { return netip.AddrFrom4([4]byte{p0, p1, p2, p3}) }
	switch {
	case ipv4Compatible.Contains(a):
		if a.IsUnspecified() || a.IsLoopback() {
			return dst // ::, ::1: judged as IPv6 addresses
		}
		dst = append(dst, v4(b[12], b[13], b[14], b[15]))
	case nat64.Contains(a):
		dst = append(dst, v4(b[12], b[13], b[14], b[15]))
	case nat64Local.Contains(a):
		// The operator chooses the prefix length inside the /48; RFC 6052
		// places the IPv4 address around the reserved octet 8 for each.
		// A reading in 0.0.0.0/8 is the zero padding of another prefix
		// length, not an address a translator would send to.
		for _, e := range [...]netip.Addr{
			v4(b[6], b[7], b[9], b[10]),    // /48
			v4(b[7], b[9], b[10], b[11]),   // /56
			v4(b[9], b[10], b[11], b[12]),  // /64
			v4(b[12], b[13], b[14], b[15]), // /96
		} {
			if !thisNetwork.Contains(e) {
				dst = append(dst, e)
			}
		}
	case sixToFour.Contains(a):
		dst = append(dst, v4(b[2], b[3], b[4], b[5]))
	case teredo.Contains(a):
		// The Teredo server, and the client's address, stored inverted.
		dst = append(dst, v4(b[4], b[5], b[6], b[7]), v4(^b[12], ^b[13], ^b[14], ^b[15]))
	}
	return dst
}
