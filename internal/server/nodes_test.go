package server_test

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/store/storetest"
)

// newNodes starts n servers on one fresh PostgreSQL database, as n Sova
// nodes behind one load balancer: each its own app (connection pools,
// caches, runs in memory) and node id, all with the same model and
// search services.
func newNodes(t *testing.T, n int, extra map[string]string) []*env {
	t.Helper()
	arts := sovatest.DefaultArticles()
	model := sovatest.NewModel(t)
	site := sovatest.NewSite(t, arts)
	sx := sovatest.NewSearXNG(t, site, arts)
	dsn := storetest.PostgresDSN(t)
	var out []*env
	for i := range n {
		vars := sovatest.Env(model, sx, t.TempDir())
		vars["SOVA_DATABASE_URL"] = dsn
		vars["SOVA_NODE_ID"] = "node-" + strconv.Itoa(i+1)
		for k, v := range extra {
			vars[k] = v
		}
		cfg, err := config.FromEnv(vars)
		if err != nil {
			t.Fatal(err)
		}
		a, err := app.New(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		e := &env{model: model, site: site, sx: sx, app: a}
		e.srv = httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a), Accounts: a.Accounts,
			MaxBodyBytes: cfg.MaxRequestBodyBytes, Version: "test", Limits: a.Limits, Settings: a.Store, Models: a.Model, Usage: a.Store}))
		t.Cleanup(func() {
			e.srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = a.Close(ctx)
		})
		out = append(out, e)
	}
	return out
}

// A free user's requests sent at once, spread over three nodes, are
// answered exactly up to the daily limit: counted in Redis when the nodes
// share one, in PostgreSQL when they do not.
func TestLimitsAcrossNodes(t *testing.T) {
	for _, backend := range []string{"redis", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			extra := map[string]string{"SOVA_AUTH": "accounts", "SOVA_LIMIT_FREE_MESSAGES": "5"}
			if backend == "redis" {
				url := os.Getenv("SOVA_TEST_REDIS_URL")
				if url == "" {
					t.Skip("Redis tests skipped: set SOVA_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379/0)")
				}
				extra["SOVA_REDIS_URL"] = url
			}
			nodes := newNodes(t, 3, extra)
			nodes[0].addUser(t, "fay", sova.RoleFree, "fay's password")
			// One browser, signed in on node 1; its session is in the
			// database, so every node knows it.
			fay := nodes[0].browser(t)
			fay.signIn("fay", "fay's password")
			var mu sync.Mutex
			codes := map[int]int{}
			var wg sync.WaitGroup
			for i := range 18 {
				wg.Go(func() {
					b := &browser{t: t, e: nodes[i%3], c: fay.c}
					resp, _ := b.do("POST", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`)
					mu.Lock()
					codes[resp.StatusCode]++
					mu.Unlock()
				})
			}
			wg.Wait()
			if codes[200] != 5 || codes[429] != 13 {
				t.Errorf("answers by status over three nodes: %v, want 5 × 200 and 13 × 429", codes)
			}
		})
	}
}

// An agent asks for clarification on node 1; the person's answer, sent
// to node 2, continues the same agent there from the state node 1 stored,
// to its report: through the OpenAI-compatible API (the agent's id as the
// model) and through the chat API (the next message of the chat).
func TestAgentClarificationAcrossNodes(t *testing.T) {
	t.Run("v1", func(t *testing.T) {
		nodes := newNodes(t, 2, nil)
		script := scriptAgent(nodes[0].model)
		scriptResearch(script, nodes[0].site.URL)
		clientOf := func(e *env) openai.Client {
			return openai.NewClient(option.WithBaseURL(e.srv.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
		}
		msg, models, _ := streamAgent(t, clientOf(nodes[0]), "sgr_agent", agentTask)
		agentID := models[0]
		if !strings.Contains(msg.Choices[0].Message.Content, "Which years exactly?") {
			t.Fatalf("node 1 did not ask: %q", msg.Choices[0].Message.Content)
		}
		var st stateView
		if code := getJSON(t, nodes[1].srv.URL+"/agents/"+agentID+"/state", &st); code != 200 || st.State != sova.AgentWaiting || st.Iteration != 1 {
			t.Fatalf("node 2 sees the agent as %d %+v", code, st)
		}

		msg, models, header := streamAgent(t, clientOf(nodes[1]), agentID, "The US, 1930 to 1936.")
		if len(models) != 1 || models[0] != agentID || header != agentID {
			t.Errorf("node 2's answer: models %v, header %q, want %s", models, header, agentID)
		}
		if c := msg.Choices[0].Message.Content; !strings.Contains(c, "# Presidents and the economy") || !strings.Contains(c, "## Sources") {
			t.Errorf("node 2's report: %q", c)
		}
		checkContinued(t, nodes, script)
		if code := getJSON(t, nodes[0].srv.URL+"/agents/"+agentID+"/state", &st); code != 200 || st.State != sova.AgentCompleted || st.Iteration != 6 {
			t.Errorf("node 1 sees the agent as %d %+v", code, st)
		}
	})
	t.Run("api", func(t *testing.T) {
		nodes := newNodes(t, 2, nil)
		script := scriptAgent(nodes[0].model)
		scriptResearch(script, nodes[0].site.URL)
		ask := func(e *env, text string) (tools []string) {
			t.Helper()
			resp := e.post(t, "/api/search", `{"id":"agent-chat","group":"sgr_agent","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":`+strconv.Quote(text)+`}]}]}`)
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("POST /api/search to %s: %d", e.app.Config.NodeID, resp.StatusCode)
			}
			for _, c := range frames(t, resp.Body) {
				if c["type"] == "tool-input-available" {
					tools = append(tools, c["toolName"].(string))
				}
			}
			return tools
		}
		if got := ask(nodes[0], agentTask); !slices.Equal(got, []string{"reasoning", "clarification"}) {
			t.Fatalf("node 1's turn: tools %v", got)
		}
		got := ask(nodes[1], "The US, 1930 to 1936.")
		if len(got) != 10 || got[9] != "final_answer" {
			t.Errorf("node 2's turn: tools %v, want the agent's steps 2 to 6", got)
		}
		checkContinued(t, nodes, script)
		list, err := nodes[0].app.Store.ListAgents(t.Context(), userOf(t, nodes[0].app), 0, 0)
		if err != nil || len(list) != 1 || list[0].State != sova.AgentCompleted || list[0].ChatID != "agent-chat" {
			t.Errorf("agents %+v (%v): want one, completed, of the chat", list, err)
		}
	})
}

// checkContinued checks that each step was asked once and that step 2
// (on node 2) saw the conversation node 1 kept: the questions, then the
// person's answers.
func checkContinued(t *testing.T, nodes []*env, script *agentScript) {
	t.Helper()
	if got := script.steps(agentTask); !slices.Equal(got, []int{1, 2, 3, 4, 5, 6}) {
		t.Errorf("steps asked %v, want 1 to 6 once each", got)
	}
	var answered bool
	for _, r := range nodes[0].model.Requests() {
		if r.SchemaName() != "NextStep" || !strings.Contains(r.System(), "Step 2 of") {
			continue
		}
		var asked bool
		for _, m := range r.Messages {
			for _, tc := range m.ToolCalls {
				asked = asked || tc.Name == "clarification" && strings.Contains(tc.Arguments, "Which years exactly?")
			}
			answered = answered || asked && m.Role == "user" && strings.Contains(m.Content, "The US, 1930 to 1936.")
		}
	}
	if !answered {
		t.Error("step 2 did not see node 1's questions followed by the answers")
	}
}

// The answer sent twice at once, to two nodes (a client retrying on
// another node): one continues the agent, the other is refused with 409
// before it touches the run, whose log and state stay those of the one.
func TestAgentAnsweredTwiceAcrossNodes(t *testing.T) {
	nodes := newNodes(t, 2, nil)
	script := scriptAgent(nodes[0].model)
	scriptResearch(script, nodes[0].site.URL)
	client := openai.NewClient(option.WithBaseURL(nodes[0].srv.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	_, models, _ := streamAgent(t, client, "sgr_agent", agentTask)
	agentID := models[0]
	codes := make([]int, 2)
	bodies := make([]string, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			resp := nodes[i].post(t, "/v1/chat/completions", `{"model":"`+agentID+`","messages":[{"role":"user","content":"The US, 1930 to 1936."}]}`)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			codes[i], bodies[i] = resp.StatusCode, string(b)
		})
	}
	wg.Wait()
	slices.Sort(codes)
	if !slices.Equal(codes, []int{200, 409}) {
		t.Errorf("answers: %v, want one 200 and one 409\n%s\n%s", codes, bodies[0], bodies[1])
	}
	if got := script.steps(agentTask); !slices.Equal(got, []int{1, 2, 3, 4, 5, 6}) {
		t.Errorf("steps asked %v, want 1 to 6 once each", got)
	}
	user := userOf(t, nodes[0].app)
	r, err := nodes[1].app.Store.GetRun(t.Context(), user, agentID)
	if err != nil || r.State != sova.RunCompleted {
		t.Fatalf("run: %+v, %v", r, err)
	}
	evs, err := nodes[1].app.Store.RunEvents(t.Context(), agentID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if strings.Contains(string(ev.Event), `"type":"error"`) {
			t.Errorf("the refused answer left an error in the run's log: %s", ev.Event)
		}
	}
}
