package isolate

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// addressSlack is added to the address-space limit for the runtime's
// reservations beyond the heap itself.
const addressSlack = 64 << 20

// addressSpace is the size of the process's address space now
// (/proc/self/statm, in pages).
func addressSpace() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

// sysProcAttr kills the worker when the process that started it dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// maxRSSBytes converts ru_maxrss, in KiB on Linux.
func maxRSSBytes(kb int64) int64 { return kb << 10 }
