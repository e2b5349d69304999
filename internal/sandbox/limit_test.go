package sandbox

import "testing"

// The limit named from what the code wrote to stderr, including the
// tracebacks of processes that failed at once and wrote over one another.
func TestLimitHitFromStderr(t *testing.T) {
	interleaved := "Traceback (most recent call last):\nTraceback (most recent call last):\n  File \"cell.py\", line 3, in <module>\n    os.fork()\n" +
		"BlockingIOError: [Errno 11] Resource temporarily unavailable\nTraceback (most recent call last):\n  File \"cell.py\", line 3, in <module>\n"
	for _, tc := range []struct {
		name, stderr string
		exit         int
		want         string
	}{
		{"one traceback, fork refused", "Traceback (most recent call last):\nBlockingIOError: [Errno 11] Resource temporarily unavailable\n", 1, LimitProcesses},
		{"tracebacks written over one another", interleaved, 1, LimitProcesses},
		{"memory", "Traceback (most recent call last):\nMemoryError\n", 1, LimitMemory},
		{"an earlier fork failure handled, then another error", "[Errno 11] Resource temporarily unavailable\nTraceback (most recent call last):\nValueError: bad\n", 1, ""},
		{"a plain error", "Traceback (most recent call last):\nZeroDivisionError: division by zero\n", 1, ""},
		{"success", "", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Sandbox{}
			r := &Result{ExitCode: tc.exit, Stderr: tc.stderr}
			if got := s.limitHit(r, &status{}); got != tc.want {
				t.Errorf("limit %q, want %q", got, tc.want)
			}
		})
	}
}
