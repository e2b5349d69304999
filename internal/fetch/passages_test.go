package fetch

import (
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sova-ai/sova/internal/extractbench"
)

func TestSelectPassages(t *testing.T) {
	filler := func(prefix string, n int) string { return prose(prefix, n) }
	md := "Opening paragraph of the page about boats.\n\n" +
		"## History\n\n" + filler("Hist", 12) + "\n\n" + filler("Early", 12) + "\n\n" +
		"## Engines\n\n" + filler("Motor", 12) + "\n\n" +
		"### Fuel consumption\n\nThe diesel engine burns twelve litres of fuel an hour at cruising speed.\n\n" + filler("Later", 12) + "\n\n" +
		"## Sails\n\n" + filler("Sail", 12)
	budget := 600

	whole := SelectPassages(md, []string{"fuel"}, -1)
	if !whole.Whole || whole.Markdown != md {
		t.Error("no budget: not the whole text")
	}

	ex := SelectPassages(md, []string{"How much fuel does the diesel engine burn?"}, budget)
	if n := utf8.RuneCountInString(ex.Markdown); n > budget {
		t.Errorf("excerpt has %d characters, budget %d", n, budget)
	}
	if !strings.Contains(ex.Markdown, "twelve litres of fuel") {
		t.Errorf("the matching passage is missing:\n%s", ex.Markdown)
	}
	if !strings.Contains(ex.Markdown, "### Fuel consumption\n\nThe diesel engine") {
		t.Errorf("the passage is not under its heading:\n%s", ex.Markdown)
	}
	if !strings.HasPrefix(ex.Markdown, "Opening paragraph") {
		t.Errorf("the opening is not kept for context:\n%s", ex.Markdown)
	}
	if !strings.Contains(ex.Markdown, gapMark) {
		t.Errorf("no mark where text was left out:\n%s", ex.Markdown)
	}
	if !slices.Contains(ex.Sections, "Fuel consumption") || ex.Whole {
		t.Errorf("sections %q, whole %v", ex.Sections, ex.Whole)
	}
	if i, j := strings.Index(ex.Markdown, "Opening"), strings.Index(ex.Markdown, "twelve litres"); i > j {
		t.Error("passages are not in page order")
	}

	// No matching term: the beginning, as before.
	begin := SelectPassages(md, []string{"zeppelin"}, budget)
	want, _ := trimText(md, budget)
	if begin.Markdown != want {
		t.Errorf("without a match the excerpt should be the beginning:\n%s", begin.Markdown)
	}

	p := &Page{Markdown: want, Truncated: true}
	p.setContent(md, budget)
	if got := p.Excerpt("diesel fuel"); !strings.Contains(got.Markdown, "twelve litres") {
		t.Errorf("Page.Excerpt did not pick from the whole content:\n%s", got.Markdown)
	}
	short := &Page{Markdown: "Short page."}
	if got := short.Excerpt("anything"); got.Markdown != "Short page." || !got.Whole {
		t.Errorf("short page excerpt = %+v", got)
	}
}

// TestPassageRecall measures, on the article-extraction benchmark
// (SOVA_EXTRACT_BENCH_DIR), what the 3,000-character budget holds of
// pages longer than it: the article's first 3,000 characters against the
// passages chosen for a query. Two queries: the page title (recall of the
// whole article body), and six keywords of a paragraph of the body that
// lies past the first 3,000 characters (does the excerpt hold it — a
// question about a detail deep in the page).
func TestPassageRecall(t *testing.T) {
	dir := os.Getenv("SOVA_EXTRACT_BENCH_DIR")
	if dir == "" {
		t.Skip("SOVA_EXTRACT_BENCH_DIR is not set")
	}
	pages, err := extractbench.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	const budget = DefaultMaxChars
	var long, needles, headHits, passHits int
	var headRecall, passRecall float64
	for _, p := range pages {
		raw, err := p.HTML()
		if err != nil {
			t.Fatal(err)
		}
		title, md, err := Extract(raw, p.URL)
		if err != nil || utf8.RuneCountInString(md) <= budget {
			continue
		}
		long++
		head, _ := trimText(md, budget)
		ex := SelectPassages(md, []string{title}, budget)
		_, hr := extractbench.Compare(p.Truth, PlainText(head)).PR()
		_, pr := extractbench.Compare(p.Truth, PlainText(ex.Markdown)).PR()
		headRecall += hr
		passRecall += pr

		// A paragraph of the truth past the first budget characters.
		headText := PlainText(head)
		var needle string
		for _, para := range strings.Split(p.Truth, "\n") {
			if len(extractbench.Words(para)) >= 25 && !strings.Contains(headText, strings.TrimSpace(para)[:40]) &&
				extractbench.Compare(para, PlainText(md)).TP > 0 {
				needle = para
			}
		}
		if needle == "" {
			continue
		}
		needles++
		words := extractbench.Words(needle)
		slices.SortStableFunc(words, func(a, b string) int { return utf8.RuneCountInString(b) - utf8.RuneCountInString(a) })
		var q []string
		for _, w := range words {
			if !slices.Contains(q, w) {
				q = append(q, w)
			}
			if len(q) == 6 {
				break
			}
		}
		hit := func(text string) bool {
			m := extractbench.Compare(needle, PlainText(text))
			return 2*m.TP >= m.TP+m.FN
		}
		if hit(head) {
			headHits++
		}
		if hit(SelectPassages(md, []string{strings.Join(q, " ")}, budget).Markdown) {
			passHits++
		}
	}
	if long == 0 {
		t.Fatal("no page longer than the budget")
	}
	t.Logf("%d pages longer than %d characters; recall of the article body with the title as query: first %d characters %.3f, passages %.3f",
		long, budget, budget, headRecall/float64(long), passRecall/float64(long))
	t.Logf("detail past the first %d characters found in the excerpt (%d pages): first %d characters %d, passages %d",
		budget, needles, budget, headHits, passHits)
	if passRecall < headRecall*0.97 {
		t.Errorf("passages lose recall of the article body: %.3f against %.3f", passRecall/float64(long), headRecall/float64(long))
	}
	if passHits <= headHits {
		t.Errorf("passages found %d details deep in the page, the beginning %d", passHits, headHits)
	}
}
