package providers

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/internal/ssrf"
)

// trackedConn is every connection the client dials. Its LocalAddr leads
// back to it through fasthttp's Response.LocalAddr, which lets a stream
// move the read deadline fasthttp set for the headers, and apply the idle
// limit per read, on the raw connection (also under TLS).
type trackedConn struct {
	net.Conn
	laddr  connAddr
	broken atomic.Bool // a read failed (EOF included): never reuse
}

func (c *trackedConn) LocalAddr() net.Addr { return &c.laddr }

func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.broken.Store(true)
	}
	return n, err
}

// connAddr is a connection's local address that knows its connection.
type connAddr struct {
	net.Addr
	conn *trackedConn
}

// ForbiddenAddrError is the dial error for an upstream host that resolves
// to an address the gateway must not connect to.
type ForbiddenAddrError struct {
	Host   string
	Addr   netip.Addr
	Reason string // "link-local", "loopback", …
}

func (e *ForbiddenAddrError) Error() string {
	return fmt.Sprintf("upstream host %s resolves to a %s address (%s), which is not allowed", e.Host, e.Reason, e.Addr)
}

// dial resolves addr, refuses it when any of its addresses is forbidden,
// connects to the checked address itself (so a second resolution cannot
// differ), and with useTLS does the handshake within the same timeout.
func (c *Client) dial(addr string, timeout time.Duration, useTLS bool) (net.Conn, error) {
	if timeout <= 0 || timeout > c.cfg.DialTimeout {
		timeout = c.cfg.DialTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("invalid port in %q", addr)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if ips, err = c.cfg.Resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	for _, ip := range ips {
		if why := forbidden(ip, c.cfg.AllowPrivate); why != "" {
			return nil, &ForbiddenAddrError{Host: host, Addr: ip, Reason: why}
		}
	}
	d := net.Dialer{Control: c.controlDial}
	var raw net.Conn
	for _, ip := range ips {
		if raw, err = d.DialContext(ctx, "tcp", netip.AddrPortFrom(ip.Unmap(), uint16(port)).String()); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: raw}
	tc.laddr = connAddr{Addr: raw.LocalAddr(), conn: tc}
	if !useTLS {
		return tc, nil
	}
	cfg := c.cfg.TLSConfig.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	conn := tls.Client(tc, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		_ = tc.Close()
		return nil, err
	}
	return conn, nil
}

// forbidden says why an upstream address is refused, or "" when it is
// allowed: the rule of package ssrf, the same the admin API applies to a
// key's base_url.
func forbidden(a netip.Addr, allowPrivate bool) string {
	return ssrf.Reason(a, allowPrivate)
}

// controlDial is the dialer's last word: it judges the address the socket
// is about to connect to, whatever resolved it, so that no code path can
// reach a refused address (the resolved addresses were checked before).
func (c *Client) controlDial(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s %s: not an IP address and port", network, address)
	}
	if why := forbidden(ap.Addr(), c.cfg.AllowPrivate); why != "" {
		return &ForbiddenAddrError{Host: ap.Addr().String(), Addr: ap.Addr(), Reason: why}
	}
	return nil
}
