//go:build !unix

package spaces

// cpuSeconds is unknown here; benchmarks leave the figure out.
func cpuSeconds() float64 { return -1 }

// peakRSS is unknown here.
func peakRSS() (self, children int64) { return -1, -1 }
