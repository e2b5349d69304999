//go:build unix && !linux

package isolate

import "syscall"

const addressSlack = 64 << 20

// addressSpace is unknown here: the address-space limit is not set, and
// the Go memory limit alone bounds the heap (softly).
func addressSpace() (int64, bool) { return 0, false }

func sysProcAttr() *syscall.SysProcAttr { return nil }

// maxRSSBytes converts ru_maxrss, in bytes on the BSDs and macOS.
func maxRSSBytes(n int64) int64 { return n }
