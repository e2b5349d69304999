package extractbench

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// The other evaluation sets, read where their Go modules ship them (the
// module cache, `go env GOMODCACHE`), so that nothing of them is copied
// into this repository:
//
//   - the trafilatura evaluation set, shipped by
//     github.com/markusmobius/go-trafilatura (Apache-2.0) in
//     scripts/comparison/data.go (URL, file, phrases the main text must
//     contain and phrases it must not) and test-files/{comparison,mock}
//     (the pages): about 980 pages in many languages, scored by snippets;
//   - the Readability.js test pages, shipped by codeberg.org/readeck/
//     go-readability (MIT; the pages come from mozilla/readability,
//     Apache-2.0) as test-pages/<name>/{source.html,expected.html}: 130
//     pages whose expected text is what Readability.js extracts, scored
//     by shingles like the article-extraction benchmark.
const (
	comparisonDir       = "scripts/comparison"
	readabilityDir      = "test-pages"
	readabilityExpected = "expected.html"
)

// TrafilaturaModule and ReadabilityModule are the modules that ship the
// sets.
const (
	TrafilaturaModule = "github.com/markusmobius/go-trafilatura"
	ReadabilityModule = "codeberg.org/readeck/go-readability"
)

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// LoadComparison reads the trafilatura evaluation set from the root of the
// go-trafilatura module: the entries of comparisonData in
// scripts/comparison/data.go, parsed as Go source, and their pages in
// test-files/comparison or test-files/mock. Entries whose page is missing
// are skipped; pages are sorted by ID (the file name).
func LoadComparison(moduleDir string) ([]Page, error) {
	src := filepath.Join(moduleDir, comparisonDir, "data.go")
	f, err := parser.ParseFile(token.NewFileSet(), src, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("trafilatura evaluation set: %w", err)
	}
	var lit *ast.CompositeLit
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || lit != nil {
			return lit == nil
		}
		for i, name := range vs.Names {
			if name.Name == "comparisonData" && i < len(vs.Values) {
				lit, _ = vs.Values[i].(*ast.CompositeLit)
			}
		}
		return false
	})
	if lit == nil {
		return nil, fmt.Errorf("trafilatura evaluation set: %s has no comparisonData", src)
	}
	var pages []Page
	seen := map[string]bool{}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		url, ok := stringLit(kv.Key)
		entry, ok2 := kv.Value.(*ast.CompositeLit)
		if !ok || !ok2 {
			continue
		}
		var p Page
		p.URL = url
		file := ""
		for _, fe := range entry.Elts {
			fkv, ok := fe.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			name, _ := fkv.Key.(*ast.Ident)
			if name == nil {
				continue
			}
			switch name.Name {
			case "File":
				file, _ = stringLit(fkv.Value)
			case "With":
				p.With = stringList(fkv.Value)
			case "Without":
				p.Without = stringList(fkv.Value)
			}
		}
		if file == "" || seen[file] || !p.Snippets() {
			continue
		}
		for _, sub := range []string{"comparison", "mock"} {
			path := filepath.Join(moduleDir, "test-files", sub, file)
			if _, err := os.Stat(path); err == nil {
				p.path = path
				break
			}
		}
		if p.path == "" {
			continue
		}
		seen[file] = true
		p.ID = file
		pages = append(pages, p)
	}
	if len(pages) == 0 {
		return nil, errors.New("trafilatura evaluation set: no pages found (is this the go-trafilatura module's directory?)")
	}
	slices.SortFunc(pages, func(a, b Page) int { return strings.Compare(a.ID, b.ID) })
	return pages, nil
}

func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}

func stringList(e ast.Expr) []string {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	var out []string
	for _, el := range cl.Elts {
		if s, ok := stringLit(el); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// LoadReadabilityPages reads test pages laid out as Readability.js ships
// them: dir/<name>/source.html and expected.html (the extracted article
// as HTML, whose text is the truth), with the page's URL taken as
// http://fakehost/test/ like the Readability tests do.
func LoadReadabilityPages(dir string) ([]Page, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("readability test pages: %w", err)
	}
	var pages []Page
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		src := filepath.Join(dir, e.Name(), "source.html")
		exp, err := os.ReadFile(filepath.Join(dir, e.Name(), readabilityExpected))
		if err != nil {
			continue
		}
		if _, err := os.Stat(src); err != nil {
			continue
		}
		doc, err := html.Parse(strings.NewReader(string(exp)))
		if err != nil {
			continue
		}
		pages = append(pages, Page{ID: e.Name(), URL: "http://fakehost/test/page.html", Truth: blockText(doc), path: src})
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("readability test pages: none in %s", dir)
	}
	slices.SortFunc(pages, func(a, b Page) int { return strings.Compare(a.ID, b.ID) })
	return pages, nil
}

// blockText is the text of an HTML tree with block elements on lines of
// their own, so that words of adjacent blocks are not run together.
func blockText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			switch n.Data {
			case "script", "style":
				return
			case "p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th",
				"blockquote", "pre", "section", "article", "figure", "figcaption", "dt", "dd", "table", "ul", "ol":
				defer b.WriteString("\n")
				b.WriteString("\n")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// SnippetMatch counts the snippets of one page: With phrases found (TP) or
// missed (FN), Without phrases found (FP) or absent (TN).
type SnippetMatch struct {
	TP, FN, FP, TN int
}

// CompareSnippets scores pred against a page's snippets the way the
// trafilatura evaluation does: plain substring tests on the text.
func CompareSnippets(with, without []string, pred string) SnippetMatch {
	var m SnippetMatch
	if pred == "" {
		m.FN, m.TN = len(with), len(without)
		return m
	}
	for _, s := range with {
		if strings.Contains(pred, s) {
			m.TP++
		} else {
			m.FN++
		}
	}
	for _, s := range without {
		if strings.Contains(pred, s) {
			m.FP++
		} else {
			m.TN++
		}
	}
	return m
}

// Add sums two counts.
func (m SnippetMatch) Add(o SnippetMatch) SnippetMatch {
	return SnippetMatch{m.TP + o.TP, m.FN + o.FN, m.FP + o.FP, m.TN + o.TN}
}

// Scores are the evaluation's precision, recall, accuracy and F1 of the
// summed counts.
func (m SnippetMatch) Scores() (precision, recall, accuracy, f1 float64) {
	tp, fn, fp, tn := float64(m.TP), float64(m.FN), float64(m.FP), float64(m.TN)
	if tp+fp > 0 {
		precision = tp / (tp + fp)
	}
	if tp+fn > 0 {
		recall = tp / (tp + fn)
	}
	if all := tp + fn + fp + tn; all > 0 {
		accuracy = (tp + tn) / all
	}
	if d := 2*tp + fp + fn; d > 0 {
		f1 = 2 * tp / d
	}
	return
}
