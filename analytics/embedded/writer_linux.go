package embedded

import "golang.org/x/sys/unix"

// lowerThreadPriority sets the nice value of the calling OS thread only:
// on Linux a thread id given to setpriority(PRIO_PROCESS) names that one
// thread.
func lowerThreadPriority(nice int) error {
	return unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), nice)
}
