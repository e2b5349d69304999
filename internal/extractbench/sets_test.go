package extractbench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadComparison(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "scripts/comparison/data.go"), `package main

var comparisonData = map[string]ComparisonEntry{
	"https://a.example/1": {
		File:    "a.html",
		With:    []string{"kept phrase", "second \"quoted\" phrase"},
		Without: []string{"Impressum"},
	},
	"https://b.example/2": {
		File: "b.html",
		With: []string{"in the mock folder"},
	},
	"https://c.example/3": {
		File: "missing.html",
		With: []string{"skipped"},
	},
}
`)
	writeFile(t, filepath.Join(dir, "test-files/comparison/a.html"), "<p>kept phrase</p>")
	writeFile(t, filepath.Join(dir, "test-files/mock/b.html"), "<p>in the mock folder</p>")
	pages, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 || pages[0].ID != "a.html" || pages[0].URL != "https://a.example/1" ||
		pages[0].With[1] != `second "quoted" phrase` || pages[0].Without[0] != "Impressum" || !pages[1].Snippets() {
		t.Fatalf("pages %+v", pages)
	}
	rep, err := Run(context.Background(), pages, func(html []byte, _ string) (string, error) {
		return strings.NewReplacer("<p>", "", "</p>", "").Replace(string(html)) + " Impressum", nil
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	// a: 1 TP, 1 FN, 1 FP; b: 1 TP.
	if rep.Snippets == nil || *rep.Snippets != (SnippetMatch{TP: 2, FN: 1, FP: 1}) {
		t.Fatalf("snippets %+v", rep.Snippets)
	}
	if rep.F1 != 4.0/6.0 || rep.Precision != 2.0/3.0 || rep.Recall != 2.0/3.0 {
		t.Errorf("P %v R %v F1 %v", rep.Precision, rep.Recall, rep.F1)
	}
}

func TestCompareSnippets(t *testing.T) {
	if m := CompareSnippets([]string{"a b"}, []string{"c"}, ""); m != (SnippetMatch{FN: 1, TN: 1}) {
		t.Errorf("empty prediction: %+v", m)
	}
	if m := CompareSnippets([]string{"a b", "x"}, []string{"c", "d"}, "a b c"); m != (SnippetMatch{TP: 1, FN: 1, FP: 1, TN: 1}) {
		t.Errorf("%+v", m)
	}
}

func TestLoadReadabilityPages(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "test-pages/one/source.html"), "<html><body><p>First para.</p><p>Second para.</p></body></html>")
	writeFile(t, filepath.Join(dir, "test-pages/one/expected.html"), "<div><p>First para.</p><p>Second para.</p></div>")
	writeFile(t, filepath.Join(dir, "test-pages/no-expected/source.html"), "<p>x</p>")
	pages, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 1 || pages[0].ID != "one" || pages[0].Snippets() {
		t.Fatalf("pages %+v", pages)
	}
	if w := Words(pages[0].Truth); strings.Join(w, " ") != "First para Second para" {
		t.Errorf("truth words %q", w)
	}
	raw, err := pages[0].HTML()
	if err != nil || !strings.Contains(string(raw), "Second para.") {
		t.Errorf("HTML: %q, %v", raw, err)
	}
}
