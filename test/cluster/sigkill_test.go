package cluster_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// usage is one user's usage as GET /api/admin/usage reports it, summed
// over the days it shows.
type usage struct {
	Runs, Tokens, Searches, Messages, Extreme int64
}

// usageOf reads a user's usage with an admin's key.
func usageOf(t *testing.T, n *node, adminKey, user string) usage {
	t.Helper()
	var rep struct {
		Usage []usage `json:"usage"`
	}
	if status, body := n.do(t, http.MethodGet, "/api/admin/usage?days=2&user="+user, adminKey, nil, &rep); status != http.StatusOK {
		t.Fatalf("GET /api/admin/usage on %s: %d %s", n.id, status, body)
	}
	var sum usage
	for _, d := range rep.Usage {
		sum.Runs += d.Runs
		sum.Tokens += d.Tokens
		sum.Searches += d.Searches
		sum.Messages += d.Messages
		sum.Extreme += d.Extreme
	}
	return sum
}

// accounts adds an admin, ada, and a free account, fay, and returns
// their API keys.
func (c *cluster) accounts() (admin, free string) {
	c.t.Helper()
	c.sova("users", "add", "ada", "--role", "admin")
	c.sova("users", "add", "fay", "--role", "free")
	return strings.TrimSpace(c.sova("keys", "create", "--user", "ada")), strings.TrimSpace(c.sova("keys", "create", "--user", "fay"))
}

// faultRun is one question asked before a fault, and what its client saw.
type faultRun struct {
	group, run, chat string
	durable          bool

	mu       sync.Mutex
	last     int64  // the last event number the client read
	errText  string // the data of an error chunk, if one came
	finished bool
}

func (a *faultRun) seen(f frame) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last = max(a.last, f.id)
	switch f.typ() {
	case "error":
		a.errText = f.data
	case "finish":
		a.finished = true
	}
}

// askAs asks a question of group on n with an API key and returns the run.
func askAs(t *testing.T, n *node, key, group string) *faultRun {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, n.url+"/api/search",
		strings.NewReader(fmt.Sprintf(`{"group":%q,"messages":[{"role":"user","content":"How did US presidents describe the economy in the 1930s?"}]}`, group)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	a := &faultRun{group: group, run: resp.Header.Get("X-Run-ID"), chat: resp.Header.Get("X-Chat-ID")}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || a.run == "" {
		t.Fatalf("POST /api/search (%s): %d", group, resp.StatusCode)
	}
	return a
}

// The node is killed (SIGKILL: no drain, no hand-back) while a free
// account's clients stream a run of each durable mode (deep_research,
// extreme) and of the search modes, and started again. Every run ends
// answered (the durable ones, continued from their checkpoints) or
// clearly interrupted, none is left running; each client, reconnecting
// with Last-Event-ID, is told how its run ended; and the account's usage
// counts each run once: not again when a run is continued, not lost when
// one is interrupted. On SQLite, and on PostgreSQL where
// SOVA_TEST_DATABASE_URL is set.
func TestSIGKILLMidStream(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { sigkillMidStream(t, newWorld(t, "")) })
	t.Run("postgres", func(t *testing.T) { sigkillMidStream(t, newCluster(t)) })
}

func sigkillMidStream(t *testing.T, c *cluster) {
	admin, free := c.accounts()
	var delay sync.Mutex
	modelDelay := 150 * time.Millisecond
	c.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		reply := c.model.Respond(r)
		delay.Lock()
		reply.Delay = modelDelay
		delay.Unlock()
		return reply
	})
	c.site.SetDelay(3 * time.Second) // pages read slowly: the kill lands mid-run
	opts := map[string]string{
		"SOVA_RUN_LEASE": "2s", "SOVA_DEEP_RESEARCH_NUM_AGENTS": "2",
		"SOVA_LIMIT_FREE_EXTREME": "20", "SOVA_LIMIT_CONCURRENT_LONG_RUNS": "0",
	}
	n := c.start("node-1", opts)

	runs := []*faultRun{{group: "deep_research", durable: true}, {group: "extreme", durable: true}, {group: "search"}, {group: "deep_search"}}
	var wg sync.WaitGroup
	firstConn, cut := context.WithCancel(t.Context())
	defer cut()
	for i, r := range runs {
		a := askAs(t, n, free, r.group)
		a.durable = r.durable
		runs[i] = a
		wg.Go(func() {
			_, _ = readStreamAs(firstConn, n.url+"/api/runs/"+a.run+"/stream", free, 0, a.seen)
		})
	}
	time.Sleep(1500 * time.Millisecond)
	for _, a := range runs {
		var r struct {
			Run struct{ State string } `json:"run"`
		}
		if n.do(t, http.MethodGet, "/api/runs/"+a.run, free, nil, &r); r.Run.State != "running" {
			t.Logf("%s run is %q before the kill", a.group, r.Run.State)
		}
	}
	n.kill()
	killed := time.Now()
	cut()
	wg.Wait()
	t.Log("node killed")
	c.site.SetDelay(0)
	delay.Lock()
	modelDelay = 5 * time.Millisecond
	delay.Unlock()

	n2 := c.start("node-1", opts) // the same node, restarted
	for _, a := range runs {
		// The client reconnects after the events it had, unless it had
		// the finish.
		if !a.finished {
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			fin, err := readStreamAs(ctx, n2.url+"/api/runs/"+a.run+"/stream", free, a.last, a.seen)
			cancel()
			if err != nil || !fin {
				t.Errorf("%s: the reconnected stream ended without a finish: %v", a.group, err)
			}
		}
		var r struct {
			Run struct{ State, Error string } `json:"run"`
		}
		deadline := time.Now().Add(30 * time.Second)
		for n2.do(t, http.MethodGet, "/api/runs/"+a.run, free, nil, &r); r.Run.State == "" || r.Run.State == "running"; n2.do(t, http.MethodGet, "/api/runs/"+a.run, free, nil, &r) {
			if time.Now().After(deadline) {
				t.Fatalf("%s run still running %s after the restart", a.group, time.Since(killed).Round(time.Second))
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("%s run: %s %s", a.group, r.Run.State, r.Run.Error)
		switch {
		case a.durable && r.Run.State != "completed":
			t.Errorf("%s run (durable) ended %s: %s; want it continued to its answer", a.group, r.Run.State, r.Run.Error)
		case r.Run.State != "completed" && r.Run.State != "interrupted":
			t.Errorf("%s run ended %q: %s", a.group, r.Run.State, r.Run.Error)
		case r.Run.State == "interrupted" && !strings.Contains(a.errText, "restart"):
			t.Errorf("%s run was interrupted, and its client was not told so: error chunk %q", a.group, a.errText)
		}
	}

	// Each run counted once: a message each, a long run each of the
	// durable ones, and one run each in the usage report.
	got := usageOf(t, n2, admin, "fay")
	want := usage{Runs: int64(len(runs)), Messages: int64(len(runs)), Extreme: 2}
	if got.Runs != want.Runs || got.Messages != want.Messages || got.Extreme != want.Extreme || got.Tokens == 0 {
		t.Errorf("fay's usage after the kill and restart: %+v; want %d runs, %d messages, %d long runs and tokens", got, want.Runs, want.Messages, want.Extreme)
	}
	// Asked again, nothing more is counted.
	time.Sleep(time.Second) // a lease renewal's flush, had one anything left
	if again := usageOf(t, n2, admin, "fay"); again.Runs != got.Runs || again.Messages != got.Messages || again.Tokens != got.Tokens {
		t.Errorf("usage went on after the runs ended: %+v, then %+v", got, again)
	}
}
