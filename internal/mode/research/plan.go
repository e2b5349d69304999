package research

import (
	"context"
	"fmt"
	"strings"

	"github.com/sova-ai/sova/internal/llm"
)

// analyze classifies the request and picks a strategy (analyze_query_node).
// A failure leaves the analysis empty: planning works from the request.
func (s *session) analyze(ctx context.Context) {
	status(s.sink, "analyze", "Analysing the request", "")
	sys := fmt.Sprintf(`You are the lead of a research team. Analyse the research request: classify it, judge its complexity, list the aspects a complete answer must cover, and choose a research strategy.
Write in %s. Current date: %s.`, s.lang.Name, dateIn(s.in.Now, s.in.Timezone))
	a, _, err := llm.Structured[QueryAnalysis](ctx, s.r.model, llm.Request{
		Messages:    []llm.Message{{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: s.context()}},
		Temperature: s.temperature(),
	}, llm.WithSchemaName("QueryAnalysis"))
	if err != nil {
		if ctx.Err() == nil {
			status(s.sink, "analyze", "Could not analyse the request; planning from it directly", err.Error())
		}
		return
	}
	s.analysis = a
	status(s.sink, "analyze", "Request analysed", fmt.Sprintf("%s, %s: %s", a.QueryType, a.Complexity, strings.Join(a.KeyAspects, "; ")))
}

// analysisText renders the analysis for prompts.
func (s *session) analysisText() string {
	a := s.analysis
	if len(a.KeyAspects) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Type: %s. Complexity: %s.\nKey aspects:\n", a.QueryType, a.Complexity)
	for _, k := range a.KeyAspects {
		fmt.Fprintf(&b, "- %s\n", k)
	}
	if a.Strategy != "" {
		fmt.Fprintf(&b, "Strategy: %s\n", a.Strategy)
	}
	if len(a.Constraints) > 0 {
		fmt.Fprintf(&b, "Constraints: %s\n", strings.Join(a.Constraints, "; "))
	}
	return b.String()
}

// planMessages builds the planning prompt; replan carries the supervisor's
// reason and what is known so far.
func (s *session) planMessages(replan, known string) []llm.Message {
	tasks := s.cfg.NumAgents * 2
	sys := fmt.Sprintf(`You are the lead of a research team of %d researcher agents. Write a research plan: the goal, the key aspects (themes) of the topic, and for each theme concrete research tasks an agent can do with web search and reading pages.
Write about %d tasks in all, each specific enough to finish in a few searches; cover different aspects without overlap.
Write in %s. Current date: %s.`, s.cfg.NumAgents, tasks, s.lang.Name, dateIn(s.in.Now, s.in.Timezone))
	var user strings.Builder
	user.WriteString(s.context())
	if a := s.analysisText(); a != "" {
		fmt.Fprintf(&user, "\nAnalysis of the request:\n%s", a)
	}
	if replan != "" {
		fmt.Fprintf(&user, "\nThe supervisor decided to replan the research because: %s\n", replan)
		if known != "" {
			fmt.Fprintf(&user, "\nWhat the research has found so far:\n%s\n", known)
		}
		user.WriteString("\nPlan the remaining research: new tasks that correct the direction and do not repeat work already done.\n")
	}
	return []llm.Message{{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: user.String()}}
}

// makePlan writes the research plan (plan_research_enhanced_node). If the
// model cannot, the plan is one theme with the request as its task.
func (s *session) makePlan(ctx context.Context) {
	status(s.sink, "plan", "Planning the research", "")
	plan, _, err := llm.Structured[ResearchPlan](ctx, s.r.model, llm.Request{
		Messages: s.planMessages("", ""), Temperature: s.temperature(),
	}, llm.WithSchemaName("ResearchPlan"))
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		status(s.sink, "plan", "Could not write a plan; researching the request as one task", err.Error())
		plan = fallbackPlan(s.question, s.analysis)
	}
	s.plan = plan
	s.emitPlan()
	status(s.sink, "plan", "Research plan ready", fmt.Sprintf("%d themes, %d tasks", len(plan.Themes), len(plan.tasks())))
}

func fallbackPlan(question string, a QueryAnalysis) ResearchPlan {
	th := PlanTheme{Title: clip(question, 80), Description: question}
	for _, k := range a.KeyAspects {
		th.Tasks = append(th.Tasks, PlanTask{Title: clip(k, 80), Objective: k})
	}
	if len(th.Tasks) == 0 {
		th.Tasks = []PlanTask{{Title: clip(question, 80), Objective: question}}
	}
	return ResearchPlan{Goal: question, Themes: []PlanTheme{th}}
}

// makeTeam creates the agents' characteristics and hands out the plan's
// tasks (create_agent_characteristics_enhanced_node). The team always has
// NumAgents agents: extra ones are dropped, missing ones added as
// generalists, and plan tasks no agent took go round-robin.
func (s *session) makeTeam(ctx context.Context) []AgentProfile {
	n := s.cfg.NumAgents
	status(s.sink, "agents", fmt.Sprintf("Creating %d researcher agents", n), "")
	var plan strings.Builder
	for i, t := range s.plan.tasks() {
		fmt.Fprintf(&plan, "%d. %s — %s\n", i+1, t.Title, t.Objective)
	}
	sys := fmt.Sprintf(`You assemble a team of exactly %d researcher agents for a research project. Give each a distinct specialisation (for example "Technical Expert", "Historical Analyst", "Market Analyst", "Critical Reviewer"), a working style and source preferences that suit the topic, and assign every plan task to the agent best suited to it, copying its title and objective. Spread the tasks evenly.
Write in %s.`, n, s.lang.Name)
	user := s.context() + "\nResearch plan tasks:\n" + plan.String()
	team, _, err := llm.Structured[AgentTeam](ctx, s.r.model, llm.Request{
		Messages:    []llm.Message{{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: user}},
		Temperature: s.temperature(),
	}, llm.WithSchemaName("AgentTeam"))
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		status(s.sink, "agents", "Could not create agent profiles; using generalist researchers", err.Error())
	}
	return completeTeam(team.Agents, s.plan.tasks(), n, s.question)
}

// completeTeam trims or fills the team to n agents and makes sure every
// plan task is someone's todo and every agent has one.
func completeTeam(agents []AgentProfile, tasks []PlanTask, n int, question string) []AgentProfile {
	if len(agents) > n {
		agents = agents[:n]
	}
	for len(agents) < n {
		agents = append(agents, AgentProfile{
			Specialisation:    fmt.Sprintf("Generalist researcher %d", len(agents)+1),
			Style:             "thorough and factual",
			SourcePreferences: "primary sources, official data, reputable media",
		})
	}
	assigned := map[string]bool{}
	for i := range agents {
		var kept []PlanTask
		for _, t := range agents[i].Todos {
			key := strings.ToLower(strings.TrimSpace(t.Title))
			if key == "" || assigned[key] {
				continue
			}
			assigned[key] = true
			kept = append(kept, t)
		}
		agents[i].Todos = kept
	}
	next := 0
	for _, t := range tasks {
		if assigned[strings.ToLower(strings.TrimSpace(t.Title))] {
			continue
		}
		// The least loaded agent takes an unassigned task.
		best := next % n
		for i := range agents {
			if len(agents[i].Todos) < len(agents[best].Todos) {
				best = i
			}
		}
		agents[best].Todos = append(agents[best].Todos, t)
		next++
	}
	for i := range agents {
		if len(agents[i].Todos) == 0 {
			agents[i].Todos = []PlanTask{{
				Title:     clip(question, 80),
				Objective: fmt.Sprintf("Research the request from the angle of a %s: %s", agents[i].Specialisation, question),
			}}
		}
	}
	return agents
}
