//go:build !unix

package sovatest

import "time"

// CPUTime is the CPU time this process has used; unknown here, so 0.
func CPUTime() time.Duration { return 0 }
