//go:build !unix

package isolate

import (
	"os"
	"os/exec"
	"syscall"
)

// On systems without rlimits the worker has the parent's deadline and the
// Go memory limit (soft) only.
func limitProcess(mem, cpu int64) error { return nil }

func sysProcAttr() *syscall.SysProcAttr { return nil }

func maxRSS(*os.ProcessState) int64 { return 0 }

func killedBySignal(*exec.ExitError) bool { return false }
