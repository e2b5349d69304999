//go:build unix

package isolate

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// limitProcess limits the worker itself: address space to what it has
// mapped now plus mem (where the baseline can be read), CPU time to cpu
// seconds. At the soft CPU limit the kernel sends SIGXCPU, on which the
// worker exits with exitCPU; one second later the hard limit kills it.
func limitProcess(mem, cpu int64) error {
	if base, ok := addressSpace(); ok {
		// Slack for the runtime's own bookkeeping, which grows with the
		// heap in steps (arenas of 64 MiB on 64-bit Linux).
		as := uint64(base + mem + addressSlack)
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: as, Max: as}); err != nil {
			return fmt.Errorf("RLIMIT_AS: %w", err)
		}
	}
	xcpu := make(chan os.Signal, 1)
	signal.Notify(xcpu, syscall.SIGXCPU)
	go func() {
		<-xcpu
		fmt.Fprintln(os.Stderr, "isolate: CPU time limit reached")
		os.Exit(exitCPU)
	}()
	if err := syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: uint64(cpu), Max: uint64(cpu + 1)}); err != nil {
		return fmt.Errorf("RLIMIT_CPU: %w", err)
	}
	return nil
}

// maxRSS is the worker's peak resident memory in bytes.
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return maxRSSBytes(ru.Maxrss)
}

// killedBySignal: the worker was killed (SIGKILL at the hard CPU limit,
// SIGXCPU before its handler ran, the kernel's out-of-memory killer).
func killedBySignal(ee *exec.ExitError) bool {
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && (ws.Signal() == syscall.SIGKILL || ws.Signal() == syscall.SIGXCPU)
}
