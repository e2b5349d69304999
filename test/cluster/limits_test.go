package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// sova runs a command of the binary (users, keys) on the cluster's
// database and returns its standard output.
func (c *cluster) sova(args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = c.env("cli", c.t.TempDir(), nil)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		c.t.Fatalf("sova %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// One free user's questions sent at once to three nodes are answered
// exactly up to the daily limit: the nodes share one count (in Redis when
// SOVA_TEST_REDIS_URL is set, else in PostgreSQL), and every node then
// says the same of what is left.
func TestDailyLimitHoldsAcrossNodes(t *testing.T) {
	c := newCluster(t)
	c.sova("users", "add", "fay", "--role", "free")
	key := strings.TrimSpace(c.sova("keys", "create", "--user", "fay"))
	if !strings.HasPrefix(key, "sova_") {
		t.Fatalf("keys create printed %q", key)
	}
	const limit, asked = 5, 18
	extra := map[string]string{"SOVA_LIMIT_FREE_MESSAGES": fmt.Sprint(limit)}
	nodes := []*node{c.start("node-1", extra), c.start("node-2", extra), c.start("node-3", extra)}

	began := time.Now()
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := range asked {
		wg.Go(func() {
			status, body := nodes[i%len(nodes)].do(t, http.MethodPost, "/v1/chat/completions", key,
				map[string]any{"model": "chat", "messages": []map[string]string{{"role": "user", "content": "What is the capital of Australia?"}}}, nil)
			if status != http.StatusOK && (status != http.StatusTooManyRequests || !strings.Contains(string(body), "rate_limited")) {
				t.Errorf("question %d: %d %s", i, status, body)
			}
			mu.Lock()
			codes[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	t.Logf("%d questions at once on 3 nodes answered in %s: %v", asked, time.Since(began).Round(time.Millisecond), codes)
	if codes[http.StatusOK] != limit || codes[http.StatusTooManyRequests] != asked-limit {
		t.Errorf("answers by status: %v, want %d × 200 and %d × 429", codes, limit, asked-limit)
	}
	for _, n := range nodes {
		var me struct {
			Usage struct {
				Messages struct{ Used, Limit, Left int64 }
			}
		}
		if status, body := n.do(t, http.MethodGet, "/api/me", key, nil, &me); status != http.StatusOK ||
			me.Usage.Messages.Used != limit || me.Usage.Messages.Left != 0 {
			t.Errorf("GET /api/me on %s: %d %s", n.id, status, body)
		}
	}
}
