package sgr

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sova-ai/sova"

	"golang.org/x/sync/errgroup"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/cite"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/tools"
)

// outcome is what running a tool produced.
type outcome struct {
	text     string          // for people: a short Markdown summary
	output   json.RawMessage // for UIs: the structured result
	err      string          // the tool failed (the agent is told and goes on)
	forModel string          // the tool message the model reads next
	pause    bool            // the agent waits for the person
	final    bool            // the agent has answered
}

func failed(err error) outcome {
	return outcome{err: err.Error(), forModel: "Error: " + err.Error()}
}

func jsonOf(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// title says for people what a tool call does.
func (m *Mode) title(f Function) string {
	switch a := f.Args.(type) {
	case *ClarificationArgs:
		return fmt.Sprintf("Asking %d clarifying questions", nonEmpty(a.Questions))
	case *GeneratePlanArgs:
		return "Planning: " + clip(a.ResearchGoal, 120)
	case *AdaptPlanArgs:
		return "Adapting the plan: " + clip(a.NewGoal, 120)
	case *WebSearchArgs:
		return fmt.Sprintf("Searching the web for %q", clip(a.Query, 120))
	case *ExtractArgs:
		if len(a.URLs) == 1 {
			return "Reading " + clip(a.URLs[0], 120)
		}
		return fmt.Sprintf("Reading %d pages", len(a.URLs))
	case *CreateReportArgs:
		return fmt.Sprintf("Writing the report %q", clip(a.Title, 120))
	case *FinalAnswerArgs:
		return "Answering"
	}
	return f.Tool
}

// execute runs the chosen tool.
func (m *Mode) execute(ctx context.Context, w *work, next NextStep, step int, sink event.Sink) outcome {
	switch a := next.Function.Args.(type) {
	case *ClarificationArgs:
		return m.clarify(w, a)
	case *GeneratePlanArgs:
		w.mem.Plan = &plan{Goal: strings.TrimSpace(a.ResearchGoal), Steps: trimmed(a.PlannedSteps), Strategies: trimmed(a.SearchStrategies)}
		return planOutcome("Research plan", w.mem.Plan)
	case *AdaptPlanArgs:
		p := &plan{Goal: strings.TrimSpace(a.NewGoal), Steps: trimmed(a.NextSteps), Changes: trimmed(a.PlanChanges)}
		if w.mem.Plan != nil {
			p.Strategies = w.mem.Plan.Strategies
		}
		w.mem.Plan = p
		return planOutcome("Adapted plan", p)
	case *WebSearchArgs:
		return m.webSearch(ctx, w, a, step, sink)
	case *ExtractArgs:
		return m.extract(ctx, w, a)
	case *CreateReportArgs:
		return m.createReport(w, a)
	case *FinalAnswerArgs:
		return m.finalAnswer(w, a)
	}
	return failed(fmt.Errorf("unknown tool %q", next.Function.Tool))
}

func (m *Mode) clarify(w *work, a *ClarificationArgs) outcome {
	qs := trimmed(a.Questions)
	if len(qs) > 3 {
		qs = qs[:3]
	}
	w.agent.ClarificationsUsed++
	w.mem.Questions = qs
	w.agent.Result = questionsText(w.language(), qs, trimmed(a.Assumptions))
	w.agent.ResultSources = nil
	return outcome{
		text:     fmt.Sprintf("Clarification needed: %d questions.", len(qs)),
		output:   jsonOf(map[string]any{"questions": qs, "unclear_terms": trimmed(a.UnclearTerms), "assumptions": trimmed(a.Assumptions)}),
		forModel: "The questions were sent to the person; their answers follow in the next message.",
		pause:    true,
	}
}

func planOutcome(head string, p *plan) outcome {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** — %s\n", head, p.Goal)
	for i, s := range p.Steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	text := strings.TrimRight(b.String(), "\n")
	return outcome{text: text, output: jsonOf(p), forModel: text + "\n\nThe plan is saved."}
}

func (m *Mode) webSearch(ctx context.Context, w *work, a *WebSearchArgs, step int, sink event.Sink) outcome {
	q := strings.TrimSpace(a.Query)
	n := a.MaxResults
	if n <= 0 {
		n = 5
	}
	n = min(n, m.cfg.MaxResults)
	w.agent.SearchesUsed++
	results, err := w.tools.Search(ctx, tools.Query{Text: q, Results: n, Language: w.mem.Language, BlockList: m.cfg.BlockList, Round: step})
	if err != nil {
		return failed(fmt.Errorf("web search for %q failed: %w", q, err))
	}
	count := len(results)

	type item struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Snippet string `json:"snippet,omitempty"`
	}
	items := make([]item, 0, count)
	var people, model strings.Builder
	fmt.Fprintf(&people, "Found %d results for %q", count, q)
	var found strings.Builder // what the results say: data, marked as such
	if count == 0 {
		model.WriteString("(none; try other words)\n")
	}
	for i, r := range results {
		src := w.addSource(sova.Source{URL: r.URL, Title: r.Title, Snippet: clip(r.Snippet, 300), Kind: sova.SourceWeb, Published: r.Published, Favicon: r.Favicon})
		sink.Emit(event.Event{Type: event.TypeSource, Time: time.Now(), Source: &src})
		items = append(items, item{Title: r.Title, URL: r.URL, Snippet: clip(r.Snippet, 300)})
		if i == 0 {
			people.WriteString(":")
		}
		fmt.Fprintf(&people, "\n- [%s](%s)", mdText(cmpOr(r.Title, r.URL)), r.URL)
		fmt.Fprintf(&found, "%d. %s\n   URL: %s\n", i+1, r.Title, r.URL)
		if r.Published != "" {
			fmt.Fprintf(&found, "   Published: %s\n", r.Published)
		}
		if s := clip(r.Snippet, 400); s != "" {
			fmt.Fprintf(&found, "   %s\n", s)
		}
	}
	if count > 0 {
		model.WriteString(agent.Untrusted("web search: "+q, strings.TrimRight(found.String(), "\n")))
		model.WriteString("\n\nThese are snippets: read pages with extract_page_content to use and cite them.")
	}
	return outcome{text: people.String(), output: jsonOf(map[string]any{"query": q, "results": items}), forModel: fmt.Sprintf("Search results for %q:\n", q) + model.String()}
}

func (m *Mode) extract(ctx context.Context, w *work, a *ExtractArgs) outcome {
	var urls []string
	seen := map[string]bool{}
	for _, u := range a.URLs {
		u = strings.TrimSpace(u)
		if k := search.NormalizeURL(u); !seen[k] {
			seen[k] = true
			urls = append(urls, u)
		}
	}
	if len(urls) > maxURLs {
		urls = urls[:maxURLs]
	}
	pages := make([]*fetch.Page, len(urls))
	errs := make([]error, len(urls))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(m.cfg.Concurrency)
	for i, u := range urls {
		g.Go(func() error {
			p, err := w.tools.Read(gctx, u, w.titleOf(u))
			if err != nil {
				errs[i] = err
				return nil // one page must not stop the others
			}
			pages[i] = p
			return nil
		})
	}
	_ = g.Wait()
	if ctx.Err() != nil {
		return failed(context.Cause(ctx))
	}

	type pageOut struct {
		Number int    `json:"number,omitempty"`
		URL    string `json:"url"`
		Title  string `json:"title,omitempty"`
		Chars  int    `json:"chars,omitempty"`
		Error  string `json:"error,omitempty"`
	}
	var (
		out           []pageOut
		people, model strings.Builder
		ok            int
	)
	for i, u := range urls {
		if errs[i] != nil {
			out = append(out, pageOut{URL: u, Error: errs[i].Error()})
			fmt.Fprintf(&people, "- could not read %s: %s\n", u, clip(errs[i].Error(), 200))
			fmt.Fprintf(&model, "Could not read %s: %s\n\n", u, errs[i].Error())
			continue
		}
		p := pages[i]
		// A long page is cut to the passages that match the question and
		// the searches so far.
		ex := p.Excerpt(w.tools.Focus()...)
		src := w.markRead(u, p, ex.Sections)
		ok++
		out = append(out, pageOut{Number: src.Number, URL: src.URL, Title: src.Title, Chars: p.Chars})
		fmt.Fprintf(&people, "- [%d] [%s](%s) — %d characters\n", src.Number, mdText(cmpOr(src.Title, src.URL)), src.URL, p.Chars)
		var page strings.Builder
		fmt.Fprintf(&page, "%s\nURL: %s\n", src.Title, src.URL)
		if p.Published != "" {
			fmt.Fprintf(&page, "Published: %s\n", p.Published)
		}
		fmt.Fprintf(&page, "\n%s", strings.TrimSpace(ex.Markdown))
		fmt.Fprintf(&model, "[%d] %s\n\n", src.Number, agent.Untrusted(src.URL, page.String()))
	}
	head := fmt.Sprintf("Read %d of %d pages:\n", ok, len(urls))
	o := outcome{text: head + strings.TrimRight(people.String(), "\n"), output: jsonOf(map[string]any{"pages": out}),
		forModel: strings.TrimSpace(model.String())}
	if ok == 0 {
		o.err = "could not read any of the pages"
		o.forModel += "\n\nNo page could be read; choose other pages or search again."
	} else {
		o.forModel += "\n\nCite these pages by their numbers in square brackets."
	}
	return o
}

func (m *Mode) createReport(w *work, a *CreateReportArgs) outcome {
	l := w.language()
	content, cited := cite.Apply(strings.TrimSpace(a.Content), w.read())
	title := strings.TrimSpace(a.Title)
	text := content
	if title != "" && !strings.HasPrefix(content, "#") {
		text = "# " + title + "\n\n" + content
	}
	text += sourcesSection(l, cited)
	w.mem.Report = &report{Title: title, Text: text, Sources: cited, Confidence: a.Confidence}
	words := len(strings.Fields(content))
	summary := fmt.Sprintf("Report %q written: %d words, %d sources cited, confidence %s.", title, words, len(cited), cmpOr(a.Confidence, "not given"))
	forModel := summary + " It will be given to the person. Finish with final_answer: a short summary of the findings."
	if len(cited) == 0 && len(w.read()) > 0 {
		forModel += " Note: the report cites none of the pages read."
	}
	return outcome{
		text:     summary,
		output:   jsonOf(map[string]any{"title": title, "words": words, "cited": len(cited), "confidence": a.Confidence}),
		forModel: forModel,
	}
}

func (m *Mode) finalAnswer(w *work, a *FinalAnswerArgs) outcome {
	answer, cited := cite.Apply(strings.TrimSpace(a.Answer), w.read())
	state := sova.AgentCompleted
	if a.Status == "failed" {
		state = sova.AgentFailed
		w.agent.Error = "the agent could not accomplish the task"
	}
	o := outcome{output: jsonOf(map[string]any{"status": cmpOr(a.Status, "completed"), "completed_steps": trimmed(a.CompletedSteps)}),
		forModel: "The task is finished.", final: true}
	if r := w.mem.Report; r != nil {
		// The report is the answer; the final answer sums it up.
		m.complete(w, state, r.Text, r.Sources)
		o.text = answer
	} else {
		// The answer itself follows as the answer text; nothing to add.
		m.complete(w, state, answer, cited)
	}
	return o
}

// addSource records a search result, once per normalised URL, and returns
// it as kept (with its number when the page was read already).
func (w *work) addSource(s sova.Source) sova.Source {
	key := search.NormalizeURL(s.URL)
	for _, have := range w.agent.Sources {
		if search.NormalizeURL(have.URL) == key {
			return have
		}
	}
	w.agent.Sources = append(w.agent.Sources, s)
	return s
}

// markRead numbers a page that was read (once: a page read again keeps its
// number) and returns its source.
func (w *work) markRead(url string, p *fetch.Page, passages []string) sova.Source {
	key := search.NormalizeURL(url)
	next := len(w.read()) + 1
	for i, have := range w.agent.Sources {
		if search.NormalizeURL(have.URL) != key {
			continue
		}
		if have.Number == 0 {
			w.agent.Sources[i].Number = next
		}
		if p.Title != "" {
			w.agent.Sources[i].Title = p.Title
		}
		if w.agent.Sources[i].Published == "" {
			w.agent.Sources[i].Published = p.Published
		}
		if len(passages) > 0 {
			w.agent.Sources[i].Passages = passages
		}
		return w.agent.Sources[i]
	}
	s := sova.Source{Number: next, URL: url, Title: p.Title, Kind: sova.SourceWeb, Published: p.Published, Passages: passages}
	w.agent.Sources = append(w.agent.Sources, s)
	return s
}

// titleOf is the title a search gave url, if any.
func (w *work) titleOf(url string) string {
	key := search.NormalizeURL(url)
	for _, s := range w.agent.Sources {
		if search.NormalizeURL(s.URL) == key {
			return s.Title
		}
	}
	return ""
}

func trimmed(list []string) []string {
	var out []string
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func cmpOr(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

// mdText keeps link text from closing the Markdown link early.
func mdText(s string) string {
	s = strings.NewReplacer("[", "(", "]", ")", "\n", " ").Replace(s)
	if utf8.RuneCountInString(s) > 120 {
		s = clip(s, 120)
	}
	return s
}
