package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// smallDisk mounts a 24 MiB ext4 file system (a loop device) for the
// test and returns its path; it skips where the test cannot mount (not
// root, no loop devices).
func smallDisk(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system needs root")
	}
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "disk.img"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"truncate", "-s", "24M", img},
		{"mkfs.ext4", "-q", "-F", img},
		{"mount", "-o", "loop", img, mnt},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Skipf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	return mnt
}

// fill writes a file until the file system is full and returns it.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 256<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			_ = f.Sync()
			return path
		}
	}
}

// The data directory fills up while a deep_research and an extreme run
// (the durable modes) are under way, on one node with SQLite, and frees
// again a few seconds later. Neither run stays running without an
// executor: each ends completed, failed or interrupted, its client's
// stream ends with a finish or an error that says so, and the chat takes
// a new question.
func TestFullDiskLeavesNoRunRunning(t *testing.T) {
	c := newCluster(t)
	data := smallDisk(t)
	// The model answers only once the disk is full: on a loaded machine
	// the runs would otherwise finish before the filler is written.
	full := make(chan struct{})
	c.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		select {
		case <-full:
		case <-time.After(60 * time.Second):
		}
		reply := c.model.Respond(r)
		// Slow enough for both runs to be under way when the disk fills
		// 1.5 s in (at 40 ms they could end before it).
		reply.Delay = 150 * time.Millisecond
		return reply
	})
	n := c.start("node-1", map[string]string{
		"SOVA_DATABASE_URL": "", "SOVA_DATA_DIR": data,
		"SOVA_RUN_LEASE": "2s", "SOVA_DEEP_RESEARCH_NUM_AGENTS": "2",
	})

	type asked struct {
		group, run, chat string
		finished         bool
		errText          string
		err              error
	}
	runs := []*asked{{group: "deep_research"}, {group: "extreme"}}
	var wg sync.WaitGroup
	for _, a := range runs {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, n.url+"/api/search",
			strings.NewReader(fmt.Sprintf(`{"group":%q,"messages":[{"role":"user","content":"How did US presidents describe the economy in the 1930s?"}]}`, a.group)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		a.run, a.chat = resp.Header.Get("X-Run-ID"), resp.Header.Get("X-Chat-ID")
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || a.run == "" {
			t.Fatalf("POST /api/search (%s): %d", a.group, resp.StatusCode)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			a.finished, a.err = readStream(ctx, n.url+"/api/runs/"+a.run+"/stream", 0, func(f frame) {
				if f.typ() == "error" {
					a.errText = f.data
				}
			})
		}()
	}

	time.Sleep(1500 * time.Millisecond) // the runs are under way
	filler := fill(t, data)
	close(full)
	t.Log("the data directory is full")
	time.Sleep(4 * time.Second)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	t.Log("the data directory has room again")

	deadline := time.Now().Add(60 * time.Second)
	for _, a := range runs {
		for {
			var r struct {
				Run struct{ State, Error string } `json:"run"`
			}
			n.get(t, "/api/runs/"+a.run, &r)
			if r.Run.State != "" && r.Run.State != "running" {
				t.Logf("%s run %s: %s %s", a.group, a.run, r.Run.State, r.Run.Error)
				if r.Run.State != "completed" && r.Run.State != "failed" && r.Run.State != "interrupted" {
					t.Errorf("%s run ended %q", a.group, r.Run.State)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s run %s still running 60 s after the disk had room again", a.group, a.run)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	wg.Wait()
	if full := strings.Count(n.logs.String(), "full"); full == 0 {
		t.Error("the node's log shows no write that failed on the full disk: the test did not fill it in time")
	} else {
		t.Logf("the node's log mentions the full disk %d times", full)
	}
	for _, a := range runs {
		if !a.finished && a.errText == "" {
			t.Errorf("%s: the client's stream ended with neither a finish nor an error (%v)", a.group, a.err)
		}
		status, body := n.do(t, http.MethodPost, "/api/search", "", map[string]any{
			"group": "web", "chatId": a.chat, "messages": []map[string]string{{"role": "user", "content": "And in the 1940s?"}},
		}, nil)
		if status == http.StatusConflict {
			t.Errorf("%s: a new question in its chat: %d %s", a.group, status, body)
		}
	}
}

// A node is stopped with SIGTERM while clients stream a deep_research and
// an extreme run from it. Each client's stream ends with a finish or an
// error chunk (never silently); the runs are handed back and continued
// from their checkpoints on the other node, whose stream of each replays
// to its finish.
func TestSIGTERMMidStreamHandsDurableRunsOver(t *testing.T) {
	c := newCluster(t)
	c.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		reply := c.model.Respond(r)
		reply.Delay = 250 * time.Millisecond
		return reply
	})
	admin, free := c.accounts()
	opts := map[string]string{"SOVA_RUN_LEASE": "2s", "SOVA_DEEP_RESEARCH_NUM_AGENTS": "2", "SOVA_LIMIT_CONCURRENT_LONG_RUNS": "0"}
	n1, n2 := c.start("node-1", opts), c.start("node-2", opts)
	type asked struct {
		group, run string
		finished   bool
		errText    string
		err        error
	}
	runs := []*asked{{group: "deep_research"}, {group: "extreme"}}
	var wg sync.WaitGroup
	for _, a := range runs {
		a.run = askAs(t, n1, free, a.group).run
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			a.finished, a.err = readStreamAs(ctx, n1.url+"/api/runs/"+a.run+"/stream", free, 0, func(f frame) {
				if f.typ() == "error" {
					a.errText = f.data
				}
			})
		}()
	}
	time.Sleep(time.Second)
	for _, a := range runs {
		var r struct {
			Run struct{ State string } `json:"run"`
		}
		if n1.do(t, http.MethodGet, "/api/runs/"+a.run, free, nil, &r); r.Run.State != "running" {
			t.Fatalf("%s run is %q before the SIGTERM, want running", a.group, r.Run.State)
		}
	}
	if err := n1.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for _, a := range runs {
		switch {
		case a.finished:
			t.Logf("%s: the client on the stopped node saw the finish", a.group)
		case a.errText != "":
			t.Logf("%s: the client on the stopped node was told: %s", a.group, a.errText)
		default:
			t.Errorf("%s: the stream from the stopped node ended with neither a finish nor an error (%v)", a.group, a.err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			var r struct {
				Run struct{ State, Error, NodeID string } `json:"run"`
			}
			n2.do(t, http.MethodGet, "/api/runs/"+a.run, free, nil, &r)
			if r.Run.State != "" && r.Run.State != "running" {
				if r.Run.State != "completed" {
					t.Errorf("%s run ended %s: %s", a.group, r.Run.State, r.Run.Error)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s run still running on %q 60 s after the SIGTERM", a.group, r.Run.NodeID)
			}
			time.Sleep(100 * time.Millisecond)
		}
		continued := false
		fin, err := readStreamAs(t.Context(), n2.url+"/api/runs/"+a.run+"/stream", free, 0, func(f frame) {
			continued = continued || strings.Contains(f.data, `"stage":"continue"`)
		})
		if err != nil || !fin {
			t.Errorf("%s: the other node's stream of the run: finished %v, %v", a.group, fin, err)
		}
		// The run was handed back and continued from its checkpoint, not
		// finished by the stopping node in its grace period.
		if !continued {
			t.Errorf("%s: the run's log shows no continuation from its checkpoint", a.group)
		}
	}
	// Each run counted once, though two nodes executed it: the stopping
	// node recorded its part as it handed the run back.
	if got := usageOf(t, n2, admin, "fay"); got.Runs != 2 || got.Messages != 2 || got.Extreme != 2 || got.Tokens == 0 {
		t.Errorf("fay's usage after the hand-over: %+v; want 2 runs, 2 messages, 2 long runs and tokens", got)
	}
}

// startRedis starts a Redis server of the test's own on a free port and
// returns its URL and a function that stops it (SIGKILL).
func startRedis(t *testing.T) (string, func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop := func() {
		select {
		case <-done:
		default:
			_ = cmd.Process.Kill()
			<-done
		}
	}
	t.Cleanup(stop)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Sprintf("redis://127.0.0.1:%d/0", port), stop
}

// Redis goes down while a pro account's deep_research and extreme runs go
// on: the runs finish, the pro account's next question is answered (it
// has no limit to count), and a free account's is refused with 503 and
// Retry-After, naming no address.
func TestRedisDownMidRun(t *testing.T) {
	c := newCluster(t)
	url, stopRedis := startRedis(t)
	c.redis = url
	c.sova("users", "add", "pia", "--role", "pro")
	c.sova("users", "add", "fay", "--role", "free")
	pro := strings.TrimSpace(c.sova("keys", "create", "--user", "pia"))
	free := strings.TrimSpace(c.sova("keys", "create", "--user", "fay"))
	c.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		reply := c.model.Respond(r)
		reply.Delay = 250 * time.Millisecond // slow enough for the runs to outlast the outage's start
		return reply
	})
	n := c.start("node-1", map[string]string{"SOVA_RUN_LEASE": "2s", "SOVA_DEEP_RESEARCH_NUM_AGENTS": "2"})
	var ids []string
	for _, group := range []string{"deep_research", "extreme"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, n.url+"/api/search",
			strings.NewReader(fmt.Sprintf(`{"group":%q,"messages":[{"role":"user","content":"How did US presidents describe the economy in the 1930s?"}]}`, group)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+pro)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /api/search (%s): %d", group, resp.StatusCode)
		}
		ids = append(ids, resp.Header.Get("X-Run-ID"))
	}
	time.Sleep(time.Second)
	for i, id := range ids {
		var r struct {
			Run struct{ State string } `json:"run"`
		}
		if n.do(t, http.MethodGet, "/api/runs/"+id, pro, nil, &r); r.Run.State != "running" {
			// The fake world answers fast; on a quiet machine a run can end
			// before the outage, and the test then has nothing to show.
			t.Skipf("run %d is %q before Redis goes down, want running", i, r.Run.State)
		}
	}
	stopRedis()
	t.Log("Redis is down")

	for i, id := range ids {
		deadline := time.Now().Add(60 * time.Second)
		for {
			var r struct {
				Run struct{ State, Error string } `json:"run"`
			}
			n.do(t, http.MethodGet, "/api/runs/"+id, pro, nil, &r)
			if r.Run.State != "" && r.Run.State != "running" {
				if r.Run.State != "completed" {
					t.Errorf("run %d ended %s: %s", i, r.Run.State, r.Run.Error)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d still running 60 s after Redis went down", i)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	ask := func(key string) (int, string, http.Header) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, n.url+"/v1/chat/completions",
			strings.NewReader(`{"model":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		return resp.StatusCode, b.String(), resp.Header
	}
	if status, body, _ := ask(pro); status != http.StatusOK {
		t.Errorf("the pro account's question with Redis down: %d %s", status, body)
	}
	status, body, h := ask(free)
	if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || strings.Contains(body, "127.0.0.1") {
		t.Errorf("the free account's question with Redis down: %d (Retry-After %q) %s", status, h.Get("Retry-After"), body)
	}
	// The runs the store counts: each of the pro account's counted once
	// (the two long runs and the question asked with Redis down), read
	// with the report's command (Redis, where the limits counted, is gone).
	c.redis = ""
	var runs int64 = -1
	for _, line := range strings.Split(c.sova("users", "usage", "--user", "pia"), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[1] == "pia" {
			_, _ = fmt.Sscan(f[2], &runs)
		}
	}
	if runs != 3 {
		t.Errorf("the pro account's runs counted with Redis down: %d, want 3", runs)
	}
}

// The database drops a node's connections (pg_terminate_backend) twice
// while a deep_research and an extreme run go on: both runs complete,
// their clients' streams end with the finish, and no usage is given up.
func TestDatabaseConnectionsKilledMidRun(t *testing.T) {
	c := newCluster(t)
	c.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		reply := c.model.Respond(r)
		reply.Delay = 100 * time.Millisecond
		return reply
	})
	app := fmt.Sprintf("sova-faults-%d", time.Now().UnixNano())
	u, err := neturl.Parse(c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	admin, free := c.accounts()
	n := c.start("node-1", map[string]string{"SOVA_DATABASE_URL": u.String(), "SOVA_RUN_LEASE": "2s", "SOVA_DEEP_RESEARCH_NUM_AGENTS": "2", "SOVA_LIMIT_CONCURRENT_LONG_RUNS": "0"})
	type asked struct {
		group, run string
		finished   bool
		errText    string
	}
	runs := []*asked{{group: "deep_research"}, {group: "extreme"}}
	var wg sync.WaitGroup
	for _, a := range runs {
		a.run = askAs(t, n, free, a.group).run
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			a.finished, _ = readStreamAs(ctx, n.url+"/api/runs/"+a.run+"/stream", free, 0, func(f frame) {
				if f.typ() == "error" {
					a.errText = f.data
				}
			})
		}()
	}
	pg, err := pgx.Connect(t.Context(), os.Getenv("SOVA_TEST_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(context.Background())
	for range 2 {
		time.Sleep(700 * time.Millisecond)
		var killed int
		if err := pg.QueryRow(t.Context(),
			`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&killed); err != nil {
			t.Fatal(err)
		}
		t.Logf("terminated %d of the node's connections", killed)
		if killed == 0 {
			t.Fatal("no connection of the node to terminate")
		}
	}
	wg.Wait()
	for _, a := range runs {
		var r struct {
			Run struct{ State, Error string } `json:"run"`
		}
		deadline := time.Now().Add(60 * time.Second)
		for n.do(t, http.MethodGet, "/api/runs/"+a.run, free, nil, &r); r.Run.State == "" || r.Run.State == "running"; n.do(t, http.MethodGet, "/api/runs/"+a.run, free, nil, &r) {
			if time.Now().After(deadline) {
				t.Fatalf("%s run still running", a.group)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if r.Run.State != "completed" || !a.finished {
			t.Errorf("%s run ended %s (%s); the client saw the finish: %v, an error: %s", a.group, r.Run.State, r.Run.Error, a.finished, a.errText)
		}
	}
	// Usage is written with retries: none of it was given up on.
	if strings.Contains(n.logs.String(), "recording usage failed") {
		t.Error("the node gave up recording usage")
	}
	if got := usageOf(t, n, admin, "fay"); got.Runs != 2 || got.Messages != 2 || got.Extreme != 2 || got.Tokens == 0 {
		t.Errorf("fay's usage after the connections were killed: %+v; want 2 runs, 2 messages, 2 long runs and tokens", got)
	}
}
