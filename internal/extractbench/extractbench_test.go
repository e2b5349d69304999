package extractbench

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Hello, world!", []string{"Hello", "world"}},
		{"snake_case and CamelCase", []string{"snake_case", "and", "CamelCase"}},
		{"Привет, мир: 2024 год", []string{"Привет", "мир", "2024", "год"}},
		{"今回はKindle for PC", []string{"今回はKindle", "for", "PC"}},
		{"½ and ² count", []string{"½", "and", "²", "count"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := Words(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name        string
		truth, pred string
		want        Match
		p, r        float64
	}{
		{"exact", "one two three four five", "one, two; three four five!", Match{TP: 2, Exact: true}, 1, 1},
		{"both empty is perfect", "", "", Match{Exact: true}, 1, 1},
		{"empty prediction", "one two three four five", "", Match{FN: 2}, 0, 0},
		{"extra words at the end", "a b c d e", "a b c d e f g", Match{TP: 2, FP: 2}, 0.5, 1},
		{"missing half", "a b c d e f g", "a b c d e", Match{TP: 2, FN: 2}, 1, 0.5},
		{"short texts are one shingle", "a b", "a b", Match{TP: 1, Exact: true}, 1, 1},
		{"repeats count as a multiset", "a b c d a b c d", "a b c d", Match{TP: 1, FN: 4}, 1, 0.2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Compare(tt.truth, tt.pred)
			if m != tt.want {
				t.Fatalf("Compare = %+v, want %+v", m, tt.want)
			}
			p, r := m.PR()
			if p != tt.p || r != tt.r {
				t.Errorf("PR = %v, %v; want %v, %v", p, r, tt.p, tt.r)
			}
		})
	}
}

func TestSummarizeAveragesBeforeF1(t *testing.T) {
	rep := Summarize([]Doc{
		{Precision: 1, Recall: 0.5, Match: Match{Exact: true}},
		{Precision: 0.5, Recall: 1},
	}, 0, 0)
	if rep.Precision != 0.75 || rep.Recall != 0.75 || math.Abs(rep.F1-0.75) > 1e-12 || rep.Accuracy != 0.5 {
		t.Errorf("report = %+v", rep)
	}
}

// writeBenchmark lays out a benchmark directory with the given pages
// (id → html) and truths (id → article body).
func writeBenchmark(t *testing.T, pages, truths map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "html"), 0o755); err != nil {
		t.Fatal(err)
	}
	gt := map[string]map[string]string{}
	for id, body := range truths {
		gt[id] = map[string]string{"articleBody": body, "url": "https://example.com/" + id}
	}
	b, _ := json.Marshal(gt)
	if err := os.WriteFile(filepath.Join(dir, "ground-truth.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for id, h := range pages {
		f, err := os.Create(filepath.Join(dir, "html", id+".html.gz"))
		if err != nil {
			t.Fatal(err)
		}
		zw := gzip.NewWriter(f)
		_, _ = zw.Write([]byte(h))
		_ = zw.Close()
		_ = f.Close()
	}
	return dir
}

func TestRun(t *testing.T) {
	dir := writeBenchmark(t,
		map[string]string{"b": "<p>alpha beta gamma delta epsilon</p>", "a": "<p>x</p>"},
		map[string]string{"a": "one two three four", "b": "alpha beta gamma delta epsilon"})
	pages, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 || pages[0].ID != "a" || pages[1].URL != "https://example.com/b" {
		t.Fatalf("pages = %+v", pages)
	}
	// The extractor strips tags; page a fails.
	rep, err := Run(context.Background(), pages, func(h []byte, _ string) (string, error) {
		if strings.Contains(string(h), "<p>x</p>") {
			return "", errors.New("nothing found")
		}
		return strings.NewReplacer("<p>", "", "</p>", "").Replace(string(h)), nil
	}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failures != 1 || rep.Precision != 0.5 || rep.Recall != 0.5 || rep.Accuracy != 0.5 {
		t.Errorf("report = %+v", rep)
	}
	if w := rep.Worst(1); len(w) != 1 || w[0].ID != "a" || w[0].Err == nil {
		t.Errorf("worst = %+v", w)
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "ground-truth.json") {
		t.Errorf("empty dir: err = %v", err)
	}
	dir := writeBenchmark(t, nil, map[string]string{"a": "x"})
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "page a") {
		t.Errorf("missing page: err = %v", err)
	}
}
