package sandbox_test

import (
	"testing"
	"time"
)

// The start-up cost of a code cell: bubblewrap's namespaces and mounts,
// the launcher, the interpreter; then the libraries' imports. Besides the
// wall time per cell, py-cpu-ms/op is the CPU time of the interpreter that
// ran the code (Result.CPUTime), which a busy machine inflates less than
// the wall time. docs/benchmarks.md has the figures.

func benchmarkCell(b *testing.B, code, want string) {
	sb := newSandbox(b)
	var cpu time.Duration
	for b.Loop() {
		r, err := sb.Run(b.Context(), code)
		if err != nil || r.ExitCode != 0 || r.Stdout != want {
			b.Fatalf("%v %+v", err, r)
		}
		cpu += r.CPUTime
	}
	b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "py-cpu-ms/op")
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
