package doctor

import (
	"context"
	"errors"
	"os/exec"
	"strings"
)

// CheckSandbox is the name of the sandbox check.
const CheckSandbox = "code sandbox"

const sandboxFix = "install bubblewrap and python3 with numpy, pandas and matplotlib " +
	"(Debian: apt-get install bubblewrap python3-numpy python3-pandas python3-matplotlib)"

// Sandbox reports whether the code sandbox could run here: bubblewrap
// (bwrap) and python3 with numpy, pandas and matplotlib. Sova does not
// run code yet, so the check is optional.
func Sandbox(ctx context.Context, opts Options) Check {
	c := Check{Name: CheckSandbox}
	ctx, cancel := context.WithTimeout(ctx, opts.timeout())
	defer cancel()
	run := opts.Command
	if run == nil {
		run = runCommand
	}
	unavailable := func(why string) Check {
		c.Status, c.Detail, c.Fix = Fail, "unavailable: "+why, sandboxFix
		return c
	}
	out, err := run(ctx, "bwrap", "--version")
	if err != nil {
		return unavailable("bubblewrap (bwrap) " + failure(out, err))
	}
	bwrap := strings.TrimSpace(out)
	if _, err := run(ctx, "python3", "--version"); err != nil {
		return unavailable("python3 " + failure("", err))
	}
	if out, err := run(ctx, "python3", "-c", "import numpy, pandas, matplotlib"); err != nil {
		return unavailable("python3 cannot import numpy, pandas and matplotlib: " + lastLine(out, err))
	}
	c.Status, c.Detail = OK, "available ("+bwrap+", python3 with numpy, pandas, matplotlib)"
	return c
}

func runCommand(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

// failure describes why a program could not be run.
func failure(out string, err error) string {
	if errors.Is(err, exec.ErrNotFound) {
		return "is not installed"
	}
	return "does not run: " + lastLine(out, err)
}

// lastLine is the last line a failed program printed (Python's exception),
// or its error when it printed nothing.
func lastLine(out string, err error) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return err.Error()
}
