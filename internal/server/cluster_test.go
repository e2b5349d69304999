package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/store/storetest"
)

// POST /api/runs/{id}/cancel on node B stops the run that node A executes
// (two servers on one PostgreSQL, the notices through PostgreSQL or
// Redis), and B answers as A would: 202 while the run runs, 409 once it
// has ended, 404 for another person's run.
func TestCancelOnAnotherNode(t *testing.T) {
	for _, tc := range []struct{ name, redis string }{
		{"postgres", ""}, {"redis", os.Getenv("SOVA_TEST_REDIS_URL")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := storetest.PostgresDSN(t)
			if tc.name == "redis" && tc.redis == "" {
				t.Skip("Redis tests skipped: set SOVA_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379/0)")
			}
			vars := func(node string) map[string]string {
				v := map[string]string{"SOVA_DATABASE_URL": dsn, "SOVA_NODE_ID": node}
				if tc.redis != "" {
					v["SOVA_REDIS_URL"] = tc.redis
				}
				return v
			}
			a, b := newEnv(t, vars("node-a")), newEnv(t, vars("node-b"))
			a.site.SetDelay(10 * time.Second)
			send := func(e *env, user, method, path, body string) *http.Response {
				t.Helper()
				req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
				req.Header.Set(testUserHeader, user)
				if body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			stream := send(a, "ann", http.MethodPost, "/api/search", `{"id":"c","group":"search","messages":[{"role":"user","content":"economy in the 1930s"}]}`)
			defer stream.Body.Close()
			runID := stream.Header.Get("X-Run-ID")
			sc := bufio.NewScanner(stream.Body)
			for sc.Scan() && !strings.Contains(sc.Text(), `"state":"reading"`) {
			}

			if r := send(b, "bob", http.MethodPost, "/api/runs/"+runID+"/cancel", ""); r.StatusCode != http.StatusNotFound {
				t.Errorf("another person's cancel on B: %d", r.StatusCode)
			}
			r := send(b, "ann", http.MethodPost, "/api/runs/"+runID+"/cancel", "")
			var answer map[string]string
			_ = json.NewDecoder(r.Body).Decode(&answer)
			r.Body.Close()
			if r.StatusCode != http.StatusAccepted || answer["status"] != "cancelling" || answer["runId"] != runID {
				t.Fatalf("cancel on B: %d %v", r.StatusCode, answer)
			}
			ended := make(chan string, 1)
			go func() {
				rest, _ := io.ReadAll(stream.Body)
				ended <- string(rest)
			}()
			select {
			case rest := <-ended:
				if !strings.Contains(rest, `"type":"abort"`) {
					t.Errorf("A's stream after the cancel on B: %s", rest)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("A's stream goes on 5s after the cancel on B")
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				got, err := b.app.Store.GetRun(context.Background(), "ann", runID)
				if err == nil && got.State == sova.RunCancelled {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("run after the cancel on B: %+v %v", got, err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			r = send(b, "ann", http.MethodPost, "/api/runs/"+runID+"/cancel", "")
			body, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if r.StatusCode != http.StatusConflict || !strings.Contains(string(body), "run_state") {
				t.Errorf("cancel of an ended run on B: %d %s", r.StatusCode, body)
			}
		})
	}
}
