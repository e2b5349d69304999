package research

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/sova-ai/sova"

	agentloop "github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
)

// Supervisor decisions.
const (
	DecisionContinue = "continue"
	DecisionReplan   = "replan"
	DecisionFinish   = "finish"
)

// reviewRun is one supervisor call: the review of one completed task.
type reviewRun struct {
	s        *session
	c        completion
	call     int
	decision string
	reason   string
	newTodos []NewTodoData
}

// review is the supervisor's ReAct loop over one queue entry (seed 001 §4,
// supervisor_review_enhanced_node), under SupervisorMaxIterations model
// calls. A review that ends without make_final_decision — the model
// stopped calling tools twice in a row, or ran out of iterations — is a
// forced finish. A model failure skips the review and the research goes
// on.
func (s *session) review(ctx context.Context, c completion) error {
	call := s.board.callNumber()
	status(s.sink, "supervisor", fmt.Sprintf("Supervisor reviewing %s's task (call %d of %d)", c.agent.id, call, s.cfg.MaxSupervisorCalls), c.todo.title)
	rv := &reviewRun{s: s, c: c, call: call}
	res, err := s.loop(ctx, agentloop.Config{
		Tools:    rv.tools(),
		MaxSteps: s.cfg.SupervisorMaxIterations,
		MaxIdle:  2,
		Nudge:    "Continue the review with your tools, and end it with make_final_decision (continue, replan or finish).",
	}, s.supervisorMessages(ctx, c, call))
	d := DecisionData{Call: call, MaxCalls: s.cfg.MaxSupervisorCalls, Agent: c.agent.id}
	switch {
	case err != nil && (ctx.Err() != nil || agentloop.IsFatal(err)):
		return err
	case err != nil:
		status(s.sink, "supervisor", "The supervisor's review failed; the research goes on", err.Error())
		d.Decision, d.Reason, d.Forced = DecisionContinue, "review failed: "+err.Error(), true
	case rv.decision == "":
		d.Decision, d.Forced = DecisionFinish, true
		if res.End == agentloop.EndAnswer {
			d.Reason = "the supervisor stopped using its tools twice in a row"
		} else {
			d.Reason = fmt.Sprintf("the supervisor reached its iteration limit (%d)", s.cfg.SupervisorMaxIterations)
		}
	default:
		d.Decision, d.Reason = rv.decision, rv.reason
	}
	d.NewTodos = rv.newTodos
	switch d.Decision {
	case DecisionFinish:
		s.board.finish()
	case DecisionReplan:
		d.NewTodos = append(d.NewTodos, s.replan(ctx, d.Reason)...)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if d.NewTodos == nil {
		d.NewTodos = []NewTodoData{}
	}
	s.mu.Lock()
	s.decisions = append(s.decisions, d)
	s.mu.Unlock()
	line := fmt.Sprintf("\n- Call %d (%s, %q): **%s** — %s\n", call, c.agent.id, c.todo.title, d.Decision, d.Reason)
	if d.Forced {
		line = strings.Replace(line, "**"+d.Decision+"**", "**"+d.Decision+"** (forced)", 1)
	}
	if err := s.ws.Append(ctx, fileSupervisor, line); err != nil {
		return agentloop.Fatal(fmt.Errorf("writing %s: %w", fileSupervisor, err))
	}
	emitData(s.sink, DataDecision, fmt.Sprintf("decision-%d", call), d)
	// A long run reports its token use as it goes, not only at the end.
	if m := llm.MeterFrom(ctx); m != nil {
		u := m.Total()
		s.sink.Emit(event.Event{Type: event.TypeUsage, Time: time.Now(), Usage: &sova.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}})
	}
	if d.Decision == DecisionContinue {
		return nil // new todos were published as they were created
	}
	// A finish or replan changed every agent's todos.
	for _, a := range s.board.agents {
		if err := s.board.publish(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// supervisorMessages is the supervisor's prompt with its critical context:
// the request, initial search and clarification (never the chat), the
// team's state, the latest useful findings and the task under review.
func (s *session) supervisorMessages(ctx context.Context, c completion, call int) []llm.Message {
	sys := fmt.Sprintf(`You are the supervisor of a research team of %d researcher agents. An agent has just finished a task; review it and steer the research.
Work with your tools:
1. Read the agent's findings (below) and judge their depth and relevance.
2. Keep your own notes with write_supervisor_note.
3. Synthesise the findings into the draft report with write_draft_report: well-organised Markdown sections that will become the final report, citing read pages as [n] exactly as the findings do.
4. Add the key insights to the main document with write_main_document.
5. Check the coverage of the topic: for gaps create new tasks with create_agent_todo; for superficial findings create tasks that go deeper; if agents duplicate each other, send them to different aspects. Use review_agent_progress to see an agent's todos and notes.
6. End with make_final_decision: "continue" (there is work left), "replan" (the direction is wrong; the plan is redone) or "finish" (the research is complete enough for the report).
You have at most %d tool rounds in this review; this is supervisor call %d of %d. Write in %s.`,
		len(s.board.agents), s.cfg.SupervisorMaxIterations, call, s.cfg.MaxSupervisorCalls, s.lang.Name)

	var u strings.Builder
	u.WriteString(s.context())
	if a := s.analysisText(); a != "" {
		fmt.Fprintf(&u, "\nAnalysis of the request:\n%s", a)
	}
	s.mu.Lock()
	goal := s.plan.Goal
	s.mu.Unlock()
	if goal != "" {
		fmt.Fprintf(&u, "\nResearch goal: %s\n", goal)
	}
	u.WriteString("\nThe team:\n")
	s.board.mu.Lock()
	for _, a := range s.board.agents {
		fmt.Fprintf(&u, "- %s (%s), %s:", a.id, a.profile.Specialisation, a.state)
		for _, t := range a.todos {
			fmt.Fprintf(&u, " [%s] %s;", t.status, t.title)
		}
		u.WriteString("\n")
	}
	s.board.mu.Unlock()

	// The latest useful findings, the reviewed one apart.
	var useful []*note
	for _, n := range s.board.allNotes() {
		if n.relevance != "low" && (c.note == nil || n.item != c.note.item) {
			useful = append(useful, n)
		}
	}
	useful = useful[max(0, len(useful)-s.cfg.SupervisorFindings):]
	if len(useful) > 0 {
		u.WriteString("\nLatest findings of the team:\n")
		for _, n := range useful {
			fmt.Fprintf(&u, "- Item %d (%s) %s: %s\n", n.item, n.agent, n.title, clip(n.findings, 600))
		}
	}
	if draft, err := s.ws.Read(ctx, fileDraft); err == nil {
		fmt.Fprintf(&u, "\nThe draft report has %d characters.\n", len([]rune(draft)))
	}
	fmt.Fprintf(&u, "\nCompleted task under review: %s finished %q.\n", c.agent.id, c.todo.title)
	if c.note == nil {
		u.WriteString("The task failed: the agent could not finish it.\n")
	} else {
		u.WriteString(s.noteDoc(c.note, 3))
	}
	return []llm.Message{{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: u.String()}}
}

// Arguments of the supervisor's tools.
type (
	noteArgs struct {
		Note string `json:"note" jsonschema:"the note"`
	}
	mainArgs struct {
		SectionTitle string `json:"section_title" jsonschema:"title of the insight section"`
		Content      string `json:"content" jsonschema:"the key insights, Markdown"`
	}
	draftArgs struct {
		Content string `json:"content" jsonschema:"Markdown to add to the draft (or the whole new draft with mode replace)"`
		Mode    string `json:"mode" jsonschema:"append (default) or replace"`
	}
	agentArgs struct {
		AgentID string `json:"agent_id" jsonschema:"the agent, e.g. agent_2"`
	}
	todoArgs struct {
		AgentID   string `json:"agent_id" jsonschema:"the agent, e.g. agent_2"`
		Title     string `json:"title" jsonschema:"short task title"`
		Objective string `json:"objective" jsonschema:"what to find out"`
		Reasoning string `json:"reasoning" jsonschema:"why the task is needed"`
	}
	decisionArgs struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason" jsonschema:"why"`
	}
)

// enum restricts a property of a tool's arguments to values.
func enum(prop string, values ...string) agentloop.ToolOption {
	return agentloop.WithSchema(func(s *jsonschema.Schema) {
		for _, v := range values {
			s.Properties[prop].Enum = append(s.Properties[prop].Enum, v)
		}
	})
}

// text adapts a tool function that only answers with text.
func text[In any](f func(context.Context, In) (string, error)) func(context.Context, In) (agentloop.Output, error) {
	return func(ctx context.Context, in In) (agentloop.Output, error) {
		s, err := f(ctx, in)
		return agentloop.Text(s), err
	}
}

func (rv *reviewRun) tools() []agentloop.Tool {
	s := rv.s
	read := func(path, empty string) func(context.Context, struct{}) (string, error) {
		return func(ctx context.Context, _ struct{}) (string, error) {
			doc, err := s.ws.Read(ctx, path)
			if errors.Is(err, mode.ErrNoFile) || (err == nil && strings.TrimSpace(doc) == "") {
				return empty, nil
			}
			if err != nil {
				return "", agentloop.Fatal(fmt.Errorf("reading %s: %w", path, err))
			}
			return clip(doc, 12000), nil
		}
	}
	return []agentloop.Tool{
		agentloop.NewTool("read_supervisor_file", "Read your own notes (supervisor.md).", text(read(fileSupervisor, "Your notes are empty."))),
		agentloop.NewTool("write_supervisor_note", "Add a note to your own notes file.", text(rv.writeSupervisorNote)),
		agentloop.NewTool("read_main_document", "Read the main research document (the plan and key insights).", text(read(fileMain, "The main document is empty."))),
		agentloop.NewTool("write_main_document", "Add key insights to the main research document.", text(rv.writeMain)),
		agentloop.NewTool("read_draft_report", "Read the draft of the final report.", text(read(fileDraft, "The draft report is empty."))),
		agentloop.NewTool("write_draft_report", "Write or extend the draft of the final report.", text(rv.writeDraft), enum("mode", "append", "replace")),
		agentloop.NewTool("review_agent_progress", "See an agent's todos and notes.", text(rv.reviewAgent)),
		agentloop.NewTool("create_agent_todo", "Give an agent a new research task.", text(rv.createTodo)),
		agentloop.NewTool("make_final_decision", "End the review with a decision on the research.", rv.decide,
			enum("decision", DecisionContinue, DecisionReplan, DecisionFinish)),
	}
}

func (rv *reviewRun) writeSupervisorNote(ctx context.Context, args noteArgs) (string, error) {
	if strings.TrimSpace(args.Note) == "" {
		return "Error: the note is empty.", nil
	}
	if err := rv.s.ws.Append(ctx, fileSupervisor, fmt.Sprintf("\n### Call %d\n\n%s\n", rv.call, strings.TrimSpace(args.Note))); err != nil {
		return "", agentloop.Fatal(fmt.Errorf("writing %s: %w", fileSupervisor, err))
	}
	return "Noted.", nil
}

func (rv *reviewRun) writeMain(ctx context.Context, args mainArgs) (string, error) {
	if strings.TrimSpace(args.Content) == "" {
		return "Error: the content is empty.", nil
	}
	text := fmt.Sprintf("\n### %s\n\n%s\n", cmpOr(strings.TrimSpace(args.SectionTitle), "Insights"), rv.s.pages.KeepKnownMarkers(strings.TrimSpace(args.Content)))
	if err := rv.s.ws.Append(ctx, fileMain, text); err != nil {
		return "", agentloop.Fatal(fmt.Errorf("writing %s: %w", fileMain, err))
	}
	return "Added to the main document.", nil
}

func (rv *reviewRun) writeDraft(ctx context.Context, args draftArgs) (string, error) {
	content := rv.s.pages.KeepKnownMarkers(strings.TrimSpace(args.Content))
	if content == "" {
		return "Error: the content is empty.", nil
	}
	var err error
	if args.Mode == "replace" {
		err = rv.s.ws.Write(ctx, fileDraft, content+"\n")
	} else {
		err = rv.s.ws.Append(ctx, fileDraft, "\n"+content+"\n")
	}
	if err != nil {
		return "", agentloop.Fatal(fmt.Errorf("writing %s: %w", fileDraft, err))
	}
	draft, _ := rv.s.ws.Read(ctx, fileDraft)
	return fmt.Sprintf("The draft report now has %d characters.", len([]rune(draft))), nil
}

func (rv *reviewRun) reviewAgent(_ context.Context, args agentArgs) (string, error) {
	a, ok := rv.s.board.agentByID(args.AgentID)
	if !ok {
		return fmt.Sprintf("Error: there is no agent %q; agents are agent_1 … agent_%d.", args.AgentID, len(rv.s.board.agents)), nil
	}
	rv.s.board.mu.Lock()
	doc := rv.s.board.agentDoc(a)
	rv.s.board.mu.Unlock()
	return clip(doc, 8000), nil
}

func (rv *reviewRun) createTodo(ctx context.Context, args todoArgs) (string, error) {
	if strings.TrimSpace(args.Title) == "" {
		return "Error: the title is empty.", nil
	}
	a, ok := rv.s.board.agentByID(args.AgentID)
	if !ok {
		return fmt.Sprintf("Error: there is no agent %q; agents are agent_1 … agent_%d.", args.AgentID, len(rv.s.board.agents)), nil
	}
	t, err := rv.s.board.addTodo(a, PlanTask{Title: args.Title, Objective: args.Objective}, "supervisor")
	if err != nil {
		return "Error: " + err.Error(), nil
	}
	rv.newTodos = append(rv.newTodos, NewTodoData{Agent: a.id, Title: t.title})
	if err := rv.s.board.publish(ctx, a); err != nil {
		return "", err
	}
	return fmt.Sprintf("Todo %d created for %s.", t.id, a.id), nil
}

func (rv *reviewRun) decide(_ context.Context, args decisionArgs) (agentloop.Output, error) {
	d := strings.ToLower(strings.TrimSpace(args.Decision))
	switch d {
	case DecisionContinue, DecisionReplan, DecisionFinish:
	default:
		return agentloop.Text(fmt.Sprintf("Error: decision must be continue, replan or finish, not %q.", args.Decision)), nil
	}
	rv.decision, rv.reason = d, strings.TrimSpace(args.Reason)
	return agentloop.Output{Text: "Decision recorded: " + d, Stop: true}, nil
}

// replan redoes the plan after a replan decision: pending todos are
// dropped and the new tasks handed out.
func (s *session) replan(ctx context.Context, reason string) []NewTodoData {
	status(s.sink, "plan", "Replanning the research", reason)
	var known strings.Builder
	for _, n := range s.board.allNotes() {
		fmt.Fprintf(&known, "- %s: %s\n", n.title, clip(n.findings, 300))
	}
	plan, _, err := llm.Structured[ResearchPlan](ctx, s.r.model, llm.Request{
		Messages: s.planMessages(reason, known.String()), Temperature: s.temperature(),
	}, llm.WithSchemaName("ResearchPlan"))
	if err != nil {
		if ctx.Err() == nil {
			status(s.sink, "plan", "Could not replan; the current todos stay", err.Error())
		}
		return nil
	}
	s.mu.Lock()
	s.plan = plan
	s.planRevision++
	s.mu.Unlock()
	s.emitPlan()
	if err := s.writeMain(ctx); err != nil {
		status(s.sink, "plan", "Could not update main.md with the new plan", err.Error())
	}
	return s.board.replaceTodos(plan.tasks())
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
