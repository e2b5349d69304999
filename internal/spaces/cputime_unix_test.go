//go:build unix

package spaces

import (
	"runtime"
	"syscall"
)

// cpuSeconds is the CPU time the process has used (user and system).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// peakRSS is the peak resident memory, in bytes, of this process and of
// the largest child process it has waited for; -1 where unknown.
func peakRSS() (self, children int64) {
	unit := int64(1024) // ru_maxrss is in KiB on Linux, in bytes on the BSDs and macOS
	if runtime.GOOS != "linux" {
		unit = 1
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1, -1
	}
	self = ru.Maxrss * unit
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return self, -1
	}
	return self, ru.Maxrss * unit
}
