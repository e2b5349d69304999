package main

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// With a key the model endpoint refuses, or an endpoint that cannot be
// reached, `sova ask` fails within 2 s of the run starting and says that
// the model endpoint is at fault and which setting to fix; it never blames
// the web search. The 2 s run from the first line the run prints to the
// error line: the process's start-up (a race-instrumented binary on a
// loaded CI machine takes seconds on its own) is logged, not judged.
func TestAskNamesTheModelEndpointAtOnce(t *testing.T) {
	w := newWorld(t)
	w.model.RequireKey("test-key")
	for _, f := range []struct {
		name, setting string
		env           []string
	}{
		{"wrong key", "SOVA_LLM_API_KEY", w.envWith("SOVA_LLM_API_KEY", "wrong-key")},
		{"unreachable", "SOVA_LLM_BASE_URL", w.envWith("SOVA_LLM_BASE_URL", closedPortURL(t))},
	} {
		for _, mode := range []string{"search", "extreme", "deep_research"} {
			life, run, errOut, err := timedAsk(t, f.env, "ask", "--mode", mode, "--no-save", "How did presidents describe the economy in the 1930s?")
			t.Logf("%s, %s: exit %d; run %s, process %s: %s", f.name, mode, exitCode(err), run.Round(time.Millisecond), life.Round(time.Millisecond), strings.TrimSpace(errOut))
			if err == nil {
				t.Errorf("%s, %s: sova ask succeeded", f.name, mode)
				continue
			}
			if !strings.Contains(errOut, "model endpoint") || !strings.Contains(errOut, f.setting) || strings.Contains(errOut, "web search") ||
				strings.Contains(errOut, "wrong-key") {
				t.Errorf("%s, %s: stderr %q, want the model endpoint and %s named", f.name, mode, errOut, f.setting)
			}
			if run > 2*time.Second {
				t.Errorf("%s, %s: the error came %s after the run started, want under 2s", f.name, mode, run)
			}
		}
	}
}

// timedAsk runs sova and times its stderr as it comes: life is the whole
// process, run the time from its first stderr line to the line that says
// "Error".
func timedAsk(t *testing.T, env []string, args ...string) (life, run time.Duration, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = env
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	var first, failed time.Time
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		if failed.IsZero() && strings.Contains(sc.Text(), "Error") {
			failed = now
		}
		buf.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	life = time.Since(start)
	if failed.IsZero() {
		failed = time.Now()
	}
	if first.IsZero() {
		first = start
	}
	return life, failed.Sub(first), buf.String(), err
}
