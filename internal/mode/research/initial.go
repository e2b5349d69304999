package research

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/tools"
)

// initialStagePrefix marks the initial deep search's status stages, so a
// UI can tell its progress from the research's own.
const initialStagePrefix = "initial_search."

// initialSink passes the initial deep search's progress on as the
// research's: its stages prefixed, its cited sources demoted to
// candidates (the research cites on its own), its answer text held back.
// It records which pages the search read, because only those may be cited
// later.
type initialSink struct {
	out event.Sink

	mu       sync.Mutex
	read     map[string]event.Page
	maxRound int
}

func (w *initialSink) Emit(e event.Event) {
	switch e.Type {
	case event.TypeStatus:
		if e.Status == nil {
			return
		}
		st := *e.Status
		st.Stage = initialStagePrefix + st.Stage
		st.Message = "Initial search: " + st.Message
		e.Status = &st
	case event.TypeQuery:
		if e.Query != nil {
			w.mu.Lock()
			w.maxRound = max(w.maxRound, e.Query.Iteration)
			w.mu.Unlock()
		}
	case event.TypeSource:
		if e.Source == nil {
			return
		}
		src := *e.Source
		src.Number = 0
		e.Source = &src
	case event.TypePage:
		if e.Page != nil && e.Page.State == event.PageRead {
			w.mu.Lock()
			w.read[search.NormalizeURL(e.Page.URL)] = *e.Page
			w.mu.Unlock()
		}
	case event.TypeData:
	default:
		// Text is the search's own answer, which becomes context; start,
		// usage and finish belong to the research run.
		return
	}
	w.out.Emit(e)
}

// initialSearch runs the deep search for context (seed 001 §4, stage 1).
// Its failure is not the research's: the agents search on their own.
func (s *session) initialSearch(ctx context.Context) error {
	status(s.sink, "initial_search", "Running an initial deep search for context", "")
	w := &initialSink{out: s.sink, read: map[string]event.Page{}}
	// No history: the research rests on the question alone (seed 001 §4).
	res, err := s.r.searcher.Run(ctx, mode.Input{
		RunID: s.in.RunID, ChatID: s.in.ChatID, UserID: s.in.UserID, Question: s.question,
		Timezone: s.in.Timezone, Now: s.in.Now, Spaces: s.in.Spaces, WebSearch: s.in.WebSearch,
	}, w)
	w.mu.Lock()
	s.tools.SetRounds(w.maxRound)
	w.mu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if llm.IsSetupError(err) {
			return fmt.Errorf("deep_research: %w", err)
		}
		status(s.sink, "initial_search", "The initial deep search failed; researching without it", err.Error())
		return nil
	}
	// The search numbered its cited sources 1..k in its answer; those it
	// really read join the run's pages, and the answer's markers follow.
	mapping := map[int]int{}
	for _, src := range res.Sources {
		pg, ok := w.read[search.NormalizeURL(src.URL)]
		if !ok || src.Number == 0 {
			continue
		}
		if src.Title == "" {
			src.Title = pg.Title
		}
		mapping[src.Number] = s.pages.Add(src, "").N
	}
	s.initial = strings.TrimSpace(tools.RemapMarkers(res.Text, mapping))
	status(s.sink, "initial_search", "Initial deep search done", fmt.Sprintf("%d pages read", len(mapping)))
	return nil
}

// clarify asks the model whether questions to the person would change the
// research; if so the run pauses with them (seed 001 §4, stage 1).
func (s *session) clarify(ctx context.Context) (*mode.Result, error) {
	status(s.sink, "clarify", "Checking whether the request needs clarification", "")
	sys := fmt.Sprintf(`You prepare a deep research project. Decide whether the request is ambiguous enough that asking the person first would substantially change what to research (scope, time frame, region, audience, purpose).
Ask only when it matters; a clear request needs no questions. If you ask, write 1 to 3 short, specific questions in %s.
Current date: %s.`, s.lang.Name, dateIn(s.in.Now, s.in.Timezone))
	user := "Research request: " + s.question
	if s.initial != "" {
		user += "\n\nWhat an initial web search found:\n" + clip(s.initial, 3000)
	}
	check, _, err := llm.Structured[ClarificationCheck](ctx, s.r.fast, llm.Request{
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: user}},
	}, llm.WithSchemaName("ClarificationCheck"))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		status(s.sink, "clarify", "Could not decide on clarifying questions; researching as asked", err.Error())
		return nil, nil
	}
	var qs []string
	for _, q := range check.Questions {
		if q = strings.TrimSpace(q); q != "" {
			qs = append(qs, q)
		}
	}
	if !check.NeedsClarification || len(qs) == 0 {
		status(s.sink, "clarify", "No clarification needed", check.Reason)
		return nil, nil
	}
	qs = qs[:min(len(qs), 3)]
	st := pauseState{Version: 1, Question: s.question, Language: s.lang.Code, Initial: s.initial, Rounds: s.tools.Rounds(), Questions: qs}
	for _, p := range s.pages.All() {
		st.Pages = append(st.Pages, savedPage{Number: p.N, Source: p.Source, Summary: p.Summary})
	}
	state, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("deep_research: saving the state for the clarification: %w", err)
	}
	text := questionsText(s.lang, qs)
	s.sink.Emit(event.Event{Type: event.TypeTextDelta, Time: time.Now(), Text: text})
	status(s.sink, "clarify", "Waiting for your answers", "")
	return &mode.Result{
		Text:         text,
		FinishReason: event.FinishStop,
		Pause:        &mode.Pause{Questions: qs, State: state},
	}, nil
}

// questionsText shows the questions to the person in their language.
func questionsText(l lang.Language, qs []string) string {
	var b strings.Builder
	if l == lang.Russian {
		b.WriteString("Прежде чем начать исследование, уточните, пожалуйста:\n\n")
	} else {
		b.WriteString("Before I start the research, a few questions:\n\n")
	}
	for i, q := range qs {
		fmt.Fprintf(&b, "%d. %s\n", i+1, q)
	}
	if l == lang.Russian {
		b.WriteString("\nОтветьте следующим сообщением — исследование продолжится с учётом ваших ответов.")
	} else {
		b.WriteString("\nAnswer in your next message and the research will continue with your answers in mind.")
	}
	return b.String()
}
