package sandbox_test

import (
	"syscall"
	"testing"
	"time"
)

// The start-up cost of a code cell: bubblewrap's namespaces and mounts,
// the launcher, the interpreter; then the libraries' imports. Besides the
// wall time per cell, cpu-ms/op is the CPU time the cell's processes used
// (user and system), which a busy machine inflates less. docs/benchmarks.md
// has the figures.

func benchmarkCell(b *testing.B, code, want string) {
	sb := newSandbox(b)
	before := childrenCPU()
	for b.Loop() {
		r, err := sb.Run(b.Context(), code)
		if err != nil || r.ExitCode != 0 || r.Stdout != want {
			b.Fatalf("%v %+v", err, r)
		}
	}
	b.ReportMetric(float64(childrenCPU()-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// childrenCPU is the CPU time of the child processes waited for so far:
// bubblewrap, which waits for everything in the sandbox.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkCellPrint(b *testing.B) { benchmarkCell(b, "print(1)\n", "1\n") }

func BenchmarkCellImportNumpy(b *testing.B) {
	benchmarkCell(b, "import numpy\nprint(1)\n", "1\n")
}

func BenchmarkCellImportPandasMatplotlib(b *testing.B) {
	benchmarkCell(b, "import pandas, matplotlib\nprint(1)\n", "1\n")
}

func BenchmarkCellChart(b *testing.B) {
	benchmarkCell(b, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\nprint(1)\n", "1\n")
}
