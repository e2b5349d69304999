//go:build unix

package sovatest

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user and system) this process has used, for
// benchmarks that report CPU per unit of work; 0 where unknown.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
