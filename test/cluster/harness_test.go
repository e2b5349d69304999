// Package cluster_test runs several real `sova serve` processes on one
// PostgreSQL database (or one on SQLite, restarted) (and Redis, when the tests have one) and checks what
// docs/scaling.md promises of them: runs that outlive the node that
// started them, followed from another node, and limits that hold across
// nodes. The model, SearXNG and the web are local fakes (internal/sovatest).
package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/store/storetest"
)

// redisURLEnv names the Redis server the nodes share when it is set.
const redisURLEnv = "SOVA_TEST_REDIS_URL"

// binPath is the sova binary TestMain built (empty when the tests skip),
// in buildTime.
var (
	binPath   string
	buildTime time.Duration
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sova-cluster")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "sova")
	build := exec.Command("go", "build", "-o", binPath, "github.com/sova-ai/sova/cmd/sova")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	started := time.Now()
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building sova:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	buildTime = time.Since(started)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cluster is the world several nodes share: a database schema of the
// test's own, the fakes of the model, SearXNG and the web.
type cluster struct {
	t     *testing.T
	dsn   string
	redis string
	model *sovatest.Model
	site  *sovatest.Site
	sx    *sovatest.SearXNG
	// base are settings of every node and command over the defaults.
	base map[string]string
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	return newWorld(t, storetest.PostgresDSN(t)) // skips without SOVA_TEST_DATABASE_URL
}

// newWorld is a cluster on the PostgreSQL database dsn, or with dsn ""
// one node's world on SQLite in a data directory kept across restarts.
func newWorld(t *testing.T, dsn string) *cluster {
	t.Helper()
	if binPath == "" {
		t.Fatal("the sova binary was not built")
	}
	t.Logf("the sova binary was built in %s", buildTime.Round(time.Millisecond))
	arts := sovatest.DefaultArticles()
	c := &cluster{t: t, dsn: dsn, redis: os.Getenv(redisURLEnv), model: sovatest.NewModel(t), site: sovatest.NewSite(t, arts)}
	if dsn == "" {
		c.base = map[string]string{"SOVA_DATA_DIR": t.TempDir()}
	}
	c.sx = sovatest.NewSearXNG(t, c.site, arts)
	c.model.SetModels("main-model", "fast-model")
	if c.redis == "" {
		t.Logf("%s is not set: the nodes count limits in PostgreSQL", redisURLEnv)
	}
	return c
}

// env is the environment of one node.
func (c *cluster) env(id, dataDir string, extra map[string]string) []string {
	vars := sovatest.Env(c.model, c.sx, dataDir)
	vars["SOVA_DATABASE_URL"] = c.dsn
	vars["SOVA_NODE_ID"] = id
	vars["SOVA_ADDR"] = "127.0.0.1:0"
	vars["SOVA_SANDBOX_ENABLED"] = "false"
	if c.redis != "" {
		vars["SOVA_REDIS_URL"] = c.redis
	}
	for k, v := range c.base {
		vars[k] = v
	}
	for k, v := range extra {
		vars[k] = v
	}
	out := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dataDir}
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	return out
}

// node is one `sova serve` process.
type node struct {
	id   string
	url  string // http://127.0.0.1:port
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan struct{} // closed when the process has exited and was waited for
}

var addrRE = regexp.MustCompile(`addr=(?:http://)?(127\.0\.0\.1:\d+)`)

// start starts a node and returns once it answers ready on /readyz. The
// process is killed and waited for when the test ends, failed or not.
func (c *cluster) start(id string, extra map[string]string) *node {
	t := c.t
	t.Helper()
	n := &node{id: id, logs: &syncBuffer{}, done: make(chan struct{})}
	n.cmd = exec.Command(binPath, "serve")
	n.cmd.Env = c.env(id, t.TempDir(), extra)
	n.cmd.Stdout, n.cmd.Stderr = n.logs, n.logs
	if err := n.cmd.Start(); err != nil {
		t.Fatalf("starting node %s: %v", id, err)
	}
	go func() {
		_ = n.cmd.Wait()
		close(n.done)
	}()
	t.Cleanup(func() {
		n.kill()
		if t.Failed() {
			t.Logf("log of node %s:\n%s", id, n.logs.Tail(12000))
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for n.url == "" {
		if m := addrRE.FindStringSubmatch(n.logs.String()); m != nil && strings.Contains(n.logs.String(), "sova ready") {
			n.url = "http://" + m[1]
			break
		}
		select {
		case <-n.done:
			t.Fatalf("node %s exited before it was ready:\n%s", id, n.logs)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s did not start in 60s:\n%s", id, n.logs)
		}
	}
	for {
		resp, err := http.Get(n.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return n
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s not ready in 60s (%v):\n%s", id, err, n.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill ends the process at once (SIGKILL: no drain, no hand-back) and
// waits for it.
func (n *node) kill() {
	select {
	case <-n.done:
		return
	default:
	}
	_ = n.cmd.Process.Kill()
	<-n.done
}

// get fetches path from the node and decodes a JSON answer into v (when
// v is not nil); it returns the status and the body.
func (n *node) get(t *testing.T, path string, v any) (int, []byte) {
	t.Helper()
	return n.do(t, http.MethodGet, path, "", nil, v)
}

func (n *node) do(t *testing.T, method, path, key string, body any, v any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, n.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s on node %s: %v", method, path, n.id, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s on node %s: reading the answer: %v", method, path, n.id, err)
	}
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s on node %s: %v: %s", method, path, n.id, err, b)
		}
	}
	return resp.StatusCode, b
}

// frame is one SSE frame of a UI message stream.
type frame struct {
	id   int64  // the event's number (frames of one event share it)
	data string // the JSON part, or [DONE]
}

// typ is the frame's chunk type ("start", "data-status", "finish", …).
func (f frame) typ() string {
	var v struct{ Type string }
	_ = json.Unmarshal([]byte(f.data), &v)
	return v.Type
}

// readStream reads one SSE connection to its end, calling fn for each
// frame; it reports whether a finish chunk came.
func readStream(ctx context.Context, url string, lastID int64, fn func(frame)) (finished bool, err error) {
	return readStreamAs(ctx, url, "", lastID, fn)
}

// readStreamAs is readStream with an API key ("" for none).
func readStreamAs(ctx context.Context, url, key string, lastID int64, fn func(frame)) (finished bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if lastID > 0 {
		req.Header.Set("Last-Event-ID", fmt.Sprint(lastID))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return false, fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var cur frame
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" {
				if cur.typ() == "finish" {
					finished = true
				}
				fn(cur)
			}
			cur = frame{}
		case strings.HasPrefix(line, "id: "):
			_, _ = fmt.Sscan(strings.TrimPrefix(line, "id: "), &cur.id)
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		}
	}
	return finished, sc.Err()
}

// syncBuffer is a process's log: written by exec's copying goroutine,
// read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Tail is the last n bytes of the log.
func (b *syncBuffer) Tail(n int) string {
	s := b.String()
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
