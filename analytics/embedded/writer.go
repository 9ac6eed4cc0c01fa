package embedded

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// checkpointEvery is how often the writer folds the write-ahead log back
// into the database file. Automatic checkpoints are off on the writing
// connection (wal_autocheckpoint=0): SQLite would otherwise run one inside
// the commit that crosses 1,000 pages, a 25–40 ms stall of that commit.
// A PASSIVE checkpoint once a second keeps the WAL to about a second of
// writes and never waits for readers.
const checkpointEvery = time.Second

// writerNice is the nice value of the writer's OS thread: the lowest
// priority, so that the kernel runs the request-serving threads first
// whenever both are runnable on one core (docs/performance.md).
const writerNice = 19

// job is one unit of work for the writer thread.
type job struct {
	ctx context.Context
	fn  func(context.Context) error
	// res receives fn's result; buffered (1) so the writer never blocks on
	// a caller that gave up.
	res chan error
}

// writer runs every write of the store on one goroutine locked to its own
// OS thread, which it lowers to the lowest scheduling priority.
//
// Why: modernc's SQLite is pure Go, so an insert is Go code that holds a P
// for as long as it runs (Go preempts after 10 ms), and a gateway given
// one core (GOMAXPROCS=1) used to stall every request that arrived during
// a batch write or a checkpoint — the embedded default's p99. On its own
// thread and P (serve keeps GOMAXPROCS ≥ 2 with the embedded store) the
// write no longer holds the requests' P, and at nice 19 the kernel gives
// the core to a request thread as soon as one wakes.
type writer struct {
	// jobs is unbuffered: a caller waits until the writer takes its job,
	// so writes stay in call order and Close never strands one.
	jobs chan job
	quit chan struct{}
	done chan struct{}
	// checkpoint folds the WAL into the database; run by the writer.
	checkpoint func(context.Context) error
}

func startWriter(checkpoint func(context.Context) error) *writer {
	w := &writer{jobs: make(chan job), quit: make(chan struct{}), done: make(chan struct{}), checkpoint: checkpoint}
	ready := make(chan struct{})
	go w.loop(ready)
	<-ready
	return w
}

// loop owns the writer thread until stop. It never unlocks the thread, so
// the runtime ends the thread (and its priority) with the goroutine.
func (w *writer) loop(ready chan<- struct{}) {
	defer close(w.done)
	runtime.LockOSThread()
	// Best effort: where the priority cannot be lowered the writer still
	// has its own thread.
	_ = lowerThreadPriority(writerNice)
	close(ready)
	tick := time.NewTicker(checkpointEvery)
	defer tick.Stop()
	dirty := false
	for {
		select {
		case j := <-w.jobs:
			j.res <- j.fn(j.ctx)
			dirty = true
		case <-tick.C:
			if dirty {
				// A failed checkpoint leaves the WAL to the next tick; the
				// writes themselves are committed already.
				_ = w.checkpoint(context.Background())
				dirty = false
			}
		case <-w.quit:
			return
		}
	}
}

// do runs fn on the writer thread and returns its error.
func (w *writer) do(ctx context.Context, fn func(context.Context) error) error {
	j := job{ctx: ctx, fn: fn, res: make(chan error, 1)}
	select {
	case w.jobs <- j:
	case <-ctx.Done():
		return fmt.Errorf("wait for the analytics writer: %w", ctx.Err())
	case <-w.done:
		return fmt.Errorf("analytics store closed")
	}
	return <-j.res
}

// stop ends the writer after the job it is running, if any.
func (w *writer) stop() {
	select {
	case <-w.done:
	default:
		close(w.quit)
	}
	<-w.done
}
