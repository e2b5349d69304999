package config

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// validateSandbox checks the code sandbox's settings: limits that let
// Python with numpy, pandas and matplotlib start, and none so large that a
// cell could hurt the host.
func (c *Config) validateSandbox() []error {
	var errs []error
	between := func(name string, v, lo, hi int64) {
		if v < lo || v > hi {
			errs = append(errs, fmt.Errorf("%s must be between %d and %d, got %d", name, lo, hi, v))
		}
	}
	size := func(name string, v, lo, hi ByteSize) {
		if v < lo || v > hi {
			errs = append(errs, fmt.Errorf("%s must be between %s and %s, got %s", name, lo, hi, v))
		}
	}
	duration := func(name string, v, lo, hi time.Duration) {
		if v < lo || v > hi {
			errs = append(errs, fmt.Errorf("%s must be between %s and %s, got %s", name, lo, hi, v))
		}
	}
	if strings.TrimSpace(c.SandboxBwrap) == "" {
		errs = append(errs, fmt.Errorf("SOVA_SANDBOX_BWRAP must name the bubblewrap program"))
	}
	if !filepath.IsAbs(c.SandboxPython) {
		errs = append(errs, fmt.Errorf("SOVA_SANDBOX_PYTHON must be an absolute path, got %q", c.SandboxPython))
	}
	duration("SOVA_SANDBOX_CPU_TIME", c.SandboxCPUTime, time.Second, time.Hour)
	duration("SOVA_SANDBOX_WALL_TIME", c.SandboxWallTime, time.Second, time.Hour)
	// Python with pandas and matplotlib maps about 400 MiB.
	size("SOVA_SANDBOX_MEMORY_BYTES", c.SandboxMemoryBytes, 256<<20, 64<<30)
	// The launcher and the interpreter count too.
	between("SOVA_SANDBOX_PROCESSES", int64(c.SandboxProcesses), 8, 4096)
	size("SOVA_SANDBOX_OUTPUT_BYTES", c.SandboxOutputBytes, 1<<10, 64<<20)
	size("SOVA_SANDBOX_FILE_BYTES", c.SandboxFileBytes, 64<<10, 1<<30)
	size("SOVA_SANDBOX_WORK_DIR_BYTES", c.SandboxWorkBytes, 1<<20, 4<<30)
	between("SOVA_SANDBOX_MAX_FILES", int64(c.SandboxMaxFiles), 1, 1000)
	between("SOVA_SANDBOX_CONCURRENCY", int64(c.SandboxConcurrency), 1, 256)
	// Root's processes are exempt from the process limit, so the sandbox
	// never runs as root.
	between("SOVA_SANDBOX_UID", int64(c.SandboxUID), 1, 1<<31-1)
	between("SOVA_SANDBOX_GID", int64(c.SandboxGID), 1, 1<<31-1)
	return errs
}
