package fetch

import (
	"os"
	"testing"

	"github.com/sova-ai/sova/internal/isolate"
)

// TestMain lets this test binary serve as the worker that reads PDFs
// (internal/isolate starts it again with the worker's arguments).
func TestMain(m *testing.M) {
	isolate.Main()
	os.Exit(m.Run())
}
