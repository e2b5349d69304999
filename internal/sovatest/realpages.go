package sovatest

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// RealPageBytes is the size real-size pages are chosen near: the HTML of
// a typical article page as the web serves it (~48 KB), markup, scripts
// and boilerplate included.
const RealPageBytes = 48 << 10

// RealArticles returns n articles whose pages are real-size HTML, for
// benchmarks that must pay what a real page costs to extract. With
// SOVA_EXTRACT_BENCH_DIR naming the article-extraction set (its html/
// folder of .html.gz files), the n pages nearest RealPageBytes in size are
// served as they are; without it, pages of that size are built in code
// (an article of about 8,000 characters inside navigation, scripts,
// sidebars of links and a footer). The second result names the source.
func RealArticles(tb testing.TB, n int) ([]Article, string) {
	tb.Helper()
	if dir := os.Getenv("SOVA_EXTRACT_BENCH_DIR"); dir != "" {
		arts, err := sharedArticles(filepath.Join(dir, "html"), n)
		if err == nil && len(arts) == n {
			return arts, "article-extraction set"
		}
		tb.Logf("real pages from %s: %v; building pages in code", dir, err)
	}
	arts := make([]Article, n)
	for i := range arts {
		arts[i] = builtArticle(i)
	}
	return arts, "pages built in code"
}

var titleTag = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

func sharedArticles(dir string, n int) ([]Article, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type page struct {
		name string
		html []byte
	}
	var pages []page
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".html.gz") {
			continue
		}
		b, err := gunzip(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		pages = append(pages, page{e.Name(), b})
	}
	if len(pages) < n {
		return nil, fmt.Errorf("%d pages, want %d", len(pages), n)
	}
	dist := func(p page) int { return max(len(p.html)-RealPageBytes, RealPageBytes-len(p.html)) }
	slices.SortStableFunc(pages, func(a, b page) int { return dist(a) - dist(b) })
	arts := make([]Article, n)
	for i, p := range pages[:n] {
		title := fmt.Sprintf("Article %d", i+1)
		if m := titleTag.FindSubmatch(p.html); m != nil {
			title = strings.Join(strings.Fields(string(m[1])), " ")
		}
		arts[i] = Article{
			Slug:  strings.TrimSuffix(p.name, ".html.gz")[:16],
			Title: title,
			Body:  title + " economy 1930s presidents",
			HTML:  string(p.html),
		}
	}
	return arts, nil
}

func gunzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(zr, 16<<20))
}

// builtArticle is a page of about RealPageBytes: a long article (about
// 8,000 characters in 24 paragraphs under headings) in the markup and
// boilerplate of a news site.
func builtArticle(i int) Article {
	topics := []string{"banking", "farm prices", "the gold standard", "unemployment", "public works", "trade"}
	topic := topics[i%len(topics)]
	title := fmt.Sprintf("The economy in the 1930s, part %d: %s", i+1, topic)
	var body strings.Builder
	for p := 0; p < 24; p++ {
		if p%6 == 0 {
			fmt.Fprintf(&body, "## Section %d on %s\n\n", p/6+1, topic)
		}
		fmt.Fprintf(&body, "In %d the debate on %s turned on paragraph %d of the record: presidents, governors and "+
			"economists described %s as a problem of confidence as much as of money, and the newspapers of the day "+
			"printed their speeches in full, with figures on prices, wages, deposits and output for every state, "+
			"which historians have since compared with the official series kept by the departments.\n\n",
			1930+p%10, topic, p+1, topic)
	}
	a := Article{Slug: fmt.Sprintf("real-%d", i+1), Title: title, Body: strings.TrimSpace(body.String())}
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>` + title + ` | History Monthly</title>`)
	for s := 0; s < 6; s++ {
		fmt.Fprintf(&b, `<script>window.dataLayer=window.dataLayer||[];function gtag%d(){dataLayer.push(arguments)}gtag%d('js',new Date());gtag%d('config','UA-%d');</script>`+"\n", s, s, s, 1000+s)
	}
	b.WriteString(`<style>` + strings.Repeat(`.nav a{color:#333;margin:0 4px}.sidebar li{list-style:none;padding:2px}`, 20) + `</style></head><body>`)
	b.WriteString(`<header class="site-header"><nav class="menu"><ul>`)
	for l := 0; l < 60; l++ {
		fmt.Fprintf(&b, `<li class="menu-item menu-item-type-taxonomy"><a class="menu-link" href="/topics/section-%d">Section %d</a></li>`, l, l)
	}
	b.WriteString(`</ul></nav></header><div class="cookie-banner">We use cookies to improve your experience. Accept all cookies?</div>`)
	page := Page(a)
	start := strings.Index(page, "<main>")
	end := strings.Index(page, "</main>") + len("</main>")
	b.WriteString(page[start:end])
	b.WriteString(`<aside class="sidebar"><h3>Most read</h3><ul>`)
	for l := 0; l < 40; l++ {
		fmt.Fprintf(&b, `<li><a href="/story/%d"><span class="kicker">Story</span> Ten things to know about item %d this week</a></li>`, l, l)
	}
	b.WriteString(`</ul></aside><footer><ul>`)
	for l := 0; l < 30; l++ {
		fmt.Fprintf(&b, `<li><a href="/legal/%d">Footer link %d</a></li>`, l, l)
	}
	b.WriteString(`</ul><p>Copyright 2024 History Monthly. All rights reserved.</p></footer></body></html>`)
	a.HTML = b.String()
	return a
}
