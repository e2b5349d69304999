package rank

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BM25 stems only the words that begin as a query term does (termHeads):
// that is exact only while the stemmers keep every word's first two runes.
// This checks it on words known to change most under Snowball and, where
// the shared data sits beside the repository (as in CI), on every word of
// the seeds (Russian) and of 40 real web pages (mostly English; all 181
// passed when this was written).
func TestStemKeepsHead(t *testing.T) {
	text := strings.Join([]string{
		"skies skis dying lying tying idly gently ugly early only singly news howe atlas cosmos bias andes",
		"cries ties tied ied ies sses caresses ponies generously agreed feed hopping hoping ability happily",
		"sky yes yell youth y ay by try flies conditional rational valenci hesitanci digitizer conformabli",
		"ёлки Ёжик ели яблоки ясно юристы экономика экономике президенты президентов описывали годы её ею им",
		"1930s 1933 x5 5x a1 ß straße naïve café coöperate 東京 ελληνικά",
	}, " ")
	shared := filepath.Join("..", "..", "..", "shared")
	if files, _ := filepath.Glob(filepath.Join(shared, "seeds", "*")); len(files) > 0 {
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			text += " " + string(b)
		}
	} else {
		t.Log("no seeds beside the repository: checking the built-in words only")
	}
	pages, _ := filepath.Glob(filepath.Join(shared, "benchmarks", "article-extraction", "html", "*.html.gz"))
	if len(pages) > 40 {
		pages = pages[:40] // enough words, and quick under -race
	}
	for _, f := range pages {
		text += " " + readGzip(t, f)
	}
	var buf []byte
	words, checked := map[string]bool{}, 0
	eachWord(text, &buf, func(w []byte) {
		if words[string(w)] {
			return
		}
		words[string(w)] = true
		stem, ok := term(string(w))
		if !ok {
			return
		}
		checked++
		h := newTermHeads([]string{stem})
		if !h.may(w) {
			t.Errorf("%q stems to %q, which does not begin as the word does: BM25 would miss it", w, stem)
		}
	})
	t.Logf("%d distinct words checked (%d pages)", checked, len(pages))
}

func readGzip(t *testing.T, name string) string {
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
