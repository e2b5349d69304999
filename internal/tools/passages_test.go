package tools_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/tools"
)

// TestRetrieveReadsPassagesForTheQuestion: a page longer than the budget
// reaches the summariser as the passages that match the run's question
// and queries, and its source names the section read.
func TestRetrieveReadsPassagesForTheQuestion(t *testing.T) {
	var paras []string
	for i := range 30 {
		paras = append(paras, fmt.Sprintf("Paragraph %d tells of harbours, ships and the weather on the coast in summer and winter.", i))
	}
	paras = append(paras, "## Lighthouse keepers", "The last lighthouse keeper left the island in 1987.")
	md := strings.Join(paras, "\n\n")
	page := &fetch.Page{Title: "The coast", Truncated: true}
	full := md
	page.Markdown = full[:500]
	page.Content, page.Budget = full, 500

	reader := &fakeReader{pages: map[string]*fetch.Page{"https://site1.example.com/p": page}}
	run := tools.NewRun(tools.Providers{Search: &fakeSearch{}, Reader: reader}, nil)
	run.SetQuestion("When did the island lose its keeper?")
	if _, err := run.Search(context.Background(), tools.Query{Text: "lighthouse keeper island", Results: 3}); err != nil {
		t.Fatal(err)
	}
	if f := run.Focus(); !slices.Equal(f, []string{"When did the island lose its keeper?", "lighthouse keeper island"}) {
		t.Errorf("focus %q", f)
	}
	var seen string
	rt := tools.Retrieve(run, tools.RetrieveOptions{Summarise: func(_ context.Context, _, markdown string) (string, error) {
		seen = markdown
		return "summary", nil
	}})
	_ = call(t, rt, `{"urls":["https://site1.example.com/p"]}`)
	if !strings.Contains(seen, "left the island in 1987") || len([]rune(seen)) > 500 {
		t.Errorf("the summariser saw %d characters:\n%s", len([]rune(seen)), seen)
	}
	src := run.Pages().Sources()
	if len(src) != 1 || !slices.Equal(src[0].Passages, []string{"Lighthouse keepers"}) {
		t.Errorf("sources %+v", src)
	}
}
