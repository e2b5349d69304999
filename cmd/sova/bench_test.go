package main

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/sovatest"
)

// writeExtractionBenchmark lays out a two-page benchmark in the layout of
// the article-extraction benchmark.
func writeExtractionBenchmark(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "html"), 0o755); err != nil {
		t.Fatal(err)
	}
	truth := map[string]map[string]string{}
	for i, a := range sovatest.DefaultArticles()[:2] {
		id := []string{"aa", "bb"}[i]
		truth[id] = map[string]string{"articleBody": a.Body, "url": "https://history.example/a/" + a.Slug}
		f, err := os.Create(filepath.Join(dir, "html", id+".html.gz"))
		if err != nil {
			t.Fatal(err)
		}
		zw := gzip.NewWriter(f)
		_, _ = zw.Write([]byte(sovatest.Page(a)))
		_ = zw.Close()
		_ = f.Close()
	}
	b, _ := json.Marshal(truth)
	if err := os.WriteFile(filepath.Join(dir, "ground-truth.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBenchExtract(t *testing.T) {
	dir := writeExtractionBenchmark(t)
	out, err := exec.Command(binPath, "bench", "extract", "--dir", dir, "--format", "both", "--json", "--worst", "1").Output()
	if err != nil {
		t.Fatalf("bench extract: %v", err)
	}
	var res []struct {
		Format                string
		Pages                 int
		Precision, Recall, F1 float64
		Failures              int
		Worst                 []struct{ URL string }
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	if len(res) != 2 || res[0].Format != "text" || res[1].Format != "markdown" {
		t.Fatalf("results = %+v", res)
	}
	for _, r := range res {
		// The pages wrap the article in boilerplate; extraction keeps the
		// article and drops the rest.
		if r.Pages != 2 || r.Failures != 0 || r.F1 < 0.9 || len(r.Worst) != 1 {
			t.Errorf("%s: %+v", r.Format, r)
		}
	}

	table, err := exec.Command(binPath, "bench", "extract", "--dir", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(table), "article extraction: 2 pages") || !strings.Contains(string(table), "precision") {
		t.Errorf("table output: %v\n%s", err, table)
	}
}

func TestBenchExtractNeedsADirectory(t *testing.T) {
	cmd := exec.Command(binPath, "bench", "extract")
	cmd.Env = []string{"HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "SOVA_EXTRACT_BENCH_DIR") {
		t.Errorf("err = %v, output %s", err, out)
	}
	cmd = exec.Command(binPath, "bench", "extract", "--dir", t.TempDir())
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "ground-truth.json") {
		t.Errorf("empty dir: err = %v, output %s", err, out)
	}
}

func TestAskDeepSearch(t *testing.T) {
	w := newWorld(t)
	out, errOut, err := w.sova(t, "ask", "--mode", "deep_search", "How did presidents describe the economy in the 1930s?")
	if err != nil {
		t.Fatalf("ask: %v\nstderr:\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "iteration 6 of 6") {
		t.Errorf("progress lacks the sixth iteration:\n%s", errOut)
	}
	if !strings.Contains(out, "[1]") || len(w.sx.Queries()) != 13 {
		t.Errorf("answer %q after %d queries", out, len(w.sx.Queries()))
	}
}
