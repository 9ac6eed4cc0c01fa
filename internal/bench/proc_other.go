//go:build !linux

package bench

import (
	"os/exec"
	"syscall"
	"time"
)

// cpuPlan says where the processes run; outside Linux nothing is pinned.
type cpuPlan struct {
	gateway int   // -1: unpinned
	load    []int // empty: unpinned
}

func planCPUs(bool) cpuPlan { return cpuPlan{gateway: -1} }

func pinSelf([]int) (func(), error) { return func() {}, nil }

func startPinned(cmd *exec.Cmd, _ int) error { return cmd.Start() }

func childAttr() *syscall.SysProcAttr { return nil }

func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }
