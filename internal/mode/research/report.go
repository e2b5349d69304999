package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/cite"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
)

// maxReportAttempts bounds the report calls: the first and the re-asks for
// a report that came out short.
const maxReportAttempts = 3

// report writes the final report (generate_final_report_enhanced_node):
// from draft_report.md, or from all findings when the draft is short; a
// structured FinalReport, re-asked while shorter than MinReportChars; then
// Markdown whose citations are checked against the pages the run read,
// with a numbered source list.
func (s *session) report(ctx context.Context, findings string) (*mode.Result, error) {
	status(s.sink, "report", "Writing the final report", "")
	draft, err := s.ws.Read(ctx, fileDraft)
	if err != nil && !errors.Is(err, mode.ErrNoFile) {
		return nil, fmt.Errorf("reading %s: %w", fileDraft, err)
	}
	draft = strings.TrimSpace(draft)
	fromDraft := runeLen(draft) >= s.cfg.MinDraftChars
	if !fromDraft {
		status(s.sink, "report", "Writing the report from all findings", fmt.Sprintf("the draft has %d characters", runeLen(draft)))
	}
	msgs := s.reportMessages(ctx, draft, fromDraft, findings)

	var (
		best     *FinalReport
		bestBody string
		model    = s.r.model.ModelName()
		finish   = event.FinishStop
		attempts int
	)
	for attempts < maxReportAttempts {
		attempts++
		rep, resp, err := llm.Structured[FinalReport](ctx, s.r.model, llm.Request{
			Messages: msgs, Temperature: s.temperature(), MaxTokens: s.cfg.MaxTokens,
		}, llm.WithSchemaName("FinalReport"))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			status(s.sink, "report", "The model could not write a structured report", err.Error())
			break
		}
		body := renderReport(rep, s.lang, s.question)
		if best == nil || runeLen(body) > runeLen(bestBody) {
			r := rep
			best, bestBody, model = &r, body, resp.Model
			if resp.FinishReason == "length" {
				finish = event.FinishLength
			} else {
				finish = event.FinishStop
			}
		}
		if n := runeLen(body); n >= s.cfg.MinReportChars {
			break
		} else if attempts < maxReportAttempts {
			status(s.sink, "report", fmt.Sprintf("The report is too short (%d characters, at least %d); asking for a fuller one", n, s.cfg.MinReportChars), "")
			raw, _ := json.Marshal(rep)
			msgs = append(msgs,
				llm.Message{Role: llm.RoleAssistant, Content: string(raw)},
				llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf(
					"This report has %d characters; it must have at least %d. Expand it from the material: more detail, figures, dates and explanation in every section, the summary and the conclusion. Reply with the whole JSON object again.",
					n, s.cfg.MinReportChars)},
			)
		}
	}
	if best == nil {
		// The report is guaranteed (seed 001 §4): without a structured one,
		// the material itself is the report.
		bestBody = s.fallbackReport(draft, fromDraft, findings)
	}
	w := &writtenReport{Body: bestBody, Model: model, Finish: finish, Attempts: attempts, FromDraft: fromDraft}
	if best != nil {
		w.Sources = best.Sources
	}
	// Kept before it streams: a run continued after this streams the same
	// report, and the run engine leaves out what the client had of it.
	s.mu.Lock()
	s.written = w
	s.mu.Unlock()
	if err := s.saveCheckpoint(ctx, phaseWritten); err != nil {
		return nil, err
	}
	return s.publish(ctx, w)
}

// writtenReport is the report as the model wrote it, before its
// citations are checked: what a checkpoint keeps of it.
type writtenReport struct {
	Body      string   `json:"body"`
	Sources   []string `json:"sources,omitempty"` // the URLs the model named
	Model     string   `json:"model,omitempty"`
	Finish    string   `json:"finish,omitempty"`
	Attempts  int      `json:"attempts"`
	FromDraft bool     `json:"fromDraft,omitempty"`
}

// publish streams a written report with its citations checked against
// the pages the run read and its source list, and keeps it.
func (s *session) publish(ctx context.Context, w *writtenReport) (*mode.Result, error) {
	bestBody, model, finish, attempts, fromDraft := w.Body, w.Model, w.Finish, w.Attempts, w.FromDraft

	// Citations: only pages the run read, renumbered in order of use.
	read := s.pages.Sources()
	filter := cite.NewFilter(read, func(src sova.Source) {
		s.sink.Emit(event.Event{Type: event.TypeSource, Time: time.Now(), Source: &src})
	})
	var text strings.Builder
	if s.pages.Count() == 0 {
		// The run read nothing (search down, every page refused): the
		// report is the model's own knowledge, and it says so first.
		note := mode.Unverified(s.sink, s.lang, s.tools.Rounds() > 0, s.tools.SearchFailure(), "")
		text.WriteString(note)
		s.sink.Emit(event.Event{Type: event.TypeTextDelta, Time: time.Now(), Text: note})
	}
	for _, para := range strings.SplitAfter(bestBody, "\n\n") {
		if out := filter.Write(para); out != "" {
			text.WriteString(out)
			s.sink.Emit(event.Event{Type: event.TypeTextDelta, Time: time.Now(), Text: out})
		}
	}
	if out := filter.Flush(); out != "" {
		text.WriteString(out)
		s.sink.Emit(event.Event{Type: event.TypeTextDelta, Time: time.Now(), Text: out})
	}
	sources := filter.Cited()
	if len(sources) == 0 {
		// No inline citation survived; the pages the model named as its
		// sources are listed if the run read them.
		for _, u := range w.Sources {
			if p, ok := s.pages.Lookup(u); ok {
				src := p.Source
				src.Number = len(sources) + 1
				sources = append(sources, src)
				s.sink.Emit(event.Event{Type: event.TypeSource, Time: time.Now(), Source: &src})
			}
		}
	}
	if list := sourceList(sources, s.lang); list != "" {
		text.WriteString(list)
		s.sink.Emit(event.Event{Type: event.TypeTextDelta, Time: time.Now(), Text: list})
	}
	md := text.String()
	if err := s.ws.Write(ctx, fileReport, md); err != nil {
		return nil, fmt.Errorf("writing %s: %w", fileReport, err)
	}
	status(s.sink, "report", "Report ready", fmt.Sprintf("%d characters, %d sources", runeLen(md), len(sources)))
	return &mode.Result{
		Text:         md,
		Report:       md,
		Sources:      sources,
		Model:        model,
		FinishReason: finish,
		Steps:        s.steps(fromDraft, attempts),
	}, nil
}

func (s *session) reportMessages(ctx context.Context, draft string, fromDraft bool, findings string) []llm.Message {
	sys := fmt.Sprintf(`You write the final report of a deep research project, in %s.
Structure: a title; an executive summary of 200-400 words; at least 3 sections of 300-800 words each, in Markdown, full of specifics (facts, figures, dates, names, comparisons); a conclusion of 200-400 words; and the URLs of the sources you cite.
Cite every factual claim with the numbered sources in square brackets right after it, like [1] or [2][5], using only numbers from the source list. Use only the material given; say where it is thin or sources disagree. Do not add a source list to the text: it is added for you.
The whole report should run to 2000-5000 words. Current date: %s.`, s.lang.Name, dateIn(s.in.Now, s.in.Timezone)) + mode.Personal(s.in)
	var u strings.Builder
	u.WriteString(s.context())
	if fromDraft {
		fmt.Fprintf(&u, "\nDraft report by the research supervisor (your primary material):\n%s\n", draft)
	} else {
		fmt.Fprintf(&u, "\nFindings of the research agents:\n%s\n", findings)
		if draft != "" {
			fmt.Fprintf(&u, "\nThe supervisor's short draft:\n%s\n", draft)
		}
	}
	if ins := s.insights(ctx); ins != "" {
		fmt.Fprintf(&u, "\nKey insights:\n%s\n", ins)
	}
	u.WriteString("\nNumbered sources (pages the research read):\n")
	for _, p := range s.pages.All() {
		fmt.Fprintf(&u, "[%d] %s — %s\n", p.N, p.Source.Title, p.Source.URL)
		if p.Summary != "" {
			fmt.Fprintf(&u, "    %s\n", clip(strings.Join(strings.Fields(p.Summary), " "), 300))
		}
	}
	return []llm.Message{{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: u.String()}}
}

// headings are the report's fixed headings in the person's language.
type headings struct{ summary, conclusion, sources string }

func headingsFor(l lang.Language) headings {
	if l == lang.Russian {
		return headings{"Краткое резюме", "Заключение", "Источники"}
	}
	return headings{"Executive summary", "Conclusion", "Sources"}
}

// renderReport turns a FinalReport into Markdown (without the source list).
func renderReport(r FinalReport, l lang.Language, question string) string {
	h := headingsFor(l)
	var b strings.Builder
	title := oneLine(r.Title)
	if title == "" {
		title = oneLine(question)
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "## %s\n\n%s\n\n", h.summary, demote(r.ExecutiveSummary))
	for _, sec := range r.Sections {
		if strings.TrimSpace(sec.Title) == "" || strings.TrimSpace(sec.Content) == "" {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", oneLine(sec.Title), demote(sec.Content))
	}
	fmt.Fprintf(&b, "## %s\n\n%s\n\n", h.conclusion, demote(r.Conclusion))
	return b.String()
}

var headingRE = regexp.MustCompile(`(?m)^(#{1,2})(\s)`)

// demote pushes headings inside a section below the section's own level,
// and trims the text.
func demote(s string) string {
	return headingRE.ReplaceAllString(strings.TrimSpace(s), "###$2")
}

func oneLine(s string) string {
	return strings.TrimLeft(strings.Join(strings.Fields(s), " "), "# ")
}

// sourceList renders the numbered source list.
func sourceList(sources []sova.Source, l lang.Language) string {
	if len(sources) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", headingsFor(l).sources)
	for _, src := range sources {
		title := strings.NewReplacer("[", "(", "]", ")").Replace(oneLine(src.Title))
		if title == "" {
			title = src.URL
		}
		fmt.Fprintf(&b, "%d. [%s](%s)\n", src.Number, title, src.URL)
	}
	return b.String()
}

// fallbackReport is the report when no structured one could be written:
// the draft or the findings under the question.
func (s *session) fallbackReport(draft string, fromDraft bool, findings string) string {
	body := findings
	if fromDraft || body == "" {
		body = draft
	}
	if body == "" {
		body = s.initial
	}
	return fmt.Sprintf("# %s\n\n%s\n\n", oneLine(s.question), demote(body))
}

// stepsRecord is what the stored message keeps of the run's work.
type stepsRecord struct {
	Plan            PlanData       `json:"plan"`
	Agents          []AgentData    `json:"agents"`
	Decisions       []DecisionData `json:"decisions"`
	Notes           int            `json:"notes"`
	PagesRead       int            `json:"pagesRead"`
	SupervisorCalls int            `json:"supervisorCalls"`
	FromDraft       bool           `json:"fromDraft"`
	ReportAttempts  int            `json:"reportAttempts"`
}

func (s *session) steps(fromDraft bool, attempts int) json.RawMessage {
	rec := stepsRecord{FromDraft: fromDraft, ReportAttempts: attempts, PagesRead: s.pages.Count(), Agents: []AgentData{}}
	s.mu.Lock()
	rec.Plan = PlanData{Goal: s.plan.Goal, Revision: s.planRevision}
	for _, th := range s.plan.Themes {
		td := PlanThemeData{Title: th.Title, Description: th.Description}
		for _, t := range th.Tasks {
			td.Tasks = append(td.Tasks, PlanTaskData(t))
		}
		rec.Plan.Themes = append(rec.Plan.Themes, td)
	}
	rec.Decisions = append([]DecisionData{}, s.decisions...)
	s.mu.Unlock()
	for _, a := range s.board.agents {
		rec.Agents = append(rec.Agents, s.board.snapshot(a))
	}
	rec.Notes = len(s.board.allNotes())
	rec.SupervisorCalls = s.board.callNumber()
	raw, _ := json.Marshal(rec)
	return raw
}

func runeLen(s string) int { return len([]rune(s)) }
