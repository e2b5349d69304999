package research

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/sova-ai/sova/internal/mode"
)

// Paths of the session folder (seed 001 §4, stage 2).
const (
	fileMain       = "main.md"
	fileDraft      = "draft_report.md"
	fileSupervisor = "supervisor.md"
	fileReport     = "report.md"
)

func agentFile(n int) string { return fmt.Sprintf("agents/agent_%d.md", n) }
func itemFile(n int) string  { return fmt.Sprintf("items/item_%d.md", n) }

// MemWorkspace is a mode.Workspace kept in memory. A run uses one when the
// engine gives it none (OpenAI-compatible endpoint, tests); it lives and
// dies with the run. Safe for concurrent use.
type MemWorkspace struct {
	mu    sync.Mutex
	files map[string]string
}

var _ mode.Workspace = (*MemWorkspace)(nil)

// NewMemWorkspace returns an empty workspace.
func NewMemWorkspace() *MemWorkspace { return &MemWorkspace{files: map[string]string{}} }

// Write implements mode.Workspace.
func (w *MemWorkspace) Write(ctx context.Context, path, content string) error {
	if err := checkPath(path); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.files[path] = content
	return ctx.Err()
}

// Append implements mode.Workspace.
func (w *MemWorkspace) Append(ctx context.Context, path, content string) error {
	if err := checkPath(path); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.files[path] += content
	return ctx.Err()
}

// Read implements mode.Workspace.
func (w *MemWorkspace) Read(_ context.Context, path string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.files[path]
	if !ok {
		return "", fmt.Errorf("%s: %w", path, mode.ErrNoFile)
	}
	return s, nil
}

// List implements mode.Workspace; paths come sorted.
func (w *MemWorkspace) List(context.Context) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.files))
	for p := range w.files {
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

// checkPath keeps paths relative and inside the folder, as a store-backed
// workspace exported to disk would need them.
func checkPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || slices.Contains(strings.Split(p, "/"), "..") {
		return fmt.Errorf("workspace: invalid path %q", p)
	}
	return nil
}
