package cluster_test

import (
	"context"
	"encoding/json"
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
	// question is asked instead of the usual one; want is the state the
	// run must end in (completed for durable runs, else completed or
	// interrupted, when empty).
	question, want string
	// answer, when set, is sent once the run pauses for the person, and
	// the run goes on from its pause before the fault.
	answer string
	// task runs the complex-task agent (POST /api/tasks/execute) with the
	// question as its task.
	task bool

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
	return askQuestionAs(t, n, key, group, "How did US presidents describe the economy in the 1930s?")
}

// askQuestionAs is askAs with a question of the caller's; group may name
// a paused run, which the question then answers.
func askQuestionAs(t *testing.T, n *node, key, group, question string) *faultRun {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, n.url+"/api/search",
		strings.NewReader(fmt.Sprintf(`{"group":%q,"messages":[{"role":"user","content":%q}]}`, group, question)))
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

// Questions of the sgr_agent runs that pause for the person: the model
// asks its clarification first when it sees one of them and no answer.
const (
	clarifyQuestion = "Before you start, ask me which speeches count: how did US presidents describe the economy in the 1930s?"
	clarifyAnswer   = "Count the fireside chats and the inaugural addresses."
	taskText        = "Collect what US presidents said about the economy in the 1930s and write it up."
)

// taskAndClarification answers the complex-task agent (its decomposition
// into two subtasks, each subtask, its report) and, for an sgr_agent run
// asked clarifyQuestion, the clarification step; it reports false for
// every other request.
func taskAndClarification(r *llmtest.Request) (llmtest.Reply, bool) {
	sys, body := r.System(), string(r.Body)
	usage := llmtest.Tokens(200, 40)
	switch {
	case strings.Contains(sys, "complex-task agent. Decompose"):
		return llmtest.Reply{Content: `{"subtasks":[{"title":"Find the speeches","instructions":"Find the presidents' speeches on the economy."},` +
			`{"title":"Summarise them","instructions":"Summarise what each president said."}]}`, Usage: usage}, true
	case strings.Contains(sys, "You carry out one subtask"):
		return llmtest.Reply{Content: "Done: the speeches were found and read.", Usage: usage}, true
	case strings.Contains(sys, "Write the report of a completed complex task"):
		return llmtest.Reply{Content: "## Report\n\nThe presidents first called the slump passing, then set out to repair the banks.", Usage: usage}, true
	case r.SchemaName() == "NextStep" && strings.Contains(body, "ask me which speeches count") && !strings.Contains(body, "fireside chats and the inaugural"):
		return llmtest.Reply{Content: `{"reasoning_steps":["The task is ambiguous.","Ask first."],"current_situation":"the task names no speeches",` +
			`"plan_status":"not started","enough_data":false,"remaining_steps":["ask"],"task_completed":false,"function":{"tool":"clarification",` +
			`"reasoning":"the person asked to be asked","unclear_terms":["which speeches"],"assumptions":["all public speeches","the fireside chats"],` +
			`"questions":["Which speeches count?"]}}`, Usage: usage}, true
	}
	return llmtest.Reply{}, false
}

// startTask starts a complex task (POST /api/tasks/execute) on n with an
// API key and returns its run.
func startTask(t *testing.T, n *node, key, task string) *faultRun {
	t.Helper()
	var v struct {
		RunID string `json:"runId"`
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, n.url+"/api/tasks/execute", strings.NewReader(fmt.Sprintf(`{"task":%q}`, task)))
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
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusAccepted || v.RunID == "" {
		t.Fatalf("POST /api/tasks/execute: %d %v", resp.StatusCode, err)
	}
	return &faultRun{group: "assistant_task", run: v.RunID, task: true}
}

// runState reads a run's state and error.
func runState(t *testing.T, n *node, key, id string) (state, errText string) {
	t.Helper()
	var r struct {
		Run struct{ State, Error string } `json:"run"`
	}
	n.do(t, http.MethodGet, "/api/runs/"+id, key, nil, &r)
	return r.Run.State, r.Run.Error
}

// The node is killed (SIGKILL: no drain, no hand-back) while a free
// account's clients stream a run of each durable mode (deep_research,
// extreme, sgr_agent, a complex task) and of the search modes, and
// started again; beside them an sgr_agent run waits for the person's
// answers, and another goes on from its answers. Every run ends
// answered (the durable ones, continued from their checkpoints), clearly
// interrupted, or, paused, still waiting: none is left running; each
// client, reconnecting with Last-Event-ID, is told how its run ended; and
// the account's usage counts each run once: not again when a run is
// continued, not lost when one is interrupted. On SQLite, and on
// PostgreSQL where SOVA_TEST_DATABASE_URL is set.
func TestSIGKILLMidStream(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { sigkillMidStream(t, newWorld(t, "")) })
	t.Run("postgres", func(t *testing.T) { sigkillMidStream(t, newCluster(t)) })
}

func sigkillMidStream(t *testing.T, c *cluster) {
	admin, free := c.accounts()
	var delay sync.Mutex
	modelDelay := 150 * time.Millisecond
	c.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		reply, ok := taskAndClarification(r)
		if !ok {
			reply = c.model.Respond(r)
		}
		delay.Lock()
		reply.Delay = modelDelay
		if strings.Contains(r.System(), "You carry out one subtask") {
			reply.Delay = 4 * modelDelay // the kill lands inside the task
		}
		delay.Unlock()
		return reply
	})
	c.site.SetDelay(3 * time.Second) // pages read slowly: the kill lands mid-run
	opts := map[string]string{
		"SOVA_RUN_LEASE": "2s", "SOVA_DEEP_RESEARCH_NUM_AGENTS": "2",
		"SOVA_LIMIT_FREE_EXTREME": "20", "SOVA_LIMIT_CONCURRENT_LONG_RUNS": "0",
	}
	n := c.start("node-1", opts)

	runs := []*faultRun{
		{group: "deep_research", durable: true}, {group: "extreme", durable: true}, {group: "search"}, {group: "deep_search"},
		{group: "sgr_agent", durable: true},
		{group: "sgr_agent", question: clarifyQuestion, want: "waiting"},
		{group: "sgr_agent", question: clarifyQuestion, answer: clarifyAnswer, durable: true},
		{group: "assistant_task", question: taskText, task: true, durable: true},
	}
	var wg sync.WaitGroup
	firstConn, cut := context.WithTimeout(t.Context(), 2*time.Minute) // cut at the kill
	defer cut()
	// An answer sent while its run still goes on would be refused: the
	// runs that pause are read to their pause first, with a deadline.
	paused := func(a *faultRun) {
		ctx, cancel := context.WithTimeout(firstConn, 30*time.Second)
		defer cancel()
		if fin, err := readStreamAs(ctx, n.url+"/api/runs/"+a.run+"/stream", free, 0, a.seen); err != nil || !fin {
			t.Fatalf("%s: the stream to the run's pause ended without a finish: %v", a.group, err)
		}
		if state, _ := runState(t, n, free, a.run); state != "waiting" {
			t.Fatalf("%s run is %q after its clarification, want waiting", a.group, state)
		}
	}
	for i, r := range runs {
		var a *faultRun
		switch {
		case r.task:
			a = startTask(t, n, free, r.question)
		case r.question != "":
			a = askQuestionAs(t, n, free, r.group, r.question)
		default:
			a = askAs(t, n, free, r.group)
		}
		a.durable, a.question, a.want, a.answer, a.task = r.durable, r.question, r.want, r.answer, r.task
		runs[i] = a
		if a.want == "waiting" || a.answer != "" {
			paused(a)
		}
		if a.answer != "" {
			// The answer goes on with the same run, after its pause: its
			// client follows the run's stream after the pause's finish.
			if again := askQuestionAs(t, n, free, a.run, a.answer); again.run != a.run {
				t.Fatalf("the answer to run %s started run %s", a.run, again.run)
			}
			a.mu.Lock()
			a.finished = false
			a.mu.Unlock()
		}
		if a.want == "waiting" {
			continue // its client has its finish
		}
		wg.Go(func() {
			_, _ = readStreamAs(firstConn, n.url+"/api/runs/"+a.run+"/stream", free, a.last, a.seen)
		})
	}
	time.Sleep(1500 * time.Millisecond)
	for _, a := range runs {
		if state, _ := runState(t, n, free, a.run); state != "running" && state != a.want {
			t.Logf("%s run is %q before the kill", a.group, state)
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
				t.Errorf("%s: the stream reconnected after event %d ended without a finish: %v", a.group, a.last, err)
			}
		}
		state, errText := runState(t, n2, free, a.run)
		for deadline := time.Now().Add(30 * time.Second); state == "" || state == "running"; state, errText = runState(t, n2, free, a.run) {
			if time.Now().After(deadline) {
				t.Fatalf("%s run still running %s after the restart", a.group, time.Since(killed).Round(time.Second))
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("%s run: %s %s", a.group, state, errText)
		switch {
		case a.want != "" && state != a.want:
			t.Errorf("%s run ended %s: %s; want it %s", a.group, state, errText, a.want)
		case a.want != "":
		case a.durable && state != "completed":
			t.Errorf("%s run (durable) ended %s: %s; want it continued to its answer", a.group, state, errText)
		case state != "completed" && state != "interrupted":
			t.Errorf("%s run ended %q: %s", a.group, state, errText)
		case state == "interrupted" && !strings.Contains(a.errText, "restart"):
			t.Errorf("%s run was interrupted, and its client was not told so: error chunk %q", a.group, a.errText)
		}
		if a.task && state == "completed" {
			var v struct {
				Success bool   `json:"success"`
				Report  string `json:"report"`
			}
			if n2.do(t, http.MethodGet, "/api/tasks/"+a.run, free, nil, &v); !v.Success || !strings.Contains(v.Report, "repair the banks") {
				t.Errorf("the continued task's result: %+v", v)
			}
		}
	}

	// Each run counted once: a message and a run each (and the answer
	// one more of both), a long run each of deep_research and extreme.
	got := usageOf(t, n2, admin, "fay")
	answers := 0
	for _, a := range runs {
		if a.answer != "" {
			answers++
		}
	}
	want := usage{Runs: int64(len(runs) + answers), Messages: int64(len(runs) + answers), Extreme: 2}
	if got.Runs != want.Runs || got.Messages != want.Messages || got.Extreme != want.Extreme || got.Tokens == 0 {
		t.Errorf("fay's usage after the kill and restart: %+v; want %d runs, %d messages, %d long runs and tokens", got, want.Runs, want.Messages, want.Extreme)
	}
	// Asked again, nothing more is counted.
	time.Sleep(time.Second) // a lease renewal's flush, had one anything left
	if again := usageOf(t, n2, admin, "fay"); again.Runs != got.Runs || again.Messages != got.Messages || again.Tokens != got.Tokens {
		t.Errorf("usage went on after the runs ended: %+v, then %+v", got, again)
	}
}
