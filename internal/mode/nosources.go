package mode

import (
	"context"
	"sync"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
)

// NoSourcesInstruction tells the model that its tools found nothing it
// may cite, so that it neither pretends to sources nor makes up numbers.
const NoSourcesInstruction = "Note: no source could be read for this question (the tools found nothing usable). " +
	"Say so in one sentence, then answer from your own knowledge as well as you can. Cite nothing: there are no numbered sources."

// NoSources keeps an agent run that cites from ending with an answer
// that rests on no source without saying so (seed 000's citing modes):
// when the model is about to answer after its tools found no source, the
// unverified note goes out first (status and text) and the model is told
// there is nothing to cite. An answer written in a step that could still
// call tools is marked afterwards (Mark).
type NoSources struct {
	Sink event.Sink
	Lang lang.Language
	// Count is how many sources the run's tools have numbered so far.
	Count func() int
	// Write puts a piece of text in the answer (its text and stream).
	Write func(piece string)
	// Citing says which tools number sources (nil: all of them): a run
	// that called only others (a clock, a converter) needs no note.
	Citing func(tool string) bool
	// NotWeb: the tools search something other than the web (the
	// person's documents), which the note's wording follows.
	NotWeb bool
	// Failure, when set, gives the run's last search failure, which the
	// status names (tools.Run.SearchFailure).
	Failure func() error

	mu    sync.Mutex
	noted bool
}

// Policy is the step policy that notes an answer-only step (no tools
// offered, or tool_choice none) of a run whose tools were called and
// numbered no source. Put it after the policies that choose the tools.
func (g *NoSources) Policy(_ context.Context, p *agent.StepPlan) error {
	if len(p.Tools) > 0 && p.ToolChoice != "none" {
		return nil
	}
	if !g.called(p.Steps) || g.Count() > 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.noted {
		return nil
	}
	g.noted = true
	g.Write(Unverified(g.Sink, g.Lang, !g.NotWeb, g.failure(), ""))
	p.Messages = append(p.Messages, llm.Message{Role: llm.RoleUser, Content: NoSourcesInstruction})
	return nil
}

// Mark returns the finished answer with the note in front when the run
// called tools, numbered no source and was not noted while it ran (the
// model answered in a step that still offered tools); it emits the
// status then. text is returned as it is otherwise.
func (g *NoSources) Mark(out *agent.Outcome, text string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.noted || out == nil || !g.called(out.Steps) || g.Count() > 0 {
		return text
	}
	g.noted = true
	return Unverified(g.Sink, g.Lang, !g.NotWeb, g.failure(), text)
}

func (g *NoSources) failure() error {
	if g.Failure == nil {
		return nil
	}
	return g.Failure()
}

// Noted reports whether the answer was marked as resting on no source.
func (g *NoSources) Noted() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.noted
}

// called reports whether the steps called a tool that numbers sources.
func (g *NoSources) called(steps []agent.Step) bool {
	for _, s := range steps {
		for _, c := range s.Calls {
			if g.Citing == nil || g.Citing(c.Name) {
				return true
			}
		}
	}
	return false
}
