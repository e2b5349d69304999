package extreme

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/report"
)

// Run files of the report.
const (
	fileReport    = "report.md"
	fileReportPDF = "report.pdf"
)

// answer writes the final answer from the research (seed 000 §2.1, stage
// 3: sources de-duplicated by URL, 3000 characters each, the charts), its
// citations checked as it streams, every chart placed; then keeps it as
// the run's report. notes are the research agent's summary.
func (s *session) answer(ctx context.Context, notes string) (*mode.Result, error) {
	mode.Status(s.sink, "answer", "Writing the answer", fmt.Sprintf("%d sources, %d code cells", len(s.sources), len(s.cells)))
	charts := s.allCharts()
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: s.answerPrompt(len(charts) > 0, s.withdrawn) + "\n\n" + agent.UntrustedRule}}
	msgs = append(msgs, mode.LastMessages(s.in.History, s.cfg.HistoryLimit)...)
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: s.researchText(notes)})

	var text strings.Builder
	write := func(piece string) {
		if piece != "" {
			text.WriteString(piece)
			s.sink.Emit(mode.TextDelta(piece))
		}
	}
	if s.cite.Count() == 0 {
		// Nothing was found to read (search down, a filter that emptied
		// it): the answer, its report and PDF say so first, and the model
		// is told there is nothing to cite.
		write(mode.Unverified(s.sink, s.lang, true, s.read.SearchFailure(), ""))
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: mode.NoSourcesInstruction})
	}
	temp := s.cfg.Temperature
	resp, err := s.m.model.Stream(ctx, llm.Request{Messages: msgs, Temperature: &temp, MaxTokens: s.cfg.MaxTokens}, func(d string) {
		write(s.cite.Write(d))
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("extreme: writing the answer: %w", err)
	}
	write(s.cite.Flush())
	// A chart the answer did not place goes at its end: what the code
	// drew is part of the answer.
	var missing []Chart
	for _, c := range charts {
		if !strings.Contains(text.String(), c.URL) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "\n\n## %s\n", chartsHeading(s.lang.Code))
		for _, c := range missing {
			fmt.Fprintf(&b, "\n![%s](%s)\n", markdownLabel(c.Title), c.URL)
		}
		write(b.String())
	}

	res := &mode.Result{
		Text: text.String(), Sources: s.cite.Cited(), Model: resp.Model, FinishReason: mode.FinishReason(resp.FinishReason),
	}
	// Written once: a run continued after this shows the answer as it is.
	if err := s.saveCheckpoint(ctx, phaseDone, nil, nil, notes,
		&savedAnswer{Text: res.Text, Sources: res.Sources, Model: res.Model, FinishReason: res.FinishReason}); err != nil {
		return nil, err
	}
	return s.result(ctx, res), nil
}

// result completes the answer with the record of the parts and keeps it
// as the run's report.
func (s *session) result(ctx context.Context, res *mode.Result) *mode.Result {
	if steps, err := json.Marshal(record{Parts: s.parts.record(), Withdrawn: s.withdrawn}); err == nil {
		res.Steps = steps
	}
	res.Report = s.report(res)
	s.keepReport(ctx, res.Report)
	return res
}

// allCharts lists the charts kept, in the order they were drawn.
func (s *session) allCharts() []Chart {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Chart
	for _, c := range s.cells {
		for _, ch := range c.charts {
			if ch.URL != "" {
				out = append(out, ch)
			}
		}
	}
	return out
}

// researchText is what the answer is written from: the question, the
// plan, the numbered sources with what was read of them, the code cells
// with their output and charts, and the agent's own summary, within
// ContextChars.
func (s *session) researchText(notes string) string {
	s.mu.Lock()
	sources := append([]*found(nil), s.sources...)
	cells := append([]cell(nil), s.cells...)
	s.mu.Unlock()

	var b strings.Builder
	fmt.Fprintf(&b, "Question: %s\n\nResearch plan:\n", s.in.Question)
	writePlan(&b, s.themes)

	var cb strings.Builder
	if len(cells) > 0 {
		cb.WriteString("\nCode cells:\n")
		for i, c := range cells {
			fmt.Fprintf(&cb, "\n### Cell %d: %s (exit status %d)\nOutput:\n%s\n", i+1, c.title, c.exit, agent.Untrusted("code output", mode.Clip(c.stdout, 3000)))
			if strings.TrimSpace(c.stderr) != "" {
				fmt.Fprintf(&cb, "Errors:\n%s\n", agent.Untrusted("code errors", mode.Clip(c.stderr, 1000)))
			}
			for _, ch := range c.charts {
				if ch.URL != "" {
					fmt.Fprintf(&cb, "Chart: ![%s](%s)\n", markdownLabel(ch.Title), ch.URL)
				}
			}
		}
	}
	if notes != "" {
		// Written from what the agent read: marked as data like it.
		notes = "\nThe research agent's summary:\n" + agent.Untrusted("research notes", mode.Clip(notes, 3000)) + "\n"
	}

	b.WriteString("\nSources:\n")
	if len(sources) == 0 {
		b.WriteString("(none were found)\n")
	}
	budget := s.cfg.ContextChars - b.Len() - cb.Len() - len(notes)
	per := s.cfg.ContentChars
	if len(sources) > 0 && budget/len(sources) < per {
		per = max(budget/len(sources), 200)
	}
	for _, f := range sources {
		fmt.Fprintf(&b, "\n[%d] %s — %s\n%s\n", f.n, f.title, f.url, agent.Untrusted(f.url, mode.Clip(f.text, per)))
	}
	b.WriteString(cb.String())
	b.WriteString(notes)
	return b.String()
}

// report is the answer as a report: the question as its title, the
// answer with its charts, the cited sources.
func (s *session) report(res *mode.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n", strings.Join(strings.Fields(s.in.Question), " "), strings.TrimSpace(res.Text))
	if len(res.Sources) > 0 {
		fmt.Fprintf(&b, "\n## %s\n\n", sourcesHeading(s.lang.Code))
		for _, src := range res.Sources {
			title := src.Title
			if title == "" {
				title = src.URL
			}
			fmt.Fprintf(&b, "%d. [%s](%s)\n", src.Number, markdownLabel(title), src.URL)
		}
	}
	return b.String()
}

// keepReport writes the report as run files, Markdown and PDF with the
// charts embedded. The run completes without them when they cannot be
// written (the answer is kept with the run either way).
func (s *session) keepReport(ctx context.Context, md string) {
	if s.ws == nil {
		return
	}
	if err := s.ws.Write(ctx, fileReport, md); err != nil {
		mode.Status(s.sink, "report", "The report could not be kept", err.Error())
		return
	}
	var pdf bytes.Buffer
	s.mu.Lock()
	charts := s.charts
	s.mu.Unlock()
	err := report.PDF(&pdf, md, report.Options{Date: s.in.Now, Language: s.lang.Code, Images: func(dest string) ([]byte, bool) {
		b, ok := charts[dest]
		return b, ok
	}})
	if err == nil {
		err = s.ws.WriteBytes(ctx, fileReportPDF, "application/pdf", pdf.Bytes())
	}
	if err != nil {
		mode.Status(s.sink, "report", "The report's PDF could not be kept", err.Error())
	}
}

// markdownLabel makes text safe inside a Markdown link's brackets.
func markdownLabel(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("[", "(", "]", ")", "\\", "/").Replace(s)
}

func chartsHeading(lang string) string {
	if lang == "ru" {
		return "Графики"
	}
	return "Charts"
}

func sourcesHeading(lang string) string {
	if lang == "ru" {
		return "Источники"
	}
	return "Sources"
}
