//go:build !linux

package embedded

// lowerThreadPriority is a no-op where a thread's priority cannot be set
// alone: the writer still runs on its own thread.
func lowerThreadPriority(int) error { return nil }
