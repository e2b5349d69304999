//go:build race

package spaces

// slow scales time limits in tests: under the race detector a worker
// process takes seconds to start instead of a fraction of one.
const slow = 10
