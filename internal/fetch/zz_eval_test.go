package fetch

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	readability "codeberg.org/readeck/go-readability"
	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
)

var wordRe = regexp.MustCompile(`\w+`)
var mdLinkRe = regexp.MustCompile(`\]\([^)]*\)`)

func shingles(s string) map[string]int {
	w := wordRe.FindAllString(s, -1)
	m := map[string]int{}
	for i := 0; i+4 <= len(w); i++ {
		m[strings.Join(w[i:i+4], " ")]++
	}
	if len(w) > 0 && len(w) < 4 {
		m[strings.Join(w, " ")]++
	}
	return m
}

func pr(pred, truth string) (float64, float64) {
	p, t := shingles(pred), shingles(truth)
	tp := 0
	np, nt := 0, 0
	for k, v := range p {
		np += v
		if tv := t[k]; tv > 0 {
			tp += min(v, tv)
		}
	}
	for _, v := range t {
		nt += v
	}
	if np == 0 && nt == 0 {
		return 1, 1
	}
	prec, rec := 0.0, 0.0
	if np > 0 {
		prec = float64(tp) / float64(np)
	}
	if nt > 0 {
		rec = float64(tp) / float64(nt)
	}
	return prec, rec
}

func TestEval(t *testing.T) {
	dir := "/work/shared/benchmarks/article-extraction"
	gtb, _ := os.ReadFile(filepath.Join(dir, "ground-truth.json"))
	var gt map[string]struct{ ArticleBody, URL string }
	json.Unmarshal(gtb, &gt)
	type variant struct {
		name string
		run  func(src string, u *url.URL) string
	}
	traf := func(focus trafilatura.ExtractionFocus, fb bool, links bool, md bool) func(string, *url.URL) string {
		return func(src string, u *url.URL) string {
			doc, _ := html.Parse(strings.NewReader(src))
			res, err := trafilatura.ExtractDocument(doc, trafilatura.Options{OriginalURL: u, EnableFallback: fb, Focus: focus, ExcludeComments: true, IncludeLinks: links, HtmlDateMode: trafilatura.Fast})
			if err != nil || res == nil {
				return ""
			}
			if !md {
				return res.ContentText
			}
			s, _ := toMarkdown(res.ContentNode, u)
			return s
		}
	}
	variants := []variant{
		{"bal+fb text", traf(trafilatura.Balanced, true, false, false)},
		{"bal+fb md nolinks", traf(trafilatura.Balanced, true, false, true)},
		{"bal+fb md links", traf(trafilatura.Balanced, true, true, true)},
		{"bal nofb text", traf(trafilatura.Balanced, false, false, false)},
		{"prec+fb text", traf(trafilatura.FavorPrecision, true, false, false)},
		{"rec+fb text", traf(trafilatura.FavorRecall, true, false, false)},
		{"bal nofb md links", traf(trafilatura.Balanced, false, true, true)},
		{"rec nofb md links", traf(trafilatura.FavorRecall, false, true, true)},
		{"rec+fb md links", traf(trafilatura.FavorRecall, true, true, true)},
		{"prec nofb text", traf(trafilatura.FavorPrecision, false, false, false)},
		{"rec nofb text", traf(trafilatura.FavorRecall, false, false, false)},
		{"readeck md", func(src string, u *url.URL) string {
			doc, _ := html.Parse(strings.NewReader(src))
			p := readability.NewParser()
			a, err := p.ParseDocument(doc, u)
			if err != nil || a.Node == nil {
				return ""
			}
			s, _ := toMarkdown(a.Node, u)
			return s
		}},
		{"pipe minext0", func(src string, u *url.URL) string {
			doc, _ := html.Parse(strings.NewReader(src))
			absolutizeLinks(doc, u)
			cfg := trafilatura.DefaultConfig()
			cfg.MinExtractedSize = 0
			md := ""
			res, err := trafilatura.ExtractDocument(doc, trafilatura.Options{Config: cfg, OriginalURL: u, ExcludeComments: true, IncludeLinks: true, HtmlDateMode: trafilatura.Fast})
			if err == nil {
				md, _ = toMarkdown(res.ContentNode, u)
			}
			if len([]rune(md)) < 250 {
				p := readability.NewParser()
				a, err := p.ParseDocument(doc, u)
				if err == nil && a.Node != nil {
					m2, _ := toMarkdown(a.Node, u)
					if len([]rune(m2)) > len([]rune(md)) {
						fmt.Println("readability used", u, len([]rune(md)), len([]rune(m2)))
						md = m2
					}
				}
			}
			return md
		}},
		{"pipeline", func(src string, u *url.URL) string {
			ex, _ := extractHTML(src, u)
			return ex.markdown
		}},
	}
	only := os.Getenv("ONLY")
	for _, v := range variants {
		if only != "" && !strings.Contains(v.name, only) {
			continue
		}
		var sp, sr float64
		var n, chars, mdchars int
		var dur time.Duration
		for id, g := range gt {
			f, err := os.Open(filepath.Join(dir, "html", id+".html.gz"))
			if err != nil {
				continue
			}
			zr, _ := gzip.NewReader(f)
			b, _ := io.ReadAll(zr)
			f.Close()
			u, _ := url.Parse(g.URL)
			src := decode(b, "")
			st := time.Now()
			out := v.run(src, u)
			dur += time.Since(st)
			mdchars += len([]rune(out))
			plain := mdLinkRe.ReplaceAllString(out, "]")
			chars += len([]rune(plain))
			p, r := pr(plain, g.ArticleBody)
			sp += p
			sr += r
			n++
		}
		P, R := sp/float64(n), sr/float64(n)
		fmt.Printf("%-22s n=%d P=%.3f R=%.3f F1=%.3f avg=%s mdchars=%d plainchars=%d\n", v.name, n, P, R, 2*P*R/(P+R), dur/time.Duration(n), mdchars/n, chars/n)
	}
}
