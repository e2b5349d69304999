package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// TestAskTwiceUsesTheCache asks the same question in two processes with
// the web cache on (as it is by default): the second asks SearXNG nothing
// and fetches no page.
func TestAskTwiceUsesTheCache(t *testing.T) {
	w := newWorld(t)
	// No follow-up queries, so both runs send the same queries.
	w.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		if r.SchemaName() == "SearchQueries" && strings.Contains(r.LastUser(), "follow-up") {
			return llmtest.Reply{Content: `{"queries":[]}`}
		}
		return w.model.Respond(r)
	})
	env := func() []string {
		return append(w.env(), "SOVA_SEARCH_CACHE_TTL=1h", "SOVA_PAGE_CACHE_TTL=24h")
	}
	siteHits := func() int64 {
		var n int64
		for _, a := range []string{"fdr-fireside", "hoover-prosperity", "new-deal-economy", "sotu-1936", "dust-bowl", "gold-standard"} {
			n += w.site.Hits("/a/" + a)
		}
		return n
	}
	question := "How did presidents describe the economy in the 1930s?"
	if _, errOut, err := w.sovaEnv(t, env(), "ask", "--no-save", question); err != nil {
		t.Fatalf("first ask: %v\n%s", err, errOut)
	}
	queries, pages := len(w.sx.Queries()), siteHits()
	out, errOut, err := w.sovaEnv(t, env(), "ask", "--no-save", question)
	if err != nil {
		t.Fatalf("second ask: %v\n%s", err, errOut)
	}
	t.Logf("first run: %d queries, %d page fetches; second run: %d queries, %d page fetches",
		queries, pages, len(w.sx.Queries())-queries, siteHits()-pages)
	if queries == 0 || pages == 0 || len(w.sx.Queries()) != queries || siteHits() != pages || out == "" {
		t.Errorf("second run made network calls (or the first none): %d→%d queries, %d→%d pages",
			queries, len(w.sx.Queries()), pages, siteHits())
	}
}

// sovaEnv runs the binary with the given environment.
func (w *world) sovaEnv(t *testing.T, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}
