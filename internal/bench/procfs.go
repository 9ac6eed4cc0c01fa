package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// errNoProc is returned where /proc is missing.
var errNoProc = errors.New("the gateway's CPU time and RSS are read from /proc: Linux only")

// cpuSeconds reads utime+stime of pid from /proc/<pid>/stat.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, errNoProc
		}
		return 0, err
	}
	ticks, err := parseStatTicks(b)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return float64(ticks) / float64(clockTicks()), nil
}

// parseStatTicks returns utime+stime, in clock ticks, from a
// /proc/<pid>/stat line. The command name (field 2) may hold spaces and
// parentheses, so fields are counted after its last ')'.
func parseStatTicks(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("no command name")
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	var sum uint64
	for _, s := range f[11:13] {
		n, err := strconv.ParseUint(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("utime or stime %q: %w", s, err)
		}
		sum += n
	}
	return sum, nil
}

// clockTicks is the unit of /proc/<pid>/stat's times (getconf CLK_TCK);
// 100 on every Linux architecture Go supports, the fallback when getconf is
// missing.
var clockTicks = sync.OnceValue(func() int {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		return 100
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(out)))
	if err != nil || n <= 0 {
		return 100
	}
	return n
})

// peakRSS reads VmHWM, the peak resident set size, of pid.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, errNoProc
		}
		return 0, err
	}
	return parseHWM(b)
}

// parseHWM finds "VmHWM:   12345 kB" in a /proc/<pid>/status file.
func parseHWM(b []byte) (int64, error) {
	for line := range bytes.Lines(b) {
		v, ok := bytes.CutPrefix(line, []byte("VmHWM:"))
		if !ok {
			continue
		}
		f := bytes.Fields(v)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("VmHWM line %q", bytes.TrimSpace(line))
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmHWM %q: %w", f[0], err)
		}
		return kb << 10, nil
	}
	return 0, errors.New("no VmHWM in /proc/<pid>/status")
}

// busySeconds is the CPU time the machine's processes have used since
// boot: user, nice and system from the first line of /proc/stat. Interrupt
// time is left out: loopback traffic is processed in softirqs that the
// benchmark's own processes cause but are not charged for.
func busySeconds() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, errNoProc
		}
		return 0, err
	}
	ticks, err := parseBusyTicks(b)
	if err != nil {
		return 0, fmt.Errorf("/proc/stat: %w", err)
	}
	return float64(ticks) / float64(clockTicks()), nil
}

// parseBusyTicks sums user, nice and system of /proc/stat's "cpu" line.
func parseBusyTicks(b []byte) (uint64, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 4 || string(f[0]) != "cpu" {
		return 0, fmt.Errorf("first line %q is not the cpu total", line)
	}
	var sum uint64
	for _, s := range f[1:4] {
		n, err := strconv.ParseUint(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu time %q: %w", s, err)
		}
		sum += n
	}
	return sum, nil
}

// otherMeter measures the CPU time of the processes other than this one
// and the gateway: on a machine that is not idle, the figures are noise.
type otherMeter struct {
	pid            int
	start          time.Time
	busy, self, gw float64
}

func startOtherMeter(gatewayPID int) (*otherMeter, error) {
	m := &otherMeter{pid: gatewayPID, start: time.Now()}
	var err error
	m.busy, m.self, m.gw, err = cpuTriple(gatewayPID)
	return m, err
}

// stop returns what the other processes used since start.
func (m *otherMeter) stop() (OtherProcesses, error) {
	busy, self, gw, err := cpuTriple(m.pid)
	if err != nil {
		return OtherProcesses{}, err
	}
	o := OtherProcesses{
		CPUS:    max(0, (busy-m.busy)-(self-m.self)-(gw-m.gw)),
		Seconds: time.Since(m.start).Seconds(),
	}
	o.Share = o.CPUS / o.Seconds
	return o, nil
}

func cpuTriple(gatewayPID int) (busy, self, gw float64, err error) {
	if busy, err = busySeconds(); err != nil {
		return
	}
	if self, err = cpuSeconds(os.Getpid()); err != nil {
		return
	}
	gw, err = cpuSeconds(gatewayPID)
	return
}
