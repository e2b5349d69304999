package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A rolling restart: node 1 drains while an OpenAI client follows a
// deep_research run there. The run goes on on node 2; the streaming client
// gets its answer through the store (not a role chunk and [DONE] with no
// content), and a non-streaming one gets the whole answer (not 502).
func TestV1ClientsSurviveDrain(t *testing.T) {
	for _, streaming := range []bool{true, false} {
		name := "non-streaming"
		if streaming {
			name = "streaming"
		}
		t.Run(name, func(t *testing.T) {
			nodes := newNodes(t, 2, map[string]string{
				"SOVA_RUN_LEASE": "1s", "SOVA_DEEP_RESEARCH_ENABLE_CLARIFYING_QUESTIONS": "false",
			})
			one := nodes[0]
			one.site.SetDelay(300 * time.Millisecond) // long enough a run to drain under
			body := `{"model":"deep_research","stream":` + map[bool]string{true: "true", false: "false"}[streaming] +
				`,"messages":[{"role":"user","content":"economy in the 1930s"}]}`
			req, _ := http.NewRequest(http.MethodPost, one.srv.URL+"/v1/chat/completions", strings.NewReader(body))
			req.Header.Set(testUserHeader, "ann")
			req.Header.Set("Content-Type", "application/json")
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			req = req.WithContext(ctx)
			type result struct {
				resp *http.Response
				err  error
			}
			done := make(chan result, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				done <- result{resp, err}
			}()
			// Drain once the run executes on node 1.
			deadline := time.Now().Add(30 * time.Second)
			for {
				runs, _ := one.app.Store.RunsInState(ctx, "running")
				if len(runs) == 1 && runs[0].NodeID == "node-1" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the run did not start on node 1")
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
			if err := one.app.Service.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			res := <-done
			if res.err != nil {
				t.Fatal(res.err)
			}
			defer res.resp.Body.Close()
			if !streaming {
				b, _ := io.ReadAll(res.resp.Body)
				var c struct {
					Choices []struct{ Message struct{ Content string } }
				}
				if res.resp.StatusCode != 200 || json.Unmarshal(b, &c) != nil || len(c.Choices) == 0 || c.Choices[0].Message.Content == "" {
					t.Fatalf("non-streaming answer over a drain: %d %s", res.resp.StatusCode, b)
				}
				return
			}
			var content strings.Builder
			var failed string
			sc := bufio.NewScanner(res.resp.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok || data == "[DONE]" {
					continue
				}
				var ch struct {
					Choices []struct{ Delta struct{ Content string } }
					Error   *struct{ Message string }
				}
				_ = json.Unmarshal([]byte(data), &ch)
				if ch.Error != nil {
					failed = ch.Error.Message
				}
				for _, c := range ch.Choices {
					content.WriteString(c.Delta.Content)
				}
			}
			if content.Len() == 0 && !strings.Contains(failed, "/stream") {
				t.Errorf("the streaming client was left with no answer and no word of the run (error %q)", failed)
			}
			if failed != "" {
				t.Logf("told: %s", failed)
			}
		})
	}
}
