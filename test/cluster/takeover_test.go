package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// savedCheckpoint is the part of deep_research's checkpoint.json the test
// reads (internal/mode/research/checkpoint.go).
type savedCheckpoint struct {
	Phase string `json:"phase"`
	Board struct {
		Agents []struct {
			Todos []struct {
				Title  string `json:"title"`
				Status string `json:"status"`
			} `json:"todos"`
		} `json:"agents"`
		Queue []json.RawMessage `json:"queue"`
		Calls int               `json:"calls"`
	} `json:"board"`
}

func (cp *savedCheckpoint) doneTasks() []string {
	var out []string
	for _, a := range cp.Board.Agents {
		for _, td := range a.Todos {
			if td.Status == "done" {
				out = append(out, td.Title)
			}
		}
	}
	return out
}

// reviewsDone is how many supervisor reviews the checkpoint holds as
// finished: a review under way when it was saved is counted in Calls and
// put back at the head of the queue, to be made again.
func (cp *savedCheckpoint) reviewsDone() int {
	if len(cp.Board.Queue) > 0 {
		return cp.Board.Calls - 1
	}
	return cp.Board.Calls
}

// sameFrame says whether two frames carry the same event and JSON value
// (a live event and its stored copy may order an object's keys apart).
func sameFrame(a, b frame) bool {
	if a.id != b.id {
		return false
	}
	var va, vb any
	if json.Unmarshal([]byte(a.data), &va) != nil || json.Unmarshal([]byte(b.data), &vb) != nil {
		return a.data == b.data
	}
	return reflect.DeepEqual(va, vb)
}

var (
	agentTaskRE = regexp.MustCompile(`Your current task: (.+)`)
	noteTaskRE  = regexp.MustCompile(`Task: (.+?) —`)
	svCallRE    = regexp.MustCompile(`supervisor call (\d+) of`)
	urlRE       = regexp.MustCompile(`https?://\S+`)
)

// step names the piece of work a model request belongs to, so that the
// test can tell a request made again from a new one: the schema of a
// structured step, a research task's title for an agent's calls, the
// number of a supervisor review, the page for a summary.
func step(r *llmtest.Request) (kind, of string) {
	sys := r.System()
	switch {
	case r.SchemaName() == "AgentNote":
		if m := noteTaskRE.FindStringSubmatch(r.LastUser()); m != nil {
			return "note", m[1]
		}
		return "note", ""
	case r.SchemaName() == "AgentReflection" || (r.HasTool("scrape_url") && r.HasTool("done")):
		for _, msg := range r.Messages {
			if m := agentTaskRE.FindStringSubmatch(msg.Content); m != nil && msg.Role == llm.RoleUser {
				return "agent", m[1]
			}
		}
		return "agent", ""
	case r.HasTool("make_final_decision"):
		if m := svCallRE.FindStringSubmatch(sys); m != nil {
			return "review", m[1]
		}
		return "review", ""
	case r.SchemaName() != "":
		return r.SchemaName(), ""
	}
	first, _, _ := strings.Cut(sys, "\n")
	if len(first) > 60 {
		first = first[:60]
	}
	return first, urlRE.FindString(r.LastUser())
}

// A deep_research run started on node 1 goes on after node 1 is killed
// (SIGKILL: no drain, no hand-back). Node 3 takes it over from its last
// checkpoint when node 1's lease passes and finishes it; a client follows
// it from node 2 the whole time, resuming with Last-Event-ID when its
// connection drops, and sees every event once, in order, with no gap; the
// report is whole and served by every live node; and no model call whose
// result the checkpoint kept is made again.
//
// Which live node takes the run over is made certain with settings: node
// 2's lease is long, so it looks for runs of stopped nodes only every
// 20 minutes, and node 3 (2 s lease) looks every 2/3 s.
func TestKilledNodesRunFinishesOnAnother(t *testing.T) {
	c := newCluster(t)
	began := time.Now()

	// The model answers after a delay the test sets: slow enough for the
	// run to be watched mid-way, then held while node 1 is killed.
	var delay atomic.Int64
	delay.Store(int64(80 * time.Millisecond))
	c.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		reply := c.model.Respond(r)
		reply.Delay = time.Duration(delay.Load())
		return reply
	})

	short := map[string]string{"SOVA_RUN_LEASE": "2s", "SOVA_DEEP_RESEARCH_NUM_AGENTS": "2"}
	n1 := c.start("node-1", short)
	n2 := c.start("node-2", map[string]string{"SOVA_RUN_LEASE": "1h", "SOVA_DEEP_RESEARCH_NUM_AGENTS": "2"})
	n3 := c.start("node-3", short)
	t.Logf("3 nodes ready in %s", time.Since(began).Round(time.Millisecond))

	// The question, asked on node 1; the client hangs up once the run
	// has started (a run is detached from its request).
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, n1.url+"/api/search",
		strings.NewReader(`{"group":"deep_research","messages":[{"role":"user","content":"How did US presidents describe the economy in the 1930s?"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	runID, chatID := resp.Header.Get("X-Run-ID"), resp.Header.Get("X-Chat-ID")
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || runID == "" || chatID == "" {
		t.Fatalf("POST /api/search on node 1: %d, run %q, chat %q", resp.StatusCode, runID, chatID)
	}
	asked := time.Now()

	// The client on node 2. Its first connection is cut after the kill
	// (as a proxy might); it then resumes with Last-Event-ID, as it does
	// whenever a stream ends before the run's finish.
	var frames []frame
	firstConn, dropFirst := context.WithCancel(t.Context())
	defer dropFirst()
	followed := make(chan error, 1)
	connections := 0
	follower := make(chan struct{})
	t.Cleanup(func() { <-follower }) // it ends with t.Context()
	go func() {
		defer close(follower)
		var last int64
		for connections = 1; ; connections++ {
			ctx := t.Context()
			if connections == 1 {
				ctx = firstConn
			}
			finished, err := readStream(ctx, n2.url+"/api/runs/"+runID+"/stream", last, func(f frame) {
				frames = append(frames, f)
				last = max(last, f.id)
			})
			if finished {
				followed <- nil
				return
			}
			if t.Context().Err() != nil {
				followed <- fmt.Errorf("the stream did not finish: %v", err)
				return
			}
			if connections > 20 {
				followed <- fmt.Errorf("stream ended %d times without a finish; last: %v", connections, err)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()

	// Node 1 works until the checkpoint holds the plan, the team, a
	// finished task and a review; then the model holds every answer, and
	// node 1 is killed with requests of its own waiting there.
	var cp savedCheckpoint
	for {
		if time.Since(asked) > 40*time.Second {
			t.Fatal("no checkpoint with a finished task and a review in 40s")
		}
		status, body := n2.get(t, "/api/runs/"+runID+"/files/checkpoint.json", nil)
		if status == http.StatusOK && json.Unmarshal(body, &cp) == nil &&
			cp.Phase == "board" && len(cp.doneTasks()) > 0 && cp.reviewsDone() > 0 {
			break
		}
		var run struct{ Run struct{ State string } }
		if n2.get(t, "/api/runs/"+runID, &run); run.Run.State != "" && run.Run.State != "running" {
			t.Fatalf("the run ended (%s) before node 1 was killed", run.Run.State)
		}
		time.Sleep(30 * time.Millisecond)
	}
	delay.Store(int64(time.Hour)) // cut short when node 1's connections close
	time.Sleep(400 * time.Millisecond)
	n1.kill()
	killed := time.Now()
	before := len(c.model.Requests())
	t.Logf("node 1 killed %s after the question, after %d model requests", killed.Sub(asked).Round(time.Millisecond), before)
	delay.Store(int64(5 * time.Millisecond))

	// Node 1 is gone and its lease still runs: nobody writes the run now,
	// so this is the checkpoint it left.
	if status, body := n2.get(t, "/api/runs/"+runID+"/files/checkpoint.json", nil); status != http.StatusOK || json.Unmarshal(body, &cp) != nil {
		t.Fatalf("checkpoint after the kill: %d %s", status, body)
	}
	done := cp.doneTasks()
	if cp.Phase != "board" || len(done) == 0 || cp.reviewsDone() == 0 {
		t.Fatalf("node 1 was killed before the research was under way: %+v", cp)
	}
	var run struct {
		Run struct {
			State, NodeID string
			LastSeq       int64
		}
	}
	if n2.get(t, "/api/runs/"+runID, &run); run.Run.State != "running" || run.Run.NodeID != "node-1" {
		t.Fatalf("after the kill the run is %q on %q, want running on node-1", run.Run.State, run.Run.NodeID)
	}
	dropFirst()

	select {
	case err := <-followed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not finish in 60s after node 1 was killed")
	}
	finished := time.Now()
	t.Logf("run finished %s after the kill; the client connected %d times", finished.Sub(killed).Round(time.Millisecond), connections)

	// Every event once, in order, none missing: the frames of one event
	// share its number, and the numbers run 1, 2, … to the last.
	var ids []int64
	for i, f := range frames {
		if f.id == 0 {
			continue
		}
		if len(ids) > 0 && f.id < ids[len(ids)-1] {
			t.Fatalf("frame %d has id %d after %d", i, f.id, ids[len(ids)-1])
		}
		if len(ids) == 0 || f.id != ids[len(ids)-1] {
			ids = append(ids, f.id)
		}
	}
	for i, id := range ids {
		if id != int64(i+1) {
			t.Fatalf("event ids have a gap: %d follows %d", id, ids[max(i-1, 0)])
		}
	}
	var starts, finishes int
	taker := ""
	for _, f := range frames {
		switch f.typ() {
		case "start":
			starts++
		case "finish":
			finishes++
		case "data-status":
			var st struct {
				Data struct{ Stage, Detail string }
			}
			_ = json.Unmarshal([]byte(f.data), &st)
			if st.Data.Stage == "continue" {
				taker += st.Data.Detail + "; "
			}
		}
	}
	if starts != 1 || finishes != 1 || !strings.Contains(taker, "node-3") {
		t.Errorf("the client saw %d starts, %d finishes, continue status %q; want 1, 1, node-3", starts, finishes, taker)
	}
	if connections < 2 {
		t.Errorf("the client connected %d times; its first connection was cut", connections)
	}

	// The same events replayed whole from node 3 after the run.
	var replay []frame
	if fin, err := readStream(t.Context(), n3.url+"/api/runs/"+runID+"/stream", 0, func(f frame) { replay = append(replay, f) }); err != nil || !fin {
		t.Fatalf("replay from node 3: finished %v, %v", fin, err)
	}
	if !slices.EqualFunc(frames, replay, sameFrame) {
		t.Errorf("node 2's live stream (%d frames) differs from node 3's replay (%d frames)", len(frames), len(replay))
		for i := range min(len(frames), len(replay)) {
			if !sameFrame(frames[i], replay[i]) {
				t.Errorf("first difference at frame %d:\nlive   %+v\nreplay %+v", i, frames[i], replay[i])
				break
			}
		}
	}

	// The run is completed, by node 3, and its report is whole on every
	// live node.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n3.get(t, "/api/runs/"+runID, &run)
		if run.Run.State != "running" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if run.Run.State != "completed" || run.Run.LastSeq != ids[len(ids)-1] {
		t.Errorf("run after the finish: %+v; want completed with lastSeq %d", run.Run, ids[len(ids)-1])
	}
	var report string
	for _, n := range []*node{n2, n3} {
		status, body := n.get(t, "/api/runs/"+runID+"/report.md", nil)
		if status != http.StatusOK {
			t.Fatalf("report on %s: %d %s", n.id, status, body)
		}
		if report != "" && string(body) != report {
			t.Errorf("node %s serves another report", n.id)
		}
		report = string(body)
	}
	for _, section := range []string{"## Banking", "## Unemployment", "## Recovery", "## Conclusion"} {
		if strings.Count(report, section) != 1 {
			t.Errorf("the report has %q %d times, want once:\n%s", section, strings.Count(report, section), report)
		}
	}
	var chat struct {
		Messages []struct {
			Role, Content, FinishReason string
		}
	}
	if status, body := n2.get(t, "/api/chats/"+chatID, &chat); status != http.StatusOK {
		t.Fatalf("chat: %d %s", status, body)
	}
	if len(chat.Messages) != 2 || chat.Messages[1].Role != "assistant" || chat.Messages[1].FinishReason != "stop" ||
		!strings.Contains(chat.Messages[1].Content, "Recovery") {
		t.Errorf("the chat holds %d messages; want the question and one whole answer: %+v", len(chat.Messages), chat.Messages)
	}

	// No model call the checkpoint kept was made again: the steps before
	// the team (initial search, clarification, analysis, plan, team), the
	// agents' work on the tasks it holds done, and the finished reviews.
	reqs := c.model.Requests()
	kept := map[string]bool{}
	team := slices.IndexFunc(reqs, func(r *llmtest.Request) bool { return r.SchemaName() == "AgentTeam" })
	if team < 0 || team >= before {
		t.Fatalf("the team was made at request %d of %d before the kill", team, before)
	}
	for _, r := range reqs[:team+1] {
		kind, of := step(r)
		kept[kind+" "+of] = true
	}
	for _, task := range done {
		kept["agent "+task], kept["note "+task] = true, true
	}
	for n := 1; n <= cp.reviewsDone(); n++ {
		kept[fmt.Sprintf("review %d", n)] = true
	}
	counts := map[string]int{}
	for _, r := range reqs {
		kind, of := step(r)
		counts[kind+" "+of]++
		if r.Index >= before && kept[kind+" "+of] {
			t.Errorf("model request %d after the takeover repeats %s %s, kept by the checkpoint", r.Index, kind, of)
		}
	}
	for _, k := range []string{"ClarificationCheck ", "QueryAnalysis ", "ResearchPlan ", "AgentTeam ", "FinalReport "} {
		if counts[k] != 1 {
			t.Errorf("%s asked %d times, want once", k, counts[k])
		}
	}
	t.Logf("model requests: %d before the kill, %d after; checkpoint at the kill: %d of %d tasks done, %d reviews done",
		before, len(reqs)-before, len(done), len(cp.Board.Agents)*2, cp.reviewsDone())
	t.Logf("timings: start %s, question→kill %s, kill→finish %s, whole test %s",
		asked.Sub(began).Round(time.Millisecond), killed.Sub(asked).Round(time.Millisecond),
		finished.Sub(killed).Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
}
