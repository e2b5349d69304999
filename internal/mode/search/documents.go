package search

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/spaces"
	"github.com/sova-ai/sova/internal/tools"
)

// WithDocuments lets the search pipeline search document spaces: when a
// request names spaces, the best topK passages are found alongside the
// web search and given to the answer as sources next to the pages read.
func (s *Mode) WithDocuments(d tools.DocumentSearcher, topK int) *Mode {
	s.docs, s.docsTopK = d, max(topK, 1)
	return s
}

// SearchesDocuments implements mode.DocumentAware.
func (s *Mode) SearchesDocuments() bool { return s.docs != nil }

// docStep is what the stored message keeps of a document search.
type docStep struct {
	Query    string   `json:"query"`
	Spaces   []string `json:"spaces"`
	Passages []string `json:"passages,omitempty"` // passage URLs
	Error    string   `json:"error,omitempty"`
}

// documentSearch is a document search running beside the web search.
type documentSearch struct {
	done  chan struct{}
	pages []readPage
	step  *docStep
}

// searchDocuments starts searching the request's spaces for query; wait
// returns the passages. With no spaces (or no searcher) it finds nothing.
func (s *Mode) searchDocuments(ctx context.Context, sink event.Sink, in mode.Input, query string) *documentSearch {
	d := &documentSearch{done: make(chan struct{})}
	if s.docs == nil || len(in.Spaces) == 0 {
		close(d.done)
		return d
	}
	d.step = &docStep{Query: query, Spaces: in.Spaces}
	mode.Status(sink, "documents", fmt.Sprintf("Searching %d document space(s)", len(in.Spaces)), query)
	go func() {
		defer close(d.done)
		hits, err := s.docs.Search(ctx, in.UserID, in.Spaces, query, s.docsTopK)
		if err != nil {
			d.step.Error = err.Error()
			if ctx.Err() == nil {
				mode.Status(sink, "documents", "Searching the documents failed", err.Error())
			}
			return
		}
		for _, h := range hits {
			src := tools.PassageSource(h)
			d.step.Passages = append(d.step.Passages, h.URL)
			sink.Emit(event.Event{Type: event.TypeSource, Time: time.Now(), Source: &src})
			d.pages = append(d.pages, readPage{source: src, summary: passageText(h)})
		}
		mode.Status(sink, "documents", fmt.Sprintf("%d passages found in the documents", len(hits)), "")
	}()
	return d
}

// wait returns the passages found and records the search in steps. It may
// be called more than once.
func (d *documentSearch) wait(steps *searchSteps) []readPage {
	<-d.done
	if steps != nil && d.step != nil {
		steps.Documents = d.step
	}
	return d.pages
}

// passageText is a passage as the model is shown it: where it comes from,
// then its text.
func passageText(h spaces.Hit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "From the person's own document %q", h.Document)
	if h.SpaceName != "" {
		fmt.Fprintf(&b, " (space %q)", h.SpaceName)
	}
	fmt.Fprintf(&b, ", %s:\n%s", h.Position(), h.Text)
	return b.String()
}
