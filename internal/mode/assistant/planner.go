package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mcp"
	"github.com/sova-ai/sova/internal/tools"
)

// SupervisorRequest is delegateToSupervisor's arguments and the body of
// POST /api/supervisor (seed 004).
type SupervisorRequest struct {
	ConversationContext string `json:"conversationContext" jsonschema:"what the person and the assistant said that matters for the task"`
	ProposedPlan        string `json:"proposedPlan" jsonschema:"the steps you propose"`
	UserIntent          string `json:"userIntent" jsonschema:"what the person wants, in one sentence"`
	Complexity          string `json:"complexity" jsonschema:"low, medium or high"`
}

// Planner decisions.
const (
	DecisionApprove = "approve" // done; nextResponse says what was done
	DecisionConfirm = "confirm" // actions wait for the person's yes (pendingActions)
	DecisionClarify = "clarify" // the person must answer a question first
	DecisionReject  = "reject"  // it cannot be done
)

// SupervisorResult is the planning agent's answer.
type SupervisorResult struct {
	Decision      string   `json:"decision"`
	NextResponse  string   `json:"nextResponse"`
	WorkflowSteps []string `json:"workflowSteps"`
	// PendingActions are the changes the plan makes (send, create), held
	// for the person's confirmation; they have not run.
	PendingActions []Action `json:"pendingActions,omitempty"`
}

type finishArgs struct {
	Decision      string   `json:"decision" jsonschema:"approve (done), confirm (changes wait for the person's yes), clarify (ask the person), reject (impossible)"`
	NextResponse  string   `json:"nextResponse" jsonschema:"exactly what the assistant says to the person next, in their language"`
	WorkflowSteps []string `json:"workflowSteps" jsonschema:"the 2-7 steps taken or planned, each a short phrase"`
}

// Supervise runs the planning agent for the context's user (POST
// /api/supervisor): changes it plans are returned as pendingActions, never
// run.
func (m *Mode) Supervise(ctx context.Context, req SupervisorRequest) (*SupervisorResult, error) {
	user, ok := sova.UserFrom(ctx)
	if !ok {
		return nil, errors.New("assistant: no user")
	}
	if strings.TrimSpace(req.UserIntent) == "" && strings.TrimSpace(req.ProposedPlan) == "" {
		return nil, fmt.Errorf("%w: userIntent or proposedPlan is required", sova.ErrInvalid)
	}
	ts := m.toolset(ctx, user.ID, event.Discard)
	defer ts.Close()
	return m.plan(ctx, user.ID, req, ts, event.Discard)
}

// plan runs the planning agent: it reads with the MCP tools and searches,
// holds the changes for confirmation, and ends with finish_plan.
func (m *Mode) plan(ctx context.Context, userID string, req SupervisorRequest, ts *mcp.Toolset, sink event.Sink) (*SupervisorResult, error) {
	// Changes are held, not run: the plan goes on with what it read.
	g := &agent.Gate{Continue: true}
	var res *SupervisorResult
	tl := agent.UntrustedTools("MCP", ts.AgentTools())
	tl = append(tl, agent.UntrustedTools("search", m.knowledgeTools(ctx, userID, "", nil))...)
	if m.d.Search != nil {
		tl = append(tl, agent.UntrustedTools("web", []agent.Tool{tools.WebSearch(tools.NewRun(tools.Providers{Search: m.d.Search}, nil), tools.WebSearchOptions{Results: 5, Calls: 3, Format: tools.JSON})})...)
	}
	tl = append(tl, agent.NewTool("finish_plan", "Finish: your decision, what the assistant says next (verbatim), and the steps.",
		func(_ context.Context, in finishArgs) (agent.Output, error) {
			res = &SupervisorResult{Decision: in.Decision, NextResponse: in.NextResponse, WorkflowSteps: in.WorkflowSteps}
			return agent.Output{Text: "Done.", Summary: in.Decision, Stop: true}, nil
		}, agent.WithSchema(func(s *jsonschema.Schema) {
			// A closed set: a loose spelling is mapped, anything else re-asked.
			s.Properties["decision"].Enum = []any{DecisionApprove, DecisionConfirm, DecisionClarify, DecisionReject}
		})))
	body, _ := json.MarshalIndent(req, "", "  ")
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: plannerPrompt(time.Now())},
		{Role: llm.RoleUser, Content: "Task from the router agent:\n" + string(body)},
	}
	temp := m.cfg.Temperature
	out, err := agent.Run(ctx, agent.Config{
		Model: m.d.Model, Repair: m.d.Fast, Tools: tl, MaxSteps: m.cfg.PlannerMaxSteps, Temperature: &temp,
		MaxTokens: m.cfg.MaxTokens, Concurrency: 1, Sink: prefixed(sink, fmt.Sprintf("planner%d-", time.Now().UnixNano()%1000000)),
		Gate: g,
	}, msgs)
	if err != nil {
		return nil, fmt.Errorf("planning agent: %w", err)
	}
	if res == nil {
		res = &SupervisorResult{Decision: DecisionApprove, NextResponse: out.LastText()}
	}
	res.Decision = strings.ToLower(strings.TrimSpace(res.Decision))
	switch res.Decision {
	case DecisionApprove, DecisionConfirm, DecisionClarify, DecisionReject:
	default:
		res.Decision = DecisionApprove
	}
	res.PendingActions = g.Held()
	if len(res.PendingActions) > 0 {
		res.Decision = DecisionConfirm // nothing changes without the person's yes
	} else if res.Decision == DecisionConfirm {
		res.Decision = DecisionApprove
	}
	if len(res.WorkflowSteps) > 7 {
		res.WorkflowSteps = res.WorkflowSteps[:7]
	}
	if strings.TrimSpace(res.NextResponse) == "" {
		return nil, errors.New("planning agent: no nextResponse")
	}
	return res, nil
}

// supervisorTool is the router's delegateToSupervisor.
func (t *turn) supervisorTool(g *gate) agent.Tool {
	return agent.NewTool("delegateToSupervisor", "Delegate a task of 2-7 dependent steps (read a letter AND create a meeting; conditional logic; analysis) to the planning agent. Say a short preamble first. Its nextResponse is said to the person verbatim.",
		func(ctx context.Context, in SupervisorRequest) (agent.Output, error) {
			callID := g.current
			t.emit("handoff", "delegate-"+callID, map[string]any{"kind": "delegate", "from": Router, "to": Planner, "reason": in.UserIntent})
			res, err := t.m.plan(ctx, t.in.UserID, in, t.mcp, t.sink)
			if err != nil {
				return agent.Output{}, err
			}
			t.emit("plan", "plan-"+callID, res)
			t.emit("handoff", "delegate-return-"+callID, map[string]any{"kind": "return", "from": Planner, "to": Router, "reason": res.Decision})
			b, _ := json.Marshal(res)
			if len(res.PendingActions) > 0 {
				for _, a := range res.PendingActions {
					a.CallID = callID
					g.pending = append(g.pending, a)
				}
				// Its words come first; Sova's question about what it
				// holds follows, whatever they say.
				g.lead = res.NextResponse
			} else {
				g.verbatim = res.NextResponse
			}
			return agent.Output{Text: string(b), Summary: "Plan: " + res.Decision, Data: b, Stop: true}, nil
		}, agent.WithTitle(func(in SupervisorRequest) string { return "Delegating to the planning agent" }),
		agent.WithSchema(func(s *jsonschema.Schema) { s.Properties["complexity"].Enum = []any{"low", "medium", "high"} }))
}

// taskToolName is the router's tool that starts a complex task.
const taskToolName = "executeComplexTask"

// taskTool is the router's executeComplexTask: an acting tool, so the
// loop's gate holds it; it runs when the person approves it (resume).
func (t *turn) taskTool() agent.Tool {
	return actingTool{agent.NewTool(taskToolName, "Run a very large task (8+ steps, operations on many people) as a complex task: it is decomposed into subtasks and runs for minutes. "+
		"List in actions every change the task makes (tool and recipients, as the person asked): the person approves exactly those, and any other change inside the task is asked about again. Sova asks the person before it starts; call it directly.",
		func(context.Context, TaskRequest) (agent.Output, error) {
			return agent.Output{}, errors.New("executeComplexTask runs only after the person approves it")
		}, agent.WithTitle(func(in TaskRequest) string { return "Complex task: " + clip(in.Task, 80) }))}
}

// actingTool marks one of Sova's own tools as changing something.
type actingTool struct{ agent.Tool }

func (actingTool) Acts() bool { return true }

func (a actingTool) Run(ctx context.Context, args json.RawMessage) (agent.Output, error) {
	if r, ok := a.Tool.(agent.Runner); ok {
		return r.Run(ctx, args)
	}
	text, err := a.Tool.Call(ctx, args)
	return agent.Text(text), err
}

func (a actingTool) Title(args json.RawMessage) string {
	if tt, ok := a.Tool.(agent.Titler); ok {
		return tt.Title(args)
	}
	return a.Name()
}
