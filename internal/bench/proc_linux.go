package bench

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cpuPlan says where the processes run: the gateway on one CPU, the load
// generator and the mock on the others.
type cpuPlan struct {
	gateway int   // -1: unpinned
	load    []int // empty: unpinned
}

// planCPUs gives the gateway the last CPU this process may use and the
// load the others; with one CPU, or noPin, nothing is pinned.
func planCPUs(noPin bool) cpuPlan {
	none := cpuPlan{gateway: -1}
	if noPin {
		return none
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return none
	}
	var cpus []int
	for i := range 1024 {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	if len(cpus) < 2 {
		return none
	}
	return cpuPlan{gateway: cpus[len(cpus)-1], load: cpus[:len(cpus)-1]}
}

// pinSelf restricts every thread of this process to cpus (threads started
// later inherit the mask of the thread that starts them) and returns the
// function that restores the previous mask.
func pinSelf(cpus []int) (restore func(), err error) {
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("read this process's CPU affinity: %w", err)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := setAllThreads(&set); err != nil {
		return nil, err
	}
	return func() { _ = setAllThreads(&old) }, nil
}

func setAllThreads(set *unix.CPUSet) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("list this process's threads: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		// A thread may have exited since the listing: ESRCH is fine.
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("set the CPU affinity of thread %d: %w", tid, err)
		}
	}
	return nil
}

// startPinned starts cmd on cpu: the child inherits the affinity of the
// thread that forks it, so that thread is pinned for the fork and
// restored after. cpu < 0 starts cmd unpinned.
func startPinned(cmd *exec.Cmd, cpu int) error {
	if cpu < 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("read the CPU affinity: %w", err)
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin to CPU %d: %w", cpu, err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil && err == nil {
		err = fmt.Errorf("restore the CPU affinity: %w", rerr)
	}
	return err
}

// childAttr makes the kernel stop the gateway if this process dies without
// stopping it.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// sleepUntil sleeps in nanosleep(2) rather than on a runtime timer: an idle
// Go scheduler waits for timers in epoll_wait, whose millisecond timeout
// would make sub-millisecond send intervals late by up to a millisecond.
// The scheduling goroutine holds its thread meanwhile; the other P keeps
// serving the senders.
func sleepUntil(t time.Time) {
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		ts := syscall.NsecToTimespec(int64(d))
		_ = syscall.Nanosleep(&ts, nil) // EINTR (the runtime's preemption signal): loop
	}
}
