package testenv

import (
	"io"
	"net"
	"sync"
	"testing"
)

// TCPProxy forwards connections from a loopback port to a target, so that
// a test can cut a service off (Break) and bring it back (Restore) while
// its client keeps the same address: "Redis killed mid-run".
type TCPProxy struct {
	t      testing.TB
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup // the accept loop and the copy goroutines
}

// NewTCPProxy starts forwarding a new loopback port to target. It stops at
// cleanup.
func NewTCPProxy(t testing.TB, target string) *TCPProxy {
	t.Helper()
	p := &TCPProxy{t: t, target: target, conns: map[net.Conn]struct{}{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("tcp proxy: %v", err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(func() {
		p.Break()
		p.wg.Wait()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *TCPProxy) Addr() string { return p.addr }

// Conns returns the number of forwarded connections open: a pair counts
// once, and a pair one side of which closed is gone.
func (p *TCPProxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) / 2
}

// Break closes the listener and every forwarded connection: new
// connections are refused until Restore.
func (p *TCPProxy) Break() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// Restore listens on the same address again.
func (p *TCPProxy) Restore() {
	p.t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("tcp proxy: listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

func (p *TCPProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = c.Close()
				continue
			}
			if !p.track(c, up) {
				return
			}
			p.wg.Add(2)
			go p.pipe(c, up)
			go p.pipe(up, c)
		}
	}()
}

// track registers a forwarded pair, or closes it when the proxy broke in
// the meantime.
func (p *TCPProxy) track(c, up net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		_ = c.Close()
		_ = up.Close()
		return false
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	return true
}

func (p *TCPProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src) // ends when either side closes; a cut is what Break is for
	_ = dst.Close()
	_ = src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}
