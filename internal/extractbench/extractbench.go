// Package extractbench scores main-content extraction on the article
// extraction benchmark (scrapinghub/article-extraction-benchmark: real web
// pages with human-checked article bodies) with the metric the benchmark
// publishes, so Sova's figures compare with the published ones:
//
//   - text is split into words, a word being a run of letters, digits and
//     underscores (Python's \w+ on str);
//   - each text becomes the multiset of its 4-word shingles;
//   - per document, true positives are the size of the multiset
//     intersection, false positives what the prediction has beyond it and
//     false negatives what the truth has beyond it; precision and recall
//     follow, an empty prediction of an empty truth counting as perfect;
//   - precision and recall are averaged over documents and F1 is computed
//     from the two averages; accuracy is the share of documents whose word
//     sequences match exactly.
package extractbench

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/sync/errgroup"
)

// ShingleSize is the number of words in a shingle.
const ShingleSize = 4

// maxPageBytes bounds one decompressed benchmark page.
const maxPageBytes = 64 << 20

// Page is one benchmark document. A page is scored either against Truth
// (shingles) or, when it has snippets (With or Without), by which of them
// the prediction contains.
type Page struct {
	ID    string
	URL   string
	Truth string // the human-checked article body
	// With are phrases the main text must contain, Without phrases it
	// must not (the snippet sets).
	With, Without []string
	path          string // the page's file; .gz files are decompressed
}

// Snippets reports whether the page is scored by snippets.
func (p Page) Snippets() bool { return len(p.With) > 0 || len(p.Without) > 0 }

// HTML reads (and decompresses) the page.
func (p Page) HTML() ([]byte, error) {
	f, err := os.Open(p.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(p.path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.path, err)
		}
		defer zr.Close()
		r = zr
	}
	b, err := io.ReadAll(io.LimitReader(r, maxPageBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.path, err)
	}
	if len(b) > maxPageBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB", p.path, maxPageBytes>>20)
	}
	return b, nil
}

// Load reads the benchmark in dir: ground-truth.json and html/<id>.html.gz.
// Pages are sorted by ID.
func Load(dir string) ([]Page, error) {
	if _, err := os.Stat(filepath.Join(dir, "ground-truth.json")); err != nil {
		if isDir(filepath.Join(dir, comparisonDir)) {
			return LoadComparison(dir)
		}
		if isDir(filepath.Join(dir, readabilityDir)) {
			return LoadReadabilityPages(filepath.Join(dir, readabilityDir))
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "ground-truth.json"))
	if err != nil {
		return nil, fmt.Errorf("extraction benchmark: %w (the directory should hold ground-truth.json and html/)", err)
	}
	var truth map[string]struct {
		ArticleBody string `json:"articleBody"`
		URL         string `json:"url"`
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		return nil, fmt.Errorf("extraction benchmark: ground-truth.json: %w", err)
	}
	pages := make([]Page, 0, len(truth))
	for id, t := range truth {
		path := filepath.Join(dir, "html", id+".html.gz")
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("extraction benchmark: page %s: %w", id, err)
		}
		pages = append(pages, Page{ID: id, URL: t.URL, Truth: t.ArticleBody, path: path})
	}
	if len(pages) == 0 {
		return nil, errors.New("extraction benchmark: ground-truth.json lists no pages")
	}
	slices.SortFunc(pages, func(a, b Page) int { return strings.Compare(a.ID, b.ID) })
	return pages, nil
}

// Words splits text into words the way Python's re.findall(r"\w+") does on
// a str: maximal runs of letters, numbers and underscores.
func Words(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_')
	})
}

// shingles returns the multiset of n-word shingles of words. A text with
// fewer than n words (but at least one) is a single shingle.
func shingles(words []string, n int) map[string]int {
	out := map[string]int{}
	if len(words) == 0 {
		return out
	}
	if len(words) < n {
		out[strings.Join(words, " ")]++
		return out
	}
	for i := 0; i+n <= len(words); i++ {
		out[strings.Join(words[i:i+n], " ")]++
	}
	return out
}

// Match is the comparison of one prediction with its truth.
type Match struct {
	TP, FP, FN int
	Exact      bool // same word sequence
}

// Compare scores pred against truth.
func Compare(truth, pred string) Match {
	tw, pw := Words(truth), Words(pred)
	ts, ps := shingles(tw, ShingleSize), shingles(pw, ShingleSize)
	var m Match
	for k, n := range ps {
		t := ts[k]
		m.TP += min(n, t)
		m.FP += max(0, n-t)
	}
	for k, n := range ts {
		m.FN += max(0, n-ps[k])
	}
	m.Exact = slices.Equal(tw, pw)
	return m
}

// PR returns the document's precision and recall.
func (m Match) PR() (precision, recall float64) {
	if m.FP == 0 && m.FN == 0 {
		return 1, 1
	}
	if m.TP == 0 {
		return 0, 0
	}
	return float64(m.TP) / float64(m.TP+m.FP), float64(m.TP) / float64(m.TP+m.FN)
}

// Doc is one page's result.
type Doc struct {
	ID        string
	URL       string
	Match     Match
	Snippets  SnippetMatch // snippet sets only
	Precision float64
	Recall    float64
	Err       error // the extractor failed; the prediction counted as empty
}

// F1 is the document's own F1, for listing the worst pages.
func (d Doc) F1() float64 { return f1(d.Precision, d.Recall) }

// Report is the benchmark result.
type Report struct {
	Docs      []Doc
	Precision float64 // mean over documents
	Recall    float64 // mean over documents
	F1        float64 // from the two means
	Accuracy  float64 // share of exact matches
	Failures  int     // pages the extractor returned an error for
	// Snippets, for a snippet set, sums the pages' snippet counts; the
	// figures above then come from those sums, as the trafilatura
	// evaluation computes them (accuracy: share of snippets right).
	Snippets *SnippetMatch
	Elapsed  time.Duration
}

func f1(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// Extractor returns the main text of a page.
type Extractor func(html []byte, pageURL string) (string, error)

// Run extracts every page with ex, workers at a time (<= 0: one), and
// scores the results. A failed extraction counts as an empty prediction;
// only reading the benchmark itself or ctx ending stops the run.
func Run(ctx context.Context, pages []Page, ex Extractor, workers int) (*Report, error) {
	start := time.Now()
	docs := make([]Doc, len(pages))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, workers))
	var mu sync.Mutex
	failures := 0
	for i, p := range pages {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			doc, err := p.HTML()
			if err != nil {
				return err
			}
			pred, exErr := ex(doc, p.URL)
			if exErr != nil {
				pred = ""
				mu.Lock()
				failures++
				mu.Unlock()
			}
			docs[i] = Score(p, pred)
			docs[i].Err = exErr
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return Summarize(docs, failures, time.Since(start)), nil
}

// Score scores one prediction for page p: by snippets on a snippet set,
// else by shingles against the truth.
func Score(p Page, pred string) Doc {
	d := Doc{ID: p.ID, URL: p.URL}
	if p.Snippets() {
		d.Snippets = CompareSnippets(p.With, p.Without, pred)
		m := d.Snippets
		d.Precision, d.Recall = 1, 1
		if m.TP+m.FP > 0 {
			d.Precision = float64(m.TP) / float64(m.TP+m.FP)
		}
		if m.TP+m.FN > 0 {
			d.Recall = float64(m.TP) / float64(m.TP+m.FN)
		}
		d.Match.Exact = m.FN == 0 && m.FP == 0
		return d
	}
	d.Match = Compare(p.Truth, pred)
	d.Precision, d.Recall = d.Match.PR()
	return d
}

// Summarize averages per-document results.
func Summarize(docs []Doc, failures int, elapsed time.Duration) *Report {
	r := &Report{Docs: docs, Failures: failures, Elapsed: elapsed}
	if len(docs) == 0 {
		return r
	}
	var sm SnippetMatch
	for _, d := range docs {
		sm = sm.Add(d.Snippets)
	}
	if sm != (SnippetMatch{}) {
		r.Snippets = &sm
		r.Precision, r.Recall, r.Accuracy, r.F1 = sm.Scores()
		return r
	}
	exact := 0
	for _, d := range docs {
		r.Precision += d.Precision
		r.Recall += d.Recall
		if d.Match.Exact {
			exact++
		}
	}
	n := float64(len(docs))
	r.Precision /= n
	r.Recall /= n
	r.F1 = f1(r.Precision, r.Recall)
	r.Accuracy = float64(exact) / n
	return r
}

// Worst returns the n documents with the lowest F1, lowest first.
func (r *Report) Worst(n int) []Doc {
	docs := slices.Clone(r.Docs)
	slices.SortStableFunc(docs, func(a, b Doc) int {
		switch fa, fb := a.F1(), b.F1(); {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return 0
	})
	return docs[:min(n, len(docs))]
}
