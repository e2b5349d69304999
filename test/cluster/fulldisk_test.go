package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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
	c.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		reply := c.model.Respond(r)
		reply.Delay = 40 * time.Millisecond
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
	opts := map[string]string{"SOVA_RUN_LEASE": "2s", "SOVA_DEEP_RESEARCH_NUM_AGENTS": "2"}
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
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, n1.url+"/api/search",
			strings.NewReader(fmt.Sprintf(`{"group":%q,"messages":[{"role":"user","content":"How did US presidents describe the economy in the 1930s?"}]}`, a.group)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		a.run = resp.Header.Get("X-Run-ID")
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || a.run == "" {
			t.Fatalf("POST /api/search (%s): %d", a.group, resp.StatusCode)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			a.finished, a.err = readStream(ctx, n1.url+"/api/runs/"+a.run+"/stream", 0, func(f frame) {
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
		if n1.get(t, "/api/runs/"+a.run, &r); r.Run.State != "running" {
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
			n2.get(t, "/api/runs/"+a.run, &r)
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
		fin, err := readStream(t.Context(), n2.url+"/api/runs/"+a.run+"/stream", 0, func(f frame) {
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
}
