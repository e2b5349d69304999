package config

import (
	"strings"
	"testing"
	"time"
)

func TestSandboxDefaults(t *testing.T) {
	cfg, err := FromEnv(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.SandboxEnabled || cfg.SandboxBwrap != "bwrap" || cfg.SandboxPython != "/usr/bin/python3" ||
		cfg.SandboxCPUTime != 30*time.Second || cfg.SandboxWallTime != time.Minute || cfg.SandboxMemoryBytes != 1<<30 ||
		cfg.SandboxProcesses != 32 || cfg.SandboxOutputBytes != 256<<10 || cfg.SandboxFileBytes != 16<<20 ||
		cfg.SandboxWorkBytes != 64<<20 || cfg.SandboxMaxFiles != 16 || cfg.SandboxConcurrency != 2 ||
		cfg.SandboxUID != 65534 || cfg.SandboxGID != 65534 {
		t.Errorf("defaults: %+v", cfg)
	}
}

func TestSandboxValidation(t *testing.T) {
	tests := []struct {
		vars map[string]string
		want string // in the error; "" for none
	}{
		{map[string]string{"SOVA_SANDBOX_ENABLED": "false", "SOVA_SANDBOX_CPU_TIME": "5s", "SOVA_SANDBOX_MEMORY_BYTES": "536870912"}, ""},
		{map[string]string{"SOVA_SANDBOX_MEMORY_BYTES": "2GiB", "SOVA_SANDBOX_WORK_DIR_BYTES": "128 MiB", "SOVA_SANDBOX_OUTPUT_BYTES": "64KiB"}, ""},
		{map[string]string{"SOVA_SANDBOX_PYTHON": "python3"}, "SOVA_SANDBOX_PYTHON must be an absolute path"},
		{map[string]string{"SOVA_SANDBOX_BWRAP": " "}, "SOVA_SANDBOX_BWRAP must name"},
		{map[string]string{"SOVA_SANDBOX_CPU_TIME": "100ms"}, "SOVA_SANDBOX_CPU_TIME must be between 1s and 1h0m0s"},
		{map[string]string{"SOVA_SANDBOX_WALL_TIME": "0s"}, "SOVA_SANDBOX_WALL_TIME must be between"},
		{map[string]string{"SOVA_SANDBOX_MEMORY_BYTES": "1000000"}, "SOVA_SANDBOX_MEMORY_BYTES must be between 256 MiB and 64 GiB, got 977 KiB"},
		{map[string]string{"SOVA_SANDBOX_PROCESSES": "2"}, "SOVA_SANDBOX_PROCESSES must be between 8"},
		{map[string]string{"SOVA_SANDBOX_OUTPUT_BYTES": "10"}, "SOVA_SANDBOX_OUTPUT_BYTES"},
		{map[string]string{"SOVA_SANDBOX_FILE_BYTES": "0"}, "SOVA_SANDBOX_FILE_BYTES"},
		{map[string]string{"SOVA_SANDBOX_WORK_DIR_BYTES": "99999999999"}, "SOVA_SANDBOX_WORK_DIR_BYTES"},
		{map[string]string{"SOVA_SANDBOX_MAX_FILES": "0"}, "SOVA_SANDBOX_MAX_FILES"},
		{map[string]string{"SOVA_SANDBOX_CONCURRENCY": "0"}, "SOVA_SANDBOX_CONCURRENCY"},
		{map[string]string{"SOVA_SANDBOX_UID": "0"}, "SOVA_SANDBOX_UID must be between 1"},
		{map[string]string{"SOVA_SANDBOX_MEMORY_BYTES": "a lot"}, `SOVA_SANDBOX_MEMORY_BYTES="a lot" is not a valid`},
	}
	for _, tc := range tests {
		_, err := FromEnv(tc.vars)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.vars, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: err = %v, want %q", tc.vars, err, tc.want)
		}
	}
}
