package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/sovatest"
)

// longArticle has its answer under a subheading more than 3,000
// characters into the text.
func longArticle() sovatest.Article {
	var paras []string
	topics := []string{"farm prices", "railway traffic", "steel output", "textile mills", "coal mining", "shipping rates"}
	for i := 0; i < 14; i++ {
		t := topics[i%len(topics)]
		paras = append(paras, fmt.Sprintf("Part %d. Reports on %s filled the newspapers of the decade. Economists compared the figures for %s "+
			"region by region and year by year, and found that the recovery of %s was uneven across the country, faster in the "+
			"east than in the west, and slower for small firms than for large ones.", i+1, t, t, t))
	}
	paras = append(paras, "## The gold clause cases",
		"In February 1935 the Supreme Court upheld, five votes to four, the abrogation of gold clauses in private contracts.")
	for i := 0; i < 4; i++ {
		paras = append(paras, fmt.Sprintf("Epilogue %d. Later historians returned to these statistics many times.", i+1))
	}
	return sovatest.Article{Slug: "currency-decade", Title: "Money and markets in the 1930s", Body: strings.Join(paras, "\n\n")}
}

func TestSearchReadsPassagesPastTheBudget(t *testing.T) {
	art := longArticle()
	if i := strings.Index(art.Body, "upheld, five votes"); i < 3500 {
		t.Fatalf("the answer is only %d characters in", i)
	}
	site := sovatest.NewSite(t, []sovatest.Article{art})
	e := newSearchEnv(t)
	e.site, e.sx = site, sovatest.NewSearXNG(t, site, []sovatest.Article{art})
	e.cfg.ScrapeTopN = 1
	res, _ := e.run(t, e.mode(t), "What did the Supreme Court rule on gold clauses in 1935?")

	var summarised bool
	for _, r := range e.model.Requests() {
		if strings.Contains(r.System(), "summarise a web page") {
			content := r.LastUser()
			if strings.Contains(content, "upheld, five votes to four") && strings.Contains(content, "## The gold clause cases") {
				summarised = true
			}
			if strings.Contains(content, "Epilogue 4") && strings.Contains(content, "Part 9.") {
				t.Errorf("the page was not cut to passages: %d characters", len(content))
			}
		}
	}
	if !summarised {
		t.Error("the passage that answers the question, past the first 3,000 characters, did not reach the model")
	}
	var found bool
	for _, s := range res.Sources {
		if strings.HasSuffix(s.URL, "/a/currency-decade") {
			found = true
			if !slices.Contains(s.Passages, "The gold clause cases") {
				t.Errorf("source passages = %q, want the section read", s.Passages)
			}
		}
	}
	if !found {
		t.Errorf("the page is not among the sources: %+v", res.Sources)
	}
}
