package agent

import (
	"context"
	"slices"

	"github.com/sova-ai/sova/internal/llm"
)

// StepPlan is what one step may use. The loop fills it in before each
// model call and hands it to the step policy (seed 000 §9.3's
// prepareStep), which may change it.
type StepPlan struct {
	// Step is the step about to run, from 1; MaxSteps the run's limit.
	Step, MaxSteps int
	// Steps are the steps done so far.
	Steps []Step
	// Messages is the conversation the step sends. A policy may add to
	// it (an agent's reflection); what it adds stays for later steps.
	Messages []llm.Message
	// Tools names the tools offered: all of the run's at first. A policy
	// may narrow them; a name the run has no tool for is ignored.
	Tools []string
	// ToolChoice is the request's tool_choice: "" (the endpoint's
	// default), "auto", "required", or "none": the tools stay listed
	// (earlier calls refer to them) but the model has to answer.
	ToolChoice string
}

// PrepareStep is a step policy: called before every model call with the
// step's plan, which it may change. An error ends the run.
type PrepareStep func(ctx context.Context, p *StepPlan) error

// Policies applies several policies in order.
func Policies(ps ...PrepareStep) PrepareStep {
	return func(ctx context.Context, p *StepPlan) error {
		for _, f := range ps {
			if f == nil {
				continue
			}
			if err := f(ctx, p); err != nil {
				return err
			}
		}
		return nil
	}
}

// LastStepAnswers allows no tools at the last step, so a run always ends
// with an answer. It is the policy when Config.PrepareStep is nil.
func LastStepAnswers(_ context.Context, p *StepPlan) error {
	if p.Step >= p.MaxSteps {
		p.ToolChoice = "none"
	}
	return nil
}

// OneToolRound is seed 000 §9.3's rule for search groups: once a step has
// called tools, the model answers. Combine it with LastStepAnswers.
func OneToolRound(_ context.Context, p *StepPlan) error {
	for _, s := range p.Steps {
		if len(s.Calls) > 0 {
			p.ToolChoice = "none"
			return nil
		}
	}
	return nil
}

// OnlyTools offers only the named tools at every step (a group's active
// tools).
func OnlyTools(names ...string) PrepareStep {
	return func(_ context.Context, p *StepPlan) error {
		p.Tools = slices.DeleteFunc(p.Tools, func(n string) bool { return !slices.Contains(names, n) })
		return nil
	}
}
