package server_test

import (
	"os"
	"testing"
)

// TestMain stops the Chromium that the browser tests share once they have
// all run.
func TestMain(m *testing.M) {
	code := m.Run()
	stopChromium()
	os.Exit(code)
}
