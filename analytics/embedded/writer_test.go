package embedded

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/analyticstest"
)

// BenchmarkWriteStall measures what a batch write costs the requests that
// arrive meanwhile: a loopback TCP ping-pong every 2 ms (a request's
// wake-up through the network poller) while batches of 250 generated
// records are written back to back, as the pipeline does at 500 requests/s.
// "inline" writes on the calling goroutine (the build before issue 17),
// "thread" through the store's writer thread. Run with -cpu 1,2: with
// one P the inline write holds the only P. It reports the ping-pong's
// round trip p99 and max in ms.
func BenchmarkWriteStall(b *testing.B) {
	for _, mode := range []string{"inline", "thread"} {
		b.Run(mode, func(b *testing.B) {
			s, err := Open(context.Background(), filepath.Join(b.TempDir(), "analytics.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			recs := analyticstest.Generate(7, 250*max(b.N, 4))
			rtts := pingPong(b, func(ctx context.Context, i int) {
				batch := &analytics.Batch{ID: fmt.Sprintf("stall-%d", i), Records: recs[250*i : 250*(i+1)]}
				if mode == "inline" {
					err = s.write(ctx, batch)
				} else {
					err = s.Write(ctx, batch)
				}
				if err != nil {
					b.Error(err)
				}
			}, max(b.N, 4))
			slices.Sort(rtts)
			b.ReportMetric(float64(rtts[len(rtts)*99/100])/1e6, "p99-ms")
			b.ReportMetric(float64(rtts[len(rtts)-1])/1e6, "max-ms")
		})
	}
}

// pingPong runs write(i) for i < n while a client pings a loopback echo
// server every 2 ms, and returns the round trips.
func pingPong(b *testing.B, write func(context.Context, int), n int) []time.Duration {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 1)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var stop atomic.Bool
	done := make(chan []time.Duration)
	go func() {
		var rtts []time.Duration
		buf := make([]byte, 1)
		for !stop.Load() {
			t := time.Now()
			if _, err := c.Write(buf); err != nil {
				break
			}
			if _, err := c.Read(buf); err != nil {
				break
			}
			rtts = append(rtts, time.Since(t))
			time.Sleep(2 * time.Millisecond)
		}
		done <- rtts
	}()
	b.ResetTimer()
	for i := range n {
		write(context.Background(), i)
	}
	b.StopTimer()
	stop.Store(true)
	return <-done
}
