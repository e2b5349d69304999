package app

import (
	"context"

	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/sandbox"
)

// SandboxConfig is the code sandbox's configuration from Sova's settings
// (SOVA_SANDBOX_*).
func SandboxConfig(cfg *config.Config) sandbox.Config {
	return sandbox.Config{
		Bwrap:       cfg.SandboxBwrap,
		Python:      cfg.SandboxPython,
		CPUTime:     cfg.SandboxCPUTime,
		WallTime:    cfg.SandboxWallTime,
		Memory:      int64(cfg.SandboxMemoryBytes),
		Processes:   cfg.SandboxProcesses,
		OutputBytes: int(cfg.SandboxOutputBytes),
		FileBytes:   int64(cfg.SandboxFileBytes),
		WorkBytes:   int64(cfg.SandboxWorkBytes),
		MaxFiles:    cfg.SandboxMaxFiles,
		Concurrency: cfg.SandboxConcurrency,
		UID:         cfg.SandboxUID,
		GID:         cfg.SandboxGID,
	}
}

// ErrSandboxDisabled is why there is no sandbox when SOVA_SANDBOX_ENABLED
// is false; it matches sandbox.ErrUnavailable.
var ErrSandboxDisabled error = &sandbox.UnavailableError{Reason: "turned off (SOVA_SANDBOX_ENABLED=false)", Fix: "set SOVA_SANDBOX_ENABLED=true"}

// Sandbox starts the code sandbox as configured, after its probe (a
// second or so). The error, matching sandbox.ErrUnavailable, says why
// there is none; code tools are then withdrawn (tools.CodeTools).
func Sandbox(ctx context.Context, cfg *config.Config) (*sandbox.Sandbox, error) {
	if !cfg.SandboxEnabled {
		return nil, ErrSandboxDisabled
	}
	return sandbox.New(ctx, SandboxConfig(cfg))
}
