package store_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"
)

func TestAgentsContract(t *testing.T) {
	tests := []struct {
		name string
		test func(t *testing.T, db database)
	}{
		{"RoundTripAndUpdate", testAgentRoundTrip},
		{"ValidationAndIsolation", testAgentValidation},
		{"ClaimIsExclusive", testAgentClaim},
		{"EvictionAndStale", testAgentEviction},
		{"ListOrderAndChatCascade", testAgentList},
		{"SurvivesRestart", testAgentSurvivesRestart},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					tt.test(t, b.newDatabase(t))
				})
			}
		})
	}
}

func sampleAgent() *sova.Agent {
	return &sova.Agent{
		UserID: "ann", Mode: "sgr_agent", Task: "Цены на BMW X6 2025", State: sova.AgentInited,
	}
}

func testAgentRoundTrip(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	a := sampleAgent()
	before := time.Now().Add(-time.Millisecond)
	if err := s.CreateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	if a.ID == "" || a.CreatedAt.Before(before) || !a.UpdatedAt.Equal(a.CreatedAt) {
		t.Fatalf("created %+v", a)
	}
	got, err := s.GetAgent(ctx, "ann", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, a) {
		t.Errorf("got %+v\nwant %+v", got, a)
	}

	// Every mutable field is saved; identity, task and creation time stay.
	a.State = sova.AgentResearching
	a.Iteration, a.SearchesUsed, a.ClarificationsUsed = 3, 2, 1
	a.Sources = []sova.Source{{Number: 1, URL: "https://a.example/", Title: "A", Kind: sova.SourceWeb}, {URL: "https://b.example/"}}
	a.Reasoning = json.RawMessage(`{"current_situation":"есть данные","enough_data":true}`)
	a.Result = "Отчёт [1]"
	a.ResultSources = []sova.Source{{Number: 1, URL: "https://a.example/", Title: "A"}}
	a.Error = ""
	a.Context = json.RawMessage(`{"conversation":[{"role":"user","content":"q"}]}`)
	a.Task = "changed"
	time.Sleep(2 * time.Millisecond)
	if err := s.UpdateAgent(ctx, a, sova.AgentInited); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetAgent(ctx, "ann", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Task != "Цены на BMW X6 2025" || !got.UpdatedAt.After(got.CreatedAt) || !got.UpdatedAt.Equal(a.UpdatedAt) {
		t.Errorf("task %q, times %v / %v (want %v)", got.Task, got.CreatedAt, got.UpdatedAt, a.UpdatedAt)
	}
	a.Task = got.Task
	if !reflect.DeepEqual(got.Sources, a.Sources) || !reflect.DeepEqual(got.ResultSources, a.ResultSources) ||
		got.Iteration != 3 || got.SearchesUsed != 2 || got.ClarificationsUsed != 1 || got.Result != a.Result ||
		got.State != sova.AgentResearching {
		t.Errorf("got %+v", got)
	}
	jsonEqual(t, "reasoning", got.Reasoning, a.Reasoning)
	jsonEqual(t, "context", got.Context, a.Context)

	// Without fromState the update is unconditional.
	a.State = sova.AgentCompleted
	if err := s.UpdateAgent(ctx, a, ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetAgent(ctx, "ann", a.ID); got.State != sova.AgentCompleted {
		t.Errorf("state %s", got.State)
	}
}

func jsonEqual(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v (%s)", what, err, got)
	}
	_ = json.Unmarshal(want, &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

func testAgentValidation(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	bad := []*sova.Agent{
		{Mode: "sgr_agent", State: sova.AgentInited},
		{UserID: "ann", State: sova.AgentInited},
		{UserID: "ann", Mode: "sgr_agent", State: "sleeping"},
		{UserID: "ann", Mode: "sgr_agent", State: sova.AgentInited, Iteration: -1},
		{UserID: "ann", Mode: "sgr_agent", State: sova.AgentInited, Context: json.RawMessage(`{`)},
		{UserID: "ann", Mode: "sgr_agent", State: sova.AgentInited, Reasoning: json.RawMessage(`nope`)},
	}
	for i, a := range bad {
		if err := s.CreateAgent(ctx, a); !errors.Is(err, sova.ErrInvalid) {
			t.Errorf("agent %d: err = %v, want ErrInvalid", i, err)
		}
	}
	a := sampleAgent()
	if err := s.CreateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	dup := sampleAgent()
	dup.ID = a.ID
	if err := s.CreateAgent(ctx, dup); !errors.Is(err, sova.ErrConflict) {
		t.Errorf("taken id: %v", err)
	}
	// Another user sees nothing and changes nothing.
	_, err := s.GetAgent(ctx, "bob", a.ID)
	wantNotFound(t, "GetAgent of another user", err)
	other := *a
	other.UserID = "bob"
	other.State = sova.AgentFailed
	wantNotFound(t, "UpdateAgent of another user", s.UpdateAgent(ctx, &other, ""))
	list, err := s.ListAgents(ctx, "bob", 0, 0)
	if err != nil || len(list) != 0 || list == nil {
		t.Errorf("bob's list = %v, %v", list, err)
	}
	if got, _ := s.GetAgent(ctx, "ann", a.ID); got.State != sova.AgentInited {
		t.Errorf("ann's agent changed: %s", got.State)
	}
	a.State = "sleeping"
	if err := s.UpdateAgent(ctx, a, ""); !errors.Is(err, sova.ErrInvalid) {
		t.Errorf("invalid state update: %v", err)
	}
}

// Two requests continuing the same waiting agent: exactly one claims it.
func testAgentClaim(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	a := sampleAgent()
	a.State = sova.AgentWaiting
	if err := s.CreateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		won, lost int
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := *a
			c.State = sova.AgentResearching
			err := s.UpdateAgent(ctx, &c, sova.AgentWaiting)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, sova.ErrConflict):
				lost++
			default:
				t.Errorf("claim: %v", err)
			}
		}()
	}
	wg.Wait()
	if won != 1 || lost != n-1 {
		t.Errorf("%d claims won, %d lost; want 1 and %d", won, lost, n-1)
	}
	missing := sampleAgent()
	missing.ID, missing.State = "nope", sova.AgentResearching
	wantNotFound(t, "claiming a missing agent", s.UpdateAgent(ctx, missing, sova.AgentWaiting))
}

func testAgentEviction(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	ids := map[string]string{}
	for _, st := range []string{sova.AgentInited, sova.AgentResearching, sova.AgentWaiting, sova.AgentCompleted, sova.AgentFailed} {
		a := sampleAgent()
		a.State = st
		if err := s.CreateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
		ids[st] = a.ID
	}
	// Nothing is old enough yet.
	if n, err := s.DeleteFinishedAgents(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Errorf("early eviction removed %d (%v)", n, err)
	}
	if n, err := s.FailStaleAgents(ctx, time.Now().Add(-time.Hour), "x"); err != nil || n != 0 {
		t.Errorf("early stale check failed %d (%v)", n, err)
	}
	cut := time.Now().Add(time.Second)
	n, err := s.FailStaleAgents(ctx, cut, "the server stopped while the agent was researching")
	if err != nil || n != 2 {
		t.Fatalf("stale agents failed: %d (%v), want 2", n, err)
	}
	got, _ := s.GetAgent(ctx, "ann", ids[sova.AgentResearching])
	if got.State != sova.AgentFailed || got.Error != "the server stopped while the agent was researching" {
		t.Errorf("stale agent = %s %q", got.State, got.Error)
	}
	// Finished agents (now four: the two failed by the stale check were just
	// updated, so they stay) older than the cut go; the waiting one stays.
	n, err = s.DeleteFinishedAgents(ctx, cut.Add(-2*time.Second))
	if err != nil || n != 0 {
		t.Errorf("agents updated after the cut were removed: %d (%v)", n, err)
	}
	n, err = s.DeleteFinishedAgents(ctx, time.Now().Add(time.Second))
	if err != nil || n != 4 {
		t.Errorf("evicted %d (%v), want 4", n, err)
	}
	list, _ := s.ListAgents(ctx, "ann", 0, 0)
	if len(list) != 1 || list[0].ID != ids[sova.AgentWaiting] {
		t.Errorf("left %+v, want the waiting agent only", list)
	}
}

func testAgentList(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	chat := mustCreateChat(t, s, &sova.Chat{UserID: "ann", Mode: "sgr_agent"})
	var ids []string
	for i := 0; i < 3; i++ {
		a := sampleAgent()
		a.CreatedAt = time.Now().Add(time.Duration(i) * time.Second)
		a.Context = json.RawMessage(`{"big":true}`)
		if i == 1 {
			a.ChatID = chat.ID
		}
		if err := s.CreateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	list, err := s.ListAgents(ctx, "ann", 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != ids[2] || list[1].ID != ids[1] || list[1].ChatID != chat.ID {
		t.Fatalf("page 1 = %+v", list)
	}
	if list[0].Context != nil {
		t.Error("the list carries the heavy context")
	}
	list, _ = s.ListAgents(ctx, "ann", 2, 2)
	if len(list) != 1 || list[0].ID != ids[0] {
		t.Errorf("page 2 = %+v", list)
	}
	// Deleting a chat deletes its agents.
	if err := s.DeleteChat(ctx, "ann", chat.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetAgent(ctx, "ann", ids[1])
	wantNotFound(t, "agent of a deleted chat", err)
}

func testAgentSurvivesRestart(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	a := sampleAgent()
	a.State = sova.AgentWaiting
	a.Context = json.RawMessage(`{"questions":["Какой регион?"]}`)
	if err := s.CreateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := db.open(t)
	got, err := s2.GetAgent(ctx, "ann", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != sova.AgentWaiting {
		t.Errorf("state %s", got.State)
	}
	jsonEqual(t, "context", got.Context, a.Context)
}
