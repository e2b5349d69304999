package fetch

import (
	"os"
	"testing"

	"github.com/sova-ai/sova/internal/extractbench"
)

// TestArticleExtractionBenchmark scores Extract on the article-extraction
// benchmark when SOVA_EXTRACT_BENCH_DIR names its directory (181 pages; see
// "sova bench extract"). The bar is go-trafilatura's published F1 of 0.96;
// this package's combination of extractors reaches about 0.973.
func TestArticleExtractionBenchmark(t *testing.T) {
	dir := os.Getenv("SOVA_EXTRACT_BENCH_DIR")
	if dir == "" {
		t.Skip("SOVA_EXTRACT_BENCH_DIR is not set")
	}
	if testing.Short() {
		t.Skip("the benchmark takes a few seconds")
	}
	pages, err := extractbench.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := extractbench.Run(t.Context(), pages, func(html []byte, pageURL string) (string, error) {
		_, md, err := Extract(html, pageURL)
		return PlainText(md), err
	}, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pages: precision %.4f, recall %.4f, F1 %.4f, accuracy %.3f, %d failures",
		len(pages), rep.Precision, rep.Recall, rep.F1, rep.Accuracy, rep.Failures)
	if rep.F1 < 0.97 {
		for _, d := range rep.Worst(10) {
			t.Logf("F1 %.3f  P %.3f  R %.3f  %s", d.F1(), d.Precision, d.Recall, d.URL)
		}
		t.Errorf("F1 %.4f is below 0.97", rep.F1)
	}
}

// TestUnseenExtractionSets scores Extract on the evaluation sets the
// extractor modules ship (see extractbench: the trafilatura evaluation
// set, scored by snippets, and the Readability test pages) when
// SOVA_EXTRACT_EVAL_SETS is set; they take about a minute on two cores.
// The floors are the figures reached, rounded down.
func TestUnseenExtractionSets(t *testing.T) {
	if os.Getenv("SOVA_EXTRACT_EVAL_SETS") == "" {
		t.Skip("SOVA_EXTRACT_EVAL_SETS is not set")
	}
	floors := map[string]float64{"trafilatura-eval": 0.90, "readability-pages": 0.95}
	sets := evalSets(t)
	if sets["trafilatura-eval"] == nil && sets["readability-pages"] == nil {
		t.Skip("no evaluation set found in the module cache (go mod download)")
	}
	for name, pages := range sets {
		floor, ok := floors[name]
		if !ok {
			continue
		}
		rep, err := extractbench.Run(t.Context(), pages, func(html []byte, pageURL string) (string, error) {
			_, md, err := Extract(html, pageURL)
			return PlainText(md), err
		}, 2)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s, %d pages: precision %.4f, recall %.4f, F1 %.4f", name, len(pages), rep.Precision, rep.Recall, rep.F1)
		if rep.F1 < floor {
			t.Errorf("%s: F1 %.4f is below %.2f", name, rep.F1, floor)
		}
	}
}
