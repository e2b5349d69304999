package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/sandbox"
	"github.com/sova-ai/sova/internal/sovatest"
)

// `sova ask --mode extreme` runs the plan, the searches and the code cell
// (in the sandbox) with their progress on stderr, and prints the cited
// answer with the chart's place on stdout.
func TestAskExtreme(t *testing.T) {
	cfg, err := config.FromEnv(map[string]string{"SOVA_DATA_DIR": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Sandbox(context.Background(), cfg); errors.Is(err, sandbox.ErrUnavailable) {
		t.Skipf("the code sandbox cannot run here (%v); the extreme run needs bubblewrap and python3-matplotlib", err)
	}
	w := newWorld(t)
	prov := sovatest.NewProviders(t)
	w.extra = sovatest.ProviderEnv(prov)
	out, errOut, err := w.sova(t, "ask", "--mode", "extreme", "Compare GDP growth decade by decade since the 1930s and plot it")
	if err != nil {
		t.Fatalf("ask: %v\nstderr:\n%s", err, errOut)
	}
	for _, want := range []string{"→ Research plan", "▸ Growth figures", "⌕ \"GDP growth by decade in the 1930s and 1940s\"", "▶ GDP growth by decade — ran, 1 chart",
		"xSearch is not available"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, "![GDP growth by decade](/api/runs/") || !strings.Contains(out, "[1]") || strings.Contains(out, "[9]") {
		t.Errorf("answer:\n%s", out)
	}
}
