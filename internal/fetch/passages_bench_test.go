package fetch_test

import (
	"testing"

	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/sovatest"
)

// BenchmarkSelectPassages chooses the passages of real-size pages for a
// question and its queries, as every page read of a search run does; with
// SOVA_EXTRACT_BENCH_DIR set the pages are the shared article-extraction
// set. It reports the CPU per page.
func BenchmarkSelectPassages(b *testing.B) {
	arts, from := sovatest.RealArticles(b, 12)
	b.Logf("pages: %s", from)
	var mds []string
	for _, a := range arts {
		html := a.HTML
		if html == "" {
			html = sovatest.Page(a)
		}
		_, md, err := fetch.Extract([]byte(html), "https://example.com/"+a.Slug)
		if err != nil {
			b.Fatal(err)
		}
		mds = append(mds, md)
	}
	queries := []string{"How did presidents describe the economy in the 1930s?", "presidential speeches economy great depression",
		"New Deal recovery unemployment figures", "Как президенты описывали экономику в 1930-е годы?"}
	b.ReportAllocs()
	cpu := sovatest.CPUTime()
	i := 0
	for b.Loop() {
		fetch.SelectPassages(mds[i%len(mds)], queries, 3000) // SOVA_CONTENT_MAX_CHARS
		i++
	}
	b.ReportMetric(float64(sovatest.CPUTime()-cpu)/float64(b.N)/1e6, "cpu-ms/page")
}
