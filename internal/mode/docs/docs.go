// Package docs is the docs mode (seed 003): an agent over the person's
// document spaces, optionally with web search, that answers with citations
// of the passages it found.
package docs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/tools"
)

// Config tunes the docs mode (seed 003).
type Config struct {
	MaxDocQueries int     // SOVA_DOCS_MAX_DOC_QUERIES: search_documents calls per run
	MaxWebQueries int     // SOVA_DOCS_MAX_WEB_QUERIES: web_search calls per run
	WebSearch     bool    // SOVA_DOCS_WEB_SEARCH: web_search offered unless the request says otherwise
	DocResults    int     // SOVA_DOCS_RESULTS: passages per search_documents call
	WebResults    int     // results per web_search call
	MaxSteps      int     // SOVA_DOCS_MAX_STEPS (10)
	Temperature   float64 // SOVA_DOCS_TEMPERATURE (0.6)
	MaxTokens     int
	HistoryLimit  int
	UserName      string // SOVA_USER_NAME: how the person is addressed
	BlockList     search.BlockList
}

// Mode is the search agent over a person's document spaces, optionally
// with web search (seed 003): the model searches with tools, step after
// step, and writes a cited answer that streams as it is written. Sources
// are parsed from the tool results.
type Mode struct {
	cfg    Config
	model  *llm.Client
	repair *llm.Client // fixes malformed tool calls
	docs   tools.DocumentSearcher
	web    search.Provider // nil: no web search
}

// New returns the docs mode. web may be nil.
func New(cfg Config, model, repair *llm.Client, docs tools.DocumentSearcher, web search.Provider) *Mode {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = agent.DefaultMaxSteps
	}
	cfg.DocResults = max(cfg.DocResults, 1)
	cfg.MaxDocQueries = max(cfg.MaxDocQueries, 1)
	cfg.WebResults = max(cfg.WebResults, 1)
	return &Mode{cfg: cfg, model: model, repair: repair, docs: docs, web: web}
}

// ID implements mode.Mode.
func (d *Mode) ID() string { return "docs" }

// Description implements mode.Mode.
func (d *Mode) Description() string {
	return "Research over your own documents: an agent searches your document spaces (and the web when enabled) and answers with citations of the passages."
}

// SearchesDocuments implements mode.DocumentAware.
func (d *Mode) SearchesDocuments() bool { return true }

// docsSteps is what the stored message keeps of a run: every step with its
// tool calls and results, and the sources parsed from the results.
type docsSteps struct {
	Steps        []agent.Step    `json:"steps"`
	ToolCalls    []agent.Call    `json:"toolCalls"`
	ToolResults  []agent.Result  `json:"toolResults"`
	Sources      []ParsedSource  `json:"sources"`
	FinishReason string          `json:"finishReason,omitempty"`
	Usage        llm.Usage       `json:"usage"`
	Spaces       []docsSpaceInfo `json:"spaces"`
	WebSearch    bool            `json:"webSearch"`
}

type docsSpaceInfo struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Files int    `json:"files"`
}

// Run implements mode.Mode.
func (d *Mode) Run(ctx context.Context, in mode.Input, sink event.Sink) (*mode.Result, error) {
	language := mode.LanguageOf(in)
	spaces, err := d.spaces(ctx, in)
	if err != nil {
		return nil, err
	}
	web := d.web != nil && d.cfg.WebSearch
	if in.WebSearch != nil {
		web = d.web != nil && *in.WebSearch
	}
	// SOVA_DOCS_MAX_WEB_QUERIES=0 allows no web search: the tool is not
	// offered.
	web = web && d.cfg.MaxWebQueries > 0
	if len(spaces) == 0 && !web {
		return nil, errors.New("there are no document spaces to search: create one and add files (`sova spaces add NAME DIR`, or POST /api/spaces), or enable web search")
	}

	// Sources are numbered across all tool calls of the run, as they are
	// found; the answer's citations are checked against them while it
	// streams.
	cites := tools.NewCitations(func(src sova.Source) {
		sink.Emit(event.Event{Type: event.TypeSource, Time: time.Now(), Source: &src})
	})
	run := tools.NewRun(tools.Providers{Search: d.web, Documents: d.docs}, nil)
	ts := []agent.Tool{tools.SearchDocuments(run, tools.SearchDocumentsOptions{
		UserID: in.UserID, Spaces: spaces, Results: d.cfg.DocResults, Calls: d.cfg.MaxDocQueries, Cite: cites,
	})}
	if web {
		ts = append(ts, tools.WebSearch(run, tools.WebSearchOptions{
			Results: d.cfg.WebResults, Calls: d.cfg.MaxWebQueries, Language: language.Code, BlockList: d.cfg.BlockList,
			Format: tools.JSON, Cite: cites,
			Description: "Search the web. Returns numbered results with title, URL and content. Use only for what the documents do not cover.",
		}))
	}

	msgs := []llm.Message{{Role: llm.RoleSystem, Content: d.systemPrompt(language, web) + "\n\n" + agent.UntrustedRule + mode.Personal(in)}}
	msgs = append(msgs, mode.LastMessages(in.History, d.cfg.HistoryLimit)...)
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: d.userPrompt(in, spaces)})

	mode.Status(sink, "agent", "Searching your documents", "")
	var text strings.Builder
	// An answer after searches that found nothing says so first.
	guard := &mode.NoSources{Sink: sink, Lang: language, Count: cites.Count, NotWeb: !web, Failure: run.SearchFailure, Write: func(piece string) {
		text.WriteString(piece)
		sink.Emit(mode.TextDelta(piece))
	}}
	temp := d.cfg.Temperature
	out, runErr := agent.Run(ctx, agent.Config{
		Model: d.model, Repair: d.repair, Tools: agent.UntrustedTools("", ts), MaxSteps: d.cfg.MaxSteps,
		Temperature: &temp, MaxTokens: d.cfg.MaxTokens, Sink: sink,
		PrepareStep: agent.Policies(agent.LastStepAnswers, guard.Policy),
		OnText: func(delta string) {
			if s := cites.Write(delta); s != "" {
				text.WriteString(s)
				sink.Emit(mode.TextDelta(s))
			}
		},
	}, msgs)
	if runErr != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("docs agent: %w", runErr)
	}
	if s := cites.Flush(); s != "" {
		text.WriteString(s)
		sink.Emit(mode.TextDelta(s))
	}

	// Everything the tools returned is parsed for sources; a result that
	// cannot be parsed is skipped, never fatal (seed 003).
	outputs := make([]string, 0, len(out.Results()))
	for _, r := range out.Results() {
		if len(r.Data) > 0 { // the result as the tool gave it, not as marked for the model
			outputs = append(outputs, string(r.Data))
			continue
		}
		outputs = append(outputs, r.Output)
	}
	record := docsSteps{
		Steps: out.Steps, ToolCalls: out.Calls(), ToolResults: out.Results(),
		Sources: ParseSources(outputs), FinishReason: out.FinishReason, Usage: out.Usage, WebSearch: web,
	}
	for _, s := range spaces {
		record.Spaces = append(record.Spaces, docsSpaceInfo{ID: s.ID, Name: s.Name, Files: s.DocumentCount})
	}
	stepsJSON, err := json.Marshal(record)
	if err != nil {
		stepsJSON = nil // never fails for these types; the answer matters more
	}
	return &mode.Result{
		Text:         guard.Mark(out, text.String()),
		Sources:      cites.Cited(),
		Model:        out.Model,
		FinishReason: mode.FinishReason(out.FinishReason),
		Reasoning:    workingNotes(out.Steps),
		Steps:        stepsJSON,
	}, nil
}

// spaces returns the spaces the run searches: those the request names,
// or all of the user's.
func (d *Mode) spaces(ctx context.Context, in mode.Input) ([]sova.Space, error) {
	if d.docs == nil {
		return nil, nil
	}
	all, err := d.docs.Spaces(ctx, in.UserID)
	if err != nil {
		return nil, fmt.Errorf("listing document spaces: %w", err)
	}
	if len(in.Spaces) == 0 {
		return all, nil
	}
	byID := make(map[string]sova.Space, len(all))
	for _, s := range all {
		byID[s.ID] = s
	}
	var out []sova.Space
	for _, id := range in.Spaces {
		s, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("no document space %q", id)
		}
		out = append(out, s)
	}
	return out, nil
}

func (d *Mode) systemPrompt(language lang.Language, web bool) string {
	var b strings.Builder
	b.WriteString("You are Sova, a research assistant that answers questions from the person's own documents")
	if web {
		b.WriteString(" and, where they fall short, from the web")
	}
	b.WriteString(".\n\nSearch strategy:\n")
	fmt.Fprintf(&b, "- Start with search_documents: the documents are the primary source. Use the key terms, names and numbers of the question. You have %d document searches.\n", d.cfg.MaxDocQueries)
	b.WriteString("- If the passages are thin, search again with other wording: synonyms, a narrower or broader term, the other language of the documents (Russian or English), a name instead of a description. Do not repeat a search.\n")
	b.WriteString("- Several searches may run in one step when the question has several parts.\n")
	if web {
		fmt.Fprintf(&b, "- Use web_search only for what the documents do not cover, or for recent events. You have %d web searches.\n", d.cfg.MaxWebQueries)
	}
	b.WriteString("- Stop searching as soon as you can answer.\n\n")
	b.WriteString("Citations:\n")
	b.WriteString("- Every search result has a number n. Cite each factual sentence with the numbers of its sources in square brackets right after the claim, like [1] or [2][5].\n")
	b.WriteString("- Cite only numbers you were given. Do not write a list of sources at the end; it is added for you.\n")
	b.WriteString("- Say which document a fact comes from when it helps (\"the 2023 report says…\").\n")
	b.WriteString("- If the documents do not contain the answer, say so plainly; never invent facts or citations.\n\n")
	fmt.Fprintf(&b, "Answer in %s (the language of the question), in Markdown, complete but without padding.", language.Name)
	return b.String()
}

func (d *Mode) userPrompt(in mode.Input, spaces []sova.Space) string {
	var b strings.Builder
	b.WriteString("About me:\n")
	if name := strings.TrimSpace(d.cfg.UserName); name != "" {
		fmt.Fprintf(&b, "- Name: %s\n", name)
	}
	tz := in.Timezone
	if tz == "" {
		tz = "not given"
	}
	fmt.Fprintf(&b, "- Time zone: %s\n- Current date: %s\n\n", tz, mode.DateIn(in.Now, in.Timezone))
	if len(spaces) == 0 {
		b.WriteString("I have no document spaces yet.\n\n")
	} else {
		b.WriteString("My document spaces (search_documents searches all of these unless you name some):\n")
		for _, s := range spaces {
			fmt.Fprintf(&b, "- %q: %d files", s.Name, s.DocumentCount)
			if s.Description != "" {
				fmt.Fprintf(&b, " — %s", s.Description)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Question: %s", in.Question)
	return b.String()
}

// workingNotes is what the model wrote in the steps that called tools:
// its reasoning on the way to the answer.
func workingNotes(steps []agent.Step) string {
	var notes []string
	for _, s := range steps {
		if len(s.Calls) > 0 && strings.TrimSpace(s.Text) != "" {
			notes = append(notes, strings.TrimSpace(s.Text))
		}
	}
	return strings.Join(notes, "\n\n")
}

// ParsedSource is a source read back from a tool result.
type ParsedSource struct {
	Title   string `json:"title"`
	Content string `json:"content"`
	Source  string `json:"source"`
	Query   string `json:"query,omitempty"`
	Kind    string `json:"kind,omitempty"`
}

// ParseSources reads the sources out of tool results the way seed 003
// does: a result may wrap its value in an "output" field; a string value
// is parsed as JSON; an object with a "results" array gives one source per
// entry with its title, content, source and query. Anything that does not
// fit is skipped: a malformed result never fails the run. The result is
// never nil.
func ParseSources(outputs []string) []ParsedSource {
	out := []ParsedSource{}
	for _, o := range outputs {
		out = append(out, parseSourceValue(json.RawMessage(o), 0)...)
	}
	return out
}

func parseSourceValue(raw json.RawMessage, depth int) []ParsedSource {
	if depth > 3 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	switch x := v.(type) {
	case string:
		return parseSourceValue(json.RawMessage(x), depth+1)
	case map[string]any:
		if inner, ok := x["output"]; ok {
			b, _ := json.Marshal(inner)
			return parseSourceValue(b, depth+1)
		}
		list, ok := x["results"].([]any)
		if !ok {
			return nil
		}
		var out []ParsedSource
		for _, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				continue
			}
			str := func(k string) string { s, _ := m[k].(string); return s }
			ps := ParsedSource{Title: str("title"), Content: str("content"), Source: str("source"), Query: str("query"), Kind: str("kind")}
			if ps.Source == "" {
				ps.Source = str("url")
			}
			if ps.Source == "" && ps.Title == "" && ps.Content == "" {
				continue
			}
			out = append(out, ps)
		}
		return out
	}
	return nil
}
