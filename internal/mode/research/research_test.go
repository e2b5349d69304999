package research

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/mode"
)

const question = "How did US presidents describe the economy in the 1930s?"

func TestWholeGraphRunsToReport(t *testing.T) {
	e := newEnv(t)
	ws := NewMemWorkspace()
	res, rec := e.run(t, mode.Input{Question: question, Workspace: ws})

	if res.Pause != nil {
		t.Fatal("run paused although no clarification was needed")
	}
	if res.Report == "" || res.Text != res.Report {
		t.Fatalf("Text and Report must both hold the report; Text %d chars, Report %d chars", len(res.Text), len(res.Report))
	}
	if got := rec.Text(); got != res.Text {
		t.Errorf("streamed text differs from the result:\n%s\n---\n%s", got, res.Text)
	}
	for _, want := range []string{"# The economy of the 1930s", "## Executive summary", "## Banking", "## Conclusion", "## Sources", "### Inner heading"} {
		if !strings.Contains(res.Report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := runeLen(res.Report); n < 1500 {
		t.Errorf("report has %d characters, want at least 1500", n)
	}
	if res.FinishReason != event.FinishStop {
		t.Errorf("finish reason %q", res.FinishReason)
	}

	// Every stage ran, in order.
	var stages []string
	for _, ev := range rec.Filter(event.TypeStatus) {
		if len(stages) == 0 || stages[len(stages)-1] != ev.Status.Stage {
			stages = append(stages, ev.Status.Stage)
		}
	}
	order := []string{"initial_search", "clarify", "analyze", "plan", "agents", "research", "supervisor", "compress", "report"}
	pos := 0
	for _, st := range stages {
		if pos < len(order) && st == order[pos] {
			pos++
		}
	}
	if pos != len(order) {
		t.Errorf("stages %v do not pass through %v in order", stages, order)
	}
	if !slices.ContainsFunc(stages, func(s string) bool { return strings.HasPrefix(s, initialStagePrefix) }) {
		t.Errorf("the initial deep search's stages are not prefixed with %q: %v", initialStagePrefix, stages)
	}

	// The session folder.
	files, _ := ws.List(context.Background())
	want := []string{"agents/agent_1.md", "agents/agent_2.md", "agents/agent_3.md", "agents/agent_4.md",
		"draft_report.md", "items/item_1.md", "items/item_5.md", "main.md", "report.md", "supervisor.md"}
	for _, f := range want {
		if !slices.Contains(files, f) {
			t.Errorf("workspace lacks %s; has %v", f, files)
		}
	}
	if slices.Contains(files, "items/item_6.md") {
		t.Errorf("5 tasks (4 planned, 1 from the supervisor) should give 5 items; files %v", files)
	}
	main, _ := ws.Read(context.Background(), fileMain)
	for _, want := range []string{"# Research: " + question, "## Plan", insightsMarker, "### Insight 1", "Banks reopened in 1933 [1]."} {
		if !strings.Contains(main, want) {
			t.Errorf("main.md lacks %q:\n%s", want, main)
		}
	}
	a2, _ := ws.Read(context.Background(), "agents/agent_2.md")
	for _, want := range []string{"# agent_2 — Specialist 2", "[x] Task 2", "[x] Deepen banking", "## Notes", "Findings on Task 2"} {
		if !strings.Contains(a2, want) {
			t.Errorf("agent_2.md lacks %q:\n%s", want, a2)
		}
	}
	item, _ := ws.Read(context.Background(), "items/item_1.md")
	if !strings.Contains(item, "Sources:") || strings.Contains(item, "[99]") {
		t.Errorf("item_1.md should list its sources and drop the unknown citation:\n%s", item)
	}
	sup, _ := ws.Read(context.Background(), fileSupervisor)
	if !strings.Contains(sup, "findings are solid") || !strings.Contains(sup, "**continue**") {
		t.Errorf("supervisor.md lacks notes or decisions:\n%s", sup)
	}
	report, _ := ws.Read(context.Background(), fileReport)
	if report != res.Report {
		t.Error("report.md differs from the result")
	}

	// The draft was long enough to be the report's material.
	fr := e.sc.requests("FinalReport")
	if len(fr) != 1 || !strings.Contains(fr[0].LastUser(), "Draft report by the research supervisor") {
		t.Errorf("the report should be written from the draft in one call; %d calls", len(fr))
	}
	// Agents and the supervisor never see the chat, only the context.
	for _, r := range append(e.sc.requests("agent"), e.sc.requests("supervisor")...) {
		if !strings.Contains(r.Messages[1].Content, "Original research request: "+question) {
			t.Fatalf("a prompt lacks the research context: %s", r.Messages[1].Content)
		}
		if !strings.Contains(r.Messages[1].Content, "Initial deep search result") {
			t.Fatalf("a prompt lacks the initial search result")
		}
	}
}

func TestDataEvents(t *testing.T) {
	e := newEnv(t)
	_, rec := e.run(t, mode.Input{Question: question})

	plans := dataEvents[PlanData](t, rec, DataPlan)
	if len(plans) != 1 || len(plans[0].Themes) != 1 || len(plans[0].Themes[0].Tasks) != 4 {
		t.Fatalf("research_plan: %+v", plans)
	}
	agents := dataEvents[AgentData](t, rec, DataAgent)
	last := map[string]AgentData{}
	working := map[string]bool{}
	for _, a := range agents {
		last[a.ID] = a
		if a.State == AgentWorking && a.CurrentTodo != "" {
			working[a.ID] = true
		}
	}
	if len(last) != 4 || len(working) != 4 {
		t.Fatalf("research_agent: %d agents, %d seen working", len(last), len(working))
	}
	for id, a := range last {
		if a.State != AgentDone || a.Specialisation == "" {
			t.Errorf("%s ended %q (%q)", id, a.State, a.Specialisation)
		}
		for _, td := range a.Todos {
			if td.Status != TodoDone || td.Item == 0 {
				t.Errorf("%s todo %q ended %s (item %d)", id, td.Title, td.Status, td.Item)
			}
		}
	}
	if n := len(last["agent_2"].Todos); n != 2 {
		t.Errorf("agent_2 should end with 2 todos (one from the supervisor), has %d", n)
	}
	notes := dataEvents[NoteData](t, rec, DataNote)
	if len(notes) != 5 {
		t.Fatalf("research_note: %d, want 5", len(notes))
	}
	for _, n := range notes {
		if n.Agent == "" || n.Title == "" || len(n.Sources) == 0 || !strings.HasPrefix(n.File, "items/") {
			t.Errorf("note %+v", n)
		}
		for _, s := range n.Sources {
			if strings.Contains(s.URL, "unread.example") {
				t.Errorf("a note lists a page nobody read: %s", s.URL)
			}
		}
	}
	decisions := dataEvents[DecisionData](t, rec, DataDecision)
	if len(decisions) != 5 {
		t.Fatalf("supervisor_decision: %d, want one per completed task (5)", len(decisions))
	}
	if d := decisions[0]; d.Decision != DecisionContinue || d.Call != 1 || d.MaxCalls != 6 || len(d.NewTodos) != 1 || d.NewTodos[0].Agent != "agent_2" {
		t.Errorf("first decision %+v", d)
	}
	// Every data value is a JSON object and ids are stable per entity.
	for _, ev := range rec.Filter(event.TypeData) {
		if len(ev.Data.Value) == 0 || ev.Data.Value[0] != '{' {
			t.Errorf("data-%s value is not an object: %s", ev.Data.Name, ev.Data.Value)
		}
		if ev.Data.ID == "" {
			t.Errorf("data-%s without id", ev.Data.Name)
		}
	}
	// Agents' searches and reads are reported like the search mode's.
	rounds := map[[2]int]bool{}
	for _, ev := range rec.Filter(event.TypeQuery) {
		if ev.Query.Status == event.QueryStarted {
			id := [2]int{ev.Query.Iteration, ev.Query.Index}
			if rounds[id] {
				t.Errorf("query id %v used twice", id)
			}
			rounds[id] = true
		}
	}
	if len(rounds) < 5 {
		t.Errorf("%d search rounds reported", len(rounds))
	}
	read := 0
	for _, ev := range rec.Filter(event.TypePage) {
		if ev.Page.State == event.PageRead {
			read++
		}
	}
	if read < 5 {
		t.Errorf("%d page reads reported", read)
	}
}

func TestAgentsRunInParallel(t *testing.T) {
	e := newEnv(t)
	e.initial = false
	e.cfg.ClarifyingQuestions = false
	e.sc.supervisorTodo = false
	e.sc.agentLatency = 150 * time.Millisecond
	start := time.Now()
	e.run(t, mode.Input{Question: question})
	took := time.Since(start)

	e.sc.mu.Lock()
	peak := e.sc.peak
	e.sc.mu.Unlock()
	if peak < e.cfg.NumAgents {
		t.Errorf("at most %d agent model calls were in flight at once; want all %d agents at once", peak, e.cfg.NumAgents)
	}
	// 4 agents × 3 steps × 150ms = 1.8s serially; in parallel about 0.45s
	// plus the supervisor's reviews, which overlap with the agents.
	if serial := time.Duration(e.cfg.NumAgents*3) * e.sc.agentLatency; took >= serial {
		t.Errorf("run took %v, no faster than the agents' work in series (%v)", took, serial)
	}
	t.Logf("peak agent calls in flight: %d; run took %v", peak, took)
}

func TestSupervisorNeverCallingToolsForcesFinish(t *testing.T) {
	e := newEnv(t)
	e.initial = false
	e.cfg.ClarifyingQuestions = false
	e.sc.supervisorIdle = true
	e.sc.tasksPerAgent = 2
	e.sc.agentLatency = 20 * time.Millisecond
	res, rec := e.run(t, mode.Input{Question: question})

	// One review, ended after two replies without a tool call.
	if n := e.sc.count("supervisor"); n != 2 {
		t.Errorf("supervisor model calls: %d, want 2 (reply, nudge, reply → forced finish)", n)
	}
	sv := e.sc.requests("supervisor")
	if len(sv) == 2 && !strings.Contains(sv[1].LastUser(), "make_final_decision") {
		t.Errorf("the second supervisor call should carry the nudge; got %q", sv[1].LastUser())
	}
	ds := dataEvents[DecisionData](t, rec, DataDecision)
	if len(ds) != 1 || ds[0].Decision != DecisionFinish || !ds[0].Forced {
		t.Fatalf("decisions %+v, want one forced finish", ds)
	}
	// After the finish no agent takes a new todo: the second todos are
	// skipped by the agents whose first task ended after the decision.
	var skipped int
	final := map[string]AgentData{}
	for _, a := range dataEvents[AgentData](t, rec, DataAgent) {
		final[a.ID] = a
	}
	for _, a := range final {
		for _, td := range a.Todos {
			if td.Status == TodoSkipped {
				skipped++
			}
		}
	}
	if skipped == 0 {
		t.Error("a forced finish should leave pending todos skipped")
	}
	// The report is still written, from the findings (the draft is empty).
	fr := e.sc.requests("FinalReport")
	if len(fr) == 0 || !strings.Contains(fr[0].LastUser(), "Findings of the research agents") {
		t.Error("with an empty draft the report must be written from all findings")
	}
	if res.Report == "" {
		t.Error("no report after a forced finish")
	}
}

func TestSupervisorCallLimit(t *testing.T) {
	e := newEnv(t)
	e.initial = false
	e.cfg.ClarifyingQuestions = false
	e.cfg.MaxSupervisorCalls = 2
	e.sc.tasksPerAgent = 2
	_, rec := e.run(t, mode.Input{Question: question})

	reviews := 0
	for _, r := range e.sc.requests("supervisor") {
		if len(r.Messages) == 2 { // the first request of a review
			reviews++
		}
	}
	if reviews != 2 {
		t.Errorf("%d supervisor reviews, want the limit of 2", reviews)
	}
	// Without the supervisor the agents still finish all their todos:
	// 8 planned plus the one the first review created.
	if n := len(dataEvents[NoteData](t, rec, DataNote)); n != 9 {
		t.Errorf("%d notes, want 9", n)
	}
	var limitNoted bool
	for _, ev := range rec.Filter(event.TypeStatus) {
		if strings.Contains(ev.Status.Message, "call limit (2) reached") {
			limitNoted = true
		}
	}
	if !limitNoted {
		t.Error("reaching the supervisor call limit should be reported")
	}
}

func TestSupervisorFinishAndReplan(t *testing.T) {
	t.Run("finish", func(t *testing.T) {
		e := newEnv(t)
		e.initial = false
		e.cfg.ClarifyingQuestions = false
		e.cfg.NumAgents = 1
		e.sc.supervisorTodo = false
		e.sc.tasksPerAgent = 3
		e.sc.finishOn = 1
		_, rec := e.run(t, mode.Input{Question: question})
		// agent_1 of the script's team of 4 keeps tasks 1-3; the first
		// review finishes the research, so one task runs.
		if n := len(dataEvents[NoteData](t, rec, DataNote)); n != 1 {
			t.Errorf("%d notes after a finish on the first review, want 1", n)
		}
	})
	t.Run("replan", func(t *testing.T) {
		e := newEnv(t)
		e.initial = false
		e.cfg.ClarifyingQuestions = false
		e.sc.supervisorTodo = false
		e.sc.replanOn = 1
		e.sc.finishOn = 2
		_, rec := e.run(t, mode.Input{Question: question})
		plans := dataEvents[PlanData](t, rec, DataPlan)
		if len(plans) != 2 || plans[1].Revision != 1 {
			t.Fatalf("plans %+v, want the first and one revision", plans)
		}
		ds := dataEvents[DecisionData](t, rec, DataDecision)
		if ds[0].Decision != DecisionReplan || len(ds[0].NewTodos) != 4 {
			t.Errorf("replan decision %+v, want 4 new todos", ds[0])
		}
		if e.sc.count("ResearchPlan") != 2 {
			t.Errorf("ResearchPlan calls %d, want 2", e.sc.count("ResearchPlan"))
		}
	})
}

func TestAgentStepLimitReflectionAndReformulations(t *testing.T) {
	e := newEnv(t)
	e.initial = false
	e.cfg.ClarifyingQuestions = false
	e.cfg.NumAgents = 1
	e.cfg.MaxReformulations = 2
	e.sc.agentNeverDone = true
	e.sc.supervisorTodo = false
	e.sc.finishOn = 1
	before := len(e.sx.Queries())
	_, rec := e.run(t, mode.Input{Question: question})

	e.sc.mu.Lock()
	steps := e.sc.steps["agent_1/Task 1"]
	e.sc.mu.Unlock()
	if steps != e.cfg.AgentMaxSteps {
		t.Errorf("agent_1 made %d model calls on its task, want the limit of %d", steps, e.cfg.AgentMaxSteps)
	}
	// One search and two reformulations reach SearXNG; later ones are refused.
	if n := len(e.sx.Queries()) - before; n != 3 {
		t.Errorf("%d searches reached the provider, want 1 + 2 reformulations", n)
	}
	ag := e.sc.requests("agent")
	lastCall := ag[len(ag)-1]
	var refused bool
	for _, m := range lastCall.Messages {
		if strings.Contains(m.Content, "limit of 2 reformulations") {
			refused = true
		}
	}
	if !refused {
		t.Error("the agent was not told that the reformulation limit is reached")
	}
	// Reflection after step 3: one structured call, and its text reaches
	// the agent's conversation and the supervisor (as a help request).
	if n := e.sc.count("AgentReflection"); n != 1 {
		t.Errorf("%d reflections in 5 steps, want 1 (every 3 steps)", n)
	}
	var reflected bool
	for _, m := range lastCall.Messages {
		if strings.HasPrefix(m.Content, "Reflection after 3 steps") {
			reflected = true
		}
	}
	if !reflected {
		t.Error("the reflection did not reach the agent")
	}
	sv := e.sc.requests("supervisor")
	if len(sv) == 0 || !strings.Contains(sv[0].Messages[1].Content, "Request to the supervisor: which years to focus on") {
		t.Error("the agent's help request did not reach the supervisor")
	}
	var stepLimit bool
	for _, ev := range rec.Filter(event.TypeStatus) {
		if strings.Contains(ev.Status.Message, "reached the step limit (5)") {
			stepLimit = true
		}
	}
	if !stepLimit {
		t.Error("the step limit was not reported")
	}
}

func TestAgentLoopIterationLimit(t *testing.T) {
	e := newEnv(t)
	e.initial = false
	e.cfg.ClarifyingQuestions = false
	e.cfg.NumAgents = 1
	e.cfg.MaxIterations = 2
	e.sc.tasksPerAgent = 3
	e.sc.supervisorTodo = false
	_, rec := e.run(t, mode.Input{Question: question})
	if n := len(dataEvents[NoteData](t, rec, DataNote)); n != 2 {
		t.Errorf("%d tasks ran, want the iteration limit of 2", n)
	}
	final := dataEvents[AgentData](t, rec, DataAgent)
	a := final[len(final)-1]
	if a.State != AgentDone || a.Todos[len(a.Todos)-1].Status != TodoSkipped {
		t.Errorf("agent after the limit: %+v", a)
	}
}

func TestClarificationPauseAndResume(t *testing.T) {
	e := newEnv(t)
	e.sc.clarify = true
	ws := NewMemWorkspace()
	res, rec := e.run(t, mode.Input{Question: question, Workspace: ws})

	if res.Pause == nil {
		t.Fatal("the run did not pause for the questions")
	}
	if len(res.Pause.Questions) != 2 || res.Pause.Questions[0] != "Which country do you mean?" {
		t.Errorf("questions %q", res.Pause.Questions)
	}
	if !strings.Contains(res.Text, "1. Which country do you mean?") || rec.Text() != res.Text {
		t.Errorf("questions text %q (streamed %q)", res.Text, rec.Text())
	}
	if e.sc.count("agent") != 0 || e.sc.count("ResearchPlan") != 0 {
		t.Error("research started before the answers")
	}
	searches := e.sc.count("QueryRewrite")

	answer := "The United States, 1930 to 1936."
	res2, rec2 := e.run(t, mode.Input{Question: answer, Workspace: ws, Resume: &mode.Resume{State: res.Pause.State, Answer: answer}})
	if res2.Pause != nil {
		t.Fatal("the resumed run asked again")
	}
	if e.sc.count("ClarificationCheck") != 1 {
		t.Errorf("clarification checks: %d, want 1 (no second round)", e.sc.count("ClarificationCheck"))
	}
	if e.sc.count("QueryRewrite") != searches {
		t.Error("the initial deep search ran again on resume")
	}
	if res2.Report == "" || !strings.Contains(rec2.Text(), "# The economy of the 1930s") {
		t.Error("the resumed run wrote no report")
	}
	// The original question stays the subject; the answers join the context.
	for _, r := range append(e.sc.requests("agent"), e.sc.requests("supervisor")...) {
		c := r.Messages[1].Content
		if !strings.Contains(c, "Original research request: "+question) || !strings.Contains(c, "Answers: "+answer) || !strings.Contains(c, "Which country do you mean?") {
			t.Fatalf("a prompt lacks the question or the clarification:\n%s", c)
		}
	}
	// Pages the initial search read stay citable after the pause.
	if !strings.Contains(e.sc.requests("FinalReport")[0].LastUser(), "Initial deep search result") {
		t.Error("the initial search result was lost over the pause")
	}
	main, _ := ws.Read(context.Background(), fileMain)
	if !strings.Contains(main, "## Clarification") || !strings.Contains(main, answer) {
		t.Errorf("main.md lacks the clarification:\n%s", main)
	}
}

func TestResumeWithBrokenState(t *testing.T) {
	e := newEnv(t)
	_, err := e.mode(t).Run(context.Background(), mode.Input{Question: "x", Resume: &mode.Resume{State: []byte(`{"v":1}`), Answer: "a"}}, event.Discard)
	if err == nil || !strings.Contains(err.Error(), "saved state") {
		t.Errorf("err = %v", err)
	}
}

func TestShortReportIsReasked(t *testing.T) {
	e := newEnv(t)
	e.initial = false
	e.cfg.ClarifyingQuestions = false
	e.sc.shortReports = 1
	res, rec := e.run(t, mode.Input{Question: question})
	fr := e.sc.requests("FinalReport")
	if len(fr) != 2 {
		t.Fatalf("%d report calls, want 2 (short, then re-asked)", len(fr))
	}
	if !strings.Contains(fr[1].LastUser(), "it must have at least 1500") {
		t.Errorf("the re-ask does not say why: %q", fr[1].LastUser())
	}
	if n := runeLen(res.Report); n < 1500 {
		t.Errorf("final report has %d characters", n)
	}
	var noted bool
	for _, ev := range rec.Filter(event.TypeStatus) {
		if strings.Contains(ev.Status.Message, "too short") {
			noted = true
		}
	}
	if !noted {
		t.Error("the re-ask was not reported")
	}

	// A report that stays short is kept after the last attempt.
	e2 := newEnv(t)
	e2.initial = false
	e2.cfg.ClarifyingQuestions = false
	e2.sc.shortReports = 10
	res2, _ := e2.run(t, mode.Input{Question: question})
	if n := len(e2.sc.requests("FinalReport")); n != maxReportAttempts {
		t.Errorf("%d report calls, want %d", n, maxReportAttempts)
	}
	if res2.Report == "" {
		t.Error("a short report must still be delivered")
	}
}

func TestCitationsPointOnlyAtReadPages(t *testing.T) {
	e := newEnv(t)
	res, _ := e.run(t, mode.Input{Question: question})
	if len(res.Sources) == 0 {
		t.Fatal("the report cites nothing")
	}
	for i, s := range res.Sources {
		if s.Number != i+1 {
			t.Errorf("source %d numbered %d", i, s.Number)
		}
		path := strings.TrimPrefix(s.URL, e.site.URL)
		if path == s.URL || e.site.Hits(path) == 0 {
			t.Errorf("cited %s, which the run never fetched", s.URL)
		}
	}
	if strings.Contains(res.Report, "[99]") || strings.Contains(res.Report, "unread.example") {
		t.Error("a citation of an unread page survived")
	}
	for _, m := range markerRE.FindAllStringSubmatch(res.Report, -1) {
		var n int
		for _, c := range m[1] {
			n = n*10 + int(c-'0')
		}
		if n < 1 || n > len(res.Sources) {
			t.Errorf("marker %s has no source in the list of %d", m[0], len(res.Sources))
		}
	}
	list := res.Report[strings.Index(res.Report, "## Sources"):]
	for _, s := range res.Sources {
		if !strings.Contains(list, s.URL) {
			t.Errorf("source list lacks %s", s.URL)
		}
	}
}

func TestRussianQuestion(t *testing.T) {
	e := newEnv(t)
	e.sc.clarify = true
	q := "Как президенты США описывали экономику в 1930-х годах?"
	res, _ := e.run(t, mode.Input{Question: q})
	if res.Pause == nil || !strings.HasPrefix(res.Text, "Прежде чем начать исследование") || !strings.Contains(res.Text, "Какую страну") {
		t.Fatalf("Russian questions: %q", res.Text)
	}
	res2, _ := e.run(t, mode.Input{Question: "США", Resume: &mode.Resume{State: res.Pause.State, Answer: "США, 1933–1936"}})
	for _, kind := range []string{"ClarificationCheck", "QueryAnalysis", "ResearchPlan", "AgentTeam", "agent", "summary", "AgentNote", "supervisor", "FinalReport"} {
		reqs := e.sc.requests(kind)
		if len(reqs) == 0 {
			t.Errorf("no %s request", kind)
			continue
		}
		if !strings.Contains(reqs[0].System(), "Russian") {
			t.Errorf("the %s prompt does not ask for Russian:\n%s", kind, reqs[0].System())
		}
	}
	for _, want := range []string{"# Экономика 1930-х годов", "## Краткое резюме", "## Заключение", "## Источники"} {
		if !strings.Contains(res2.Report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestCancel(t *testing.T) {
	e := newEnv(t)
	e.initial = false
	e.cfg.ClarifyingQuestions = false
	e.sc.agentLatency = 2 * time.Second
	m := e.mode(t)
	ctx, cancel := context.WithCancel(context.Background())
	var rec eventtest.Recorder
	go func() {
		// Cancel once the agents are at work.
		for {
			for _, ev := range rec.Filter(event.TypeData) {
				if ev.Data.Name == DataAgent && strings.Contains(string(ev.Data.Value), `"working"`) {
					cancel()
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	start := time.Now()
	_, err := m.Run(ctx, mode.Input{Question: question}, &rec)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("cancel took %v to stop the run", took)
	}
}

func TestNilWorkspaceUsesMemory(t *testing.T) {
	e := newEnv(t)
	e.initial = false
	e.cfg.ClarifyingQuestions = false
	res, _ := e.run(t, mode.Input{Question: question})
	if res.Report == "" {
		t.Fatal("no report without a workspace")
	}
}

// The shared test model (sovatest) answers every step of this mode, so
// server and CLI tests can run deep_research end to end.
func TestSovatestModelDrivesDeepResearch(t *testing.T) {
	e := newEnv(t)
	e.sc.model.Handle(e.sc.model.Respond) // the shared responder, not this package's script
	res, rec := e.run(t, mode.Input{Question: question})
	if res.Pause != nil || runeLen(res.Report) < 1500 || len(res.Sources) == 0 {
		t.Fatalf("report of %d characters, %d sources, paused %v", runeLen(res.Report), len(res.Sources), res.Pause != nil)
	}
	if n := len(dataEvents[NoteData](t, rec, DataNote)); n != 8 {
		t.Errorf("%d notes, want 8 (two tasks for each of 4 agents)", n)
	}
	if n := len(dataEvents[DecisionData](t, rec, DataDecision)); n != e.cfg.MaxSupervisorCalls {
		t.Errorf("%d supervisor decisions, want the limit of %d", n, e.cfg.MaxSupervisorCalls)
	}
}

// TestClosedValuesMappedOrReasked: the analysis's complexity and a note's
// relevance are closed sets, sent as enums; a loose spelling (" Complex.",
// "HIGH") is taken as the value it spells, and a value outside the set
// ("высокая") is asked again, never kept.
func TestClosedValuesMappedOrReasked(t *testing.T) {
	e := newEnv(t)
	e.sc.sloppyClosed = true
	_, rec := e.run(t, mode.Input{Question: question})
	analyses := e.sc.requests("QueryAnalysis")
	if len(analyses) != 1 {
		t.Fatalf("%d analysis requests, want 1: a loose spelling is not re-asked", len(analyses))
	}
	props, _ := analyses[0].Schema()["properties"].(map[string]any)
	if enum, _ := props["complexity"].(map[string]any)["enum"].([]any); len(enum) != 3 {
		t.Errorf("complexity sent as %v", props["complexity"])
	}
	analysed := false
	for _, ev := range rec.Filter(event.TypeStatus) {
		if ev.Status.Stage == "analyze" && strings.Contains(ev.Status.Detail, "historical, complex:") {
			analysed = true
		}
	}
	if !analysed {
		t.Error("the analysis status does not give the complexity as complex")
	}
	notes := dataEvents[NoteData](t, rec, DataNote)
	if len(notes) == 0 {
		t.Fatal("no notes")
	}
	for _, n := range notes {
		if n.Relevance != "high" {
			t.Errorf("note %d kept relevance %q", n.Item, n.Relevance)
		}
	}
	reasked := 0
	for _, r := range e.sc.requests("AgentNote") {
		if strings.Contains(r.LastUser(), "высокая") {
			reasked++
		}
	}
	if reasked < len(notes) {
		t.Errorf("%d re-asks naming the value for %d notes", reasked, len(notes))
	}
}
