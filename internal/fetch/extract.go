package fetch

import (
	"context"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/text/unicode/norm"

	"github.com/sova-ai/sova/internal/isolate"
)

// minMainChars is the Markdown length below which the trafilatura result
// is considered a miss and the longer of the two texts is kept.
const minMainChars = 100

// baselineChars is trafilatura's MinExtractedSize: below it, trafilatura
// replaces its result with a "baseline" scrape that repeats text (each
// paragraph, then the whole page text run together).
const baselineChars = 250

// extraction is what the extractors found in a page.
type extraction struct {
	title, markdown             string
	author, siteName, published string
	language                    string // <html lang>, when given
	extractor                   string // ExtractorTrafilatura or ExtractorReadability
	cut                         bool   // the document was too long and only its beginning was read
}

// Extract returns the title and the main content, as Markdown, of an HTML
// document. pageURL, when not empty, is used to make links absolute. The
// bytes may be in any charset the document declares (or UTF-8). Extract
// does no network access. The Markdown is not trimmed.
func Extract(htmlDoc []byte, pageURL string) (title, markdown string, err error) {
	title, markdown, _, err = ExtractCut(htmlDoc, pageURL)
	return title, markdown, err
}

// ExtractCut is Extract that also reports whether the document was too
// long and only its beginning was read (maxHTMLBytes of source,
// maxExtractChars of text), for callers that must say so: a document
// added to a space, unlike a page read for a question, is expected whole.
func ExtractCut(htmlDoc []byte, pageURL string) (title, markdown string, cut bool, err error) {
	var u *url.URL
	if pageURL != "" {
		if u, err = url.Parse(pageURL); err != nil {
			return "", "", false, fmt.Errorf("extract: page URL %q is not valid: %w", pageURL, err)
		}
	}
	ex, err := extractHTML(decode(htmlDoc, ""), u)
	if err != nil {
		return "", "", false, fmt.Errorf("extract: %w", err)
	}
	if strings.TrimSpace(ex.markdown) == "" {
		return ex.title, "", ex.cut, fmt.Errorf("extract: %w", ErrNoContent)
	}
	return ex.title, ex.markdown, ex.cut, nil
}

// maxHTMLBytes bounds the HTML source parsed into a tree: the extractors
// see at most maxExtractChars characters of it anyway, and the tree costs
// several times the source in memory.
const maxHTMLBytes = 5 << 20

// htmlSlots bounds the HTML extractions running at once, those abandoned
// at their deadline and still running included: a page that keeps the
// extractors busy holds its slot until they return, so such pages cannot
// pile up and take every core.
var htmlSlots = make(chan struct{}, 4*runtime.GOMAXPROCS(0))

// extractHTMLWithin runs extractHTML with a deadline. HTML is read in this
// process, not in a worker (internal/isolate): pages are the hot path and
// a worker's start costs far more than extracting a page (see
// docs/benchmarks.md). The input is bounded (maxHTMLBytes, and the
// extractors' own limits, prepareDocument), so an extraction ends; one
// that is still running at the deadline is abandoned and keeps its slot
// until it returns.
func extractHTMLWithin(ctx context.Context, timeout time.Duration, src string, pageURL *url.URL) (extraction, error) {
	select {
	case htmlSlots <- struct{}{}:
	case <-ctx.Done():
		return extraction{}, ctx.Err()
	}
	type result struct {
		ex  extraction
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() { <-htmlSlots }()
		ex, err := extractHTML(src, pageURL)
		done <- result{ex, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.ex, r.err
	case <-timer.C:
		return extraction{}, &isolate.LimitError{What: "the HTML page", Timeout: timeout}
	case <-ctx.Done():
		return extraction{}, ctx.Err()
	}
}

// extractHTML finds the main content of a UTF-8 HTML document: trafilatura
// and go-readability both extract it and chooseContent keeps one.
func extractHTML(src string, pageURL *url.URL) (extraction, error) {
	c, err := extractCandidates(src, pageURL)
	if err != nil {
		return extraction{}, err
	}
	return c.choose()
}

// candidates are both extractors' results for one page, before the choice.
type candidates struct {
	ex         extraction // metadata
	traf, read string     // Markdown
	terr, rerr error
	doc        *html.Node
}

// extractCandidates runs both extractors on a UTF-8 HTML document.
func extractCandidates(src string, pageURL *url.URL) (c candidates, err error) {
	var ex extraction
	// The extractors are large third-party code run on hostile input; a
	// panic in them must fail one page, not the server.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("content extraction failed on this page: %v", r)
		}
	}()

	cutSource := false
	if len(src) > maxHTMLBytes {
		n := maxHTMLBytes
		for n > 0 && !utf8.RuneStart(src[n]) {
			n--
		}
		src, cutSource = src[:n], true
	}
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return c, fmt.Errorf("parsing HTML: %w", err)
	}
	if h := findElement(doc, atom.Html); h != nil {
		ex.language = cleanLine(attr(h, "lang"))
	}
	cut := prepareDocument(doc)
	linkBase := documentBase(doc, pageURL)
	// Resolve links before trafilatura sees them: its own resolution joins
	// "../x" onto the page path as if the page were a directory, and it
	// ignores <base href>.
	absolutizeLinks(doc, linkBase)

	// The page text as a reader sees it, for putting back the spaces
	// trafilatura drops between inline elements.
	original := collapseSpace(textContent(doc))

	// Both extractors run and chooseContent keeps one text (see there for
	// the measurements). Trafilatura's own fallback (readability plus DOM
	// distiller) is off: it lowered F1 on the benchmark and nearly doubled
	// the time. Favour-recall and favour-precision scored no better than
	// balanced.
	res, terr := trafilatura.ExtractDocument(doc, trafilatura.Options{
		OriginalURL:     pageURL,
		EnableFallback:  false,
		Focus:           trafilatura.Balanced,
		ExcludeComments: true,
		IncludeLinks:    true,
		IncludeImages:   false,
		HtmlDateMode:    trafilatura.Fast,
	})
	var trafMD string
	if terr == nil && res != nil {
		ex.title = cleanLine(res.Metadata.Title)
		ex.author = cleanLine(res.Metadata.Author)
		ex.siteName = cleanLine(res.Metadata.Sitename)
		if !res.Metadata.Date.IsZero() {
			ex.published = res.Metadata.Date.Format("2006-01-02")
		}
		if res.ContentNode != nil {
			restoreSpaces(res.ContentNode, original)
			if trafMD, err = toMarkdown(res.ContentNode, linkBase); err != nil {
				return c, err
			}
			if utf8.RuneCountInString(res.ContentText) < baselineChars {
				trafMD = dropRepeatedBlocks(trafMD)
			}
		}
	}

	var readMD string
	rp := readability.NewParser()
	art, rerr := rp.ParseDocument(doc, pageURL)
	if rerr == nil && art.Node != nil {
		if readMD, err = toMarkdown(art.Node, linkBase); err != nil {
			return c, err
		}
		if ex.title == "" {
			ex.title = cleanLine(art.Title)
		}
		if ex.author == "" {
			ex.author = cleanLine(art.Byline)
		}
		if ex.siteName == "" {
			ex.siteName = cleanLine(art.SiteName)
		}
		if ex.published == "" && art.PublishedTime != nil {
			ex.published = art.PublishedTime.Format("2006-01-02")
		}
	}
	c.traf, c.read, c.terr, c.rerr, c.doc = trafMD, readMD, terr, rerr, doc
	ex.cut = cut || cutSource
	c.ex = ex
	return c, nil
}

// choose keeps one of the candidates' texts (see chooseContent) and fills
// in the title.
func (c candidates) choose() (extraction, error) {
	ex, trafMD, readMD, terr, rerr, doc := c.ex, c.traf, c.read, c.terr, c.rerr, c.doc
	if utf8.RuneCountInString(trafMD) < minMainChars {
		// Trafilatura found (almost) nothing: the longer text wins.
		ex.markdown, ex.extractor = trafMD, ExtractorTrafilatura
		if utf8.RuneCountInString(readMD) > utf8.RuneCountInString(trafMD) {
			ex.markdown, ex.extractor = readMD, ExtractorReadability
		}
	} else {
		ex.markdown, ex.extractor = chooseContent(trafMD, readMD)
	}
	var headline string
	ex.markdown = dropEdgeLinks(dropComments(ex.markdown))
	ex.markdown, headline = dropHeadline(ex.markdown, ex.title)
	if ex.title == "" {
		ex.title = headline
	}
	if ex.markdown == "" && terr != nil && rerr != nil {
		// Both gave up; say why, briefly.
		return ex, fmt.Errorf("%w: %v; %v", ErrNoContent, terr, rerr)
	}
	if ex.title == "" {
		ex.title = documentTitle(doc)
	}
	return ex, nil
}

// maxExtractChars and maxExtractElements bound the document handed to the
// extractors. Their cost grows faster than linearly with the text and the
// number of elements (a 5 MB page of plain paragraphs took trafilatura over
// ten seconds). Characters are counted without white space, so that
// indentation does not use up the budget. A cut at 30,000 was measured and
// not kept: it lowered all three evaluation sets (the Readability pages
// from 0.954 to 0.946: long articles lost their end) and saved no CPU time
// measurable on the article-extraction set (docs/benchmarks.md).
const (
	maxExtractChars    = 200_000
	maxExtractElements = 30_000
)

// prepareDocument drops what no extractor needs (scripts other than JSON-LD
// metadata, styles, embedded documents and media, comments) and cuts the
// document after maxExtractChars characters of text or maxExtractElements
// elements. It reports whether anything was cut.
func prepareDocument(doc *html.Node) bool {
	stripInactive(doc)
	return pruneDocument(doc, maxExtractChars, maxExtractElements)
}

func stripInactive(n *html.Node) {
	var next *html.Node
	for c := n.FirstChild; c != nil; c = next {
		next = c.NextSibling
		drop := false
		switch c.Type {
		case html.CommentNode:
			drop = true
		case html.ElementNode:
			switch c.DataAtom {
			case atom.Script:
				drop = !strings.EqualFold(strings.TrimSpace(attr(c, "type")), "application/ld+json")
			case atom.Noscript:
				if keepNoscript(n, c) {
					continue
				}
				drop = true
			case atom.Style, atom.Template, atom.Iframe, atom.Frame,
				atom.Object, atom.Embed, atom.Applet, atom.Svg, atom.Canvas:
				drop = true
			}
		}
		if drop {
			n.RemoveChild(c)
			continue
		}
		stripInactive(c)
	}
}

// noscriptChars is the text length from which a <noscript> element in the
// body is kept: a page without scripts shows it, and some blog engines put
// the whole post there. Shorter ones are "enable JavaScript" notices and
// tracking pixels.
const noscriptChars = 200

// keepNoscript replaces a <noscript> element of the body that holds at
// least noscriptChars characters of text with its content, parsed as HTML
// (the parser, scripting on, keeps it as raw text), and reports whether it
// did.
func keepNoscript(parent, ns *html.Node) bool {
	if ns.FirstChild == nil || ns.FirstChild != ns.LastChild || ns.FirstChild.Type != html.TextNode || !inBody(parent) {
		return false
	}
	raw := ns.FirstChild.Data
	if len(raw) < noscriptChars {
		return false
	}
	nodes, err := html.ParseFragment(strings.NewReader(raw), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		return false
	}
	wrap := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	for _, n := range nodes {
		wrap.AppendChild(n)
	}
	stripInactive(wrap)
	if countChars(textContent(wrap)) < noscriptChars {
		return false
	}
	parent.InsertBefore(wrap, ns)
	parent.RemoveChild(ns)
	return true
}

func inBody(n *html.Node) bool {
	for ; n != nil; n = n.Parent {
		if n.Type == html.ElementNode && n.DataAtom == atom.Body {
			return true
		}
	}
	return false
}

// countChars counts the characters of s as a reader sees them: a run of
// whitespace is one character.
func countChars(s string) int {
	n, space := 0, false
	for _, r := range s {
		if unicode.IsSpace(r) {
			if !space {
				n++
			}
			space = true
			continue
		}
		space = false
		n++
	}
	return n
}

// countContent counts the characters of s that are not white space.
func countContent(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

// pruneDocument removes everything after the first maxChars characters of
// text (JSON-LD script text not counted, nor white space, so that
// indentation does not use up the budget) or maxElems elements, and
// reports whether it removed anything.
func pruneDocument(doc *html.Node, maxChars, maxElems int) bool {
	chars, elems := 0, 0
	var over *html.Node              // the element that went over the element budget
	var walk func(n *html.Node) bool // true: budget spent, stop here
	walk = func(n *html.Node) bool {
		switch n.Type {
		case html.TextNode:
			l := countContent(n.Data)
			if chars+l <= maxChars {
				chars += l
				return false
			}
			keep := maxChars - chars
			for i, r := range n.Data {
				if unicode.IsSpace(r) {
					continue
				}
				if keep == 0 {
					n.Data = n.Data[:i]
					break
				}
				keep--
			}
			chars = maxChars
			return true
		case html.ElementNode:
			if elems++; elems > maxElems {
				over = n
				return true
			}
			if n.DataAtom == atom.Script {
				return false
			}
		}
		var next *html.Node
		for c := n.FirstChild; c != nil; c = next {
			next = c.NextSibling
			if !walk(c) {
				continue
			}
			if c == over {
				n.RemoveChild(c)
			}
			for s := next; s != nil; {
				after := s.NextSibling
				n.RemoveChild(s)
				s = after
			}
			return true
		}
		return false
	}
	return walk(doc)
}

// extractText handles text/plain and text/markdown: the text is kept as
// it is, and a Markdown document's first heading becomes the title.
func extractText(src, mediaType string) extraction {
	md := tidyMarkdown(src)
	ex := extraction{markdown: md}
	if mediaType != "text/plain" {
		for _, line := range strings.SplitN(md, "\n", 20) {
			if t, ok := strings.CutPrefix(line, "# "); ok {
				ex.title = cleanLine(t)
				break
			}
		}
	}
	return ex
}

// documentBase returns the URL relative links resolve against: the page
// URL, or the document's <base href> resolved against it.
func documentBase(doc *html.Node, pageURL *url.URL) *url.URL {
	b := findElement(doc, atom.Base)
	if b == nil {
		return pageURL
	}
	href := strings.TrimSpace(attr(b, "href"))
	if href == "" {
		return pageURL
	}
	u, err := url.Parse(href)
	if err != nil {
		return pageURL
	}
	if pageURL != nil {
		u = pageURL.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return pageURL
	}
	return u
}

func documentTitle(doc *html.Node) string {
	if t := findElement(doc, atom.Title); t != nil {
		return cleanLine(textContent(t))
	}
	if h := findElement(doc, atom.H1); h != nil {
		return cleanLine(textContent(h))
	}
	return ""
}

// removedElements are dropped, with their content, before conversion:
// active content, embedded documents and media, and form controls.
var removedElements = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Iframe: true,
	atom.Frame: true, atom.Frameset: true, atom.Object: true, atom.Embed: true,
	atom.Applet: true, atom.Template: true, atom.Svg: true, atom.Math: true,
	atom.Canvas: true, atom.Img: true, atom.Picture: true, atom.Source: true,
	atom.Video: true, atom.Audio: true, atom.Track: true, atom.Map: true,
	atom.Input: true, atom.Button: true, atom.Select: true, atom.Textarea: true,
	atom.Link: true, atom.Meta: true, atom.Head: true, atom.Dialog: true,
}

// toMarkdown converts an extracted content node to Markdown. The node is
// modified: unwanted elements go, links become absolute (or plain text when
// they cannot be followed).
func toMarkdown(n *html.Node, linkBase *url.URL) (string, error) {
	cleanTree(n, linkBase)
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
	))
	// The base plugin writes "<" and ">" in text as "&lt;" and "&gt;" so
	// that they cannot be read as raw HTML. The Markdown is read by a
	// model, not rendered, and the entities garble text such as Korean
	// titles in <...>, so they are turned back.
	conv.Register.TextTransformer(func(_ converter.Context, content string) string {
		return entityUnescaper.Replace(content)
	}, converter.PriorityLate)
	var opts []converter.ConvertOptionFunc
	if linkBase != nil {
		opts = append(opts, converter.WithDomain(linkBase.String()))
	}
	out, err := conv.ConvertNode(n, opts...)
	if err != nil {
		return "", fmt.Errorf("converting content to Markdown: %w", err)
	}
	return tidyMarkdown(string(out)), nil
}

func cleanTree(n *html.Node, linkBase *url.URL) {
	var next *html.Node
	for c := n.FirstChild; c != nil; c = next {
		next = c.NextSibling
		switch c.Type {
		case html.CommentNode, html.DoctypeNode:
			n.RemoveChild(c)
			continue
		case html.ElementNode:
			if removedElements[elementAtom(c)] || strings.EqualFold(c.Data, "svg") {
				n.RemoveChild(c)
				continue
			}
		}
		cleanTree(c, linkBase)
		if c.Type == html.ElementNode && elementAtom(c) == atom.A {
			fixLink(c, linkBase)
		}
	}
}

// absolutizeLinks rewrites every <a href> in the tree to an absolute http
// or https URL, and unwraps (keeping the text) links that have none.
func absolutizeLinks(doc *html.Node, linkBase *url.URL) {
	var dead []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.A {
			if abs := resolveLink(attr(n, "href"), linkBase); abs != "" {
				setAttr(n, "href", abs)
			} else {
				dead = append(dead, n)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, a := range dead {
		unwrap(a)
	}
}

// resolveLink returns href as an absolute http or https URL, or "" when
// it is empty, a bare fragment, or of another scheme (javascript:, data:,
// mailto:, ...).
func resolveLink(href string, linkBase *url.URL) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") {
		return ""
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if linkBase != nil {
		u = linkBase.ResolveReference(u)
	}
	if s := strings.ToLower(u.Scheme); (s != "http" && s != "https") || u.Host == "" {
		return ""
	}
	return u.String()
}

// fixLink makes an <a> href absolute, or unwraps the link (keeping its
// text) when it leads nowhere useful: fragments, javascript:, data:,
// mailto: and other non-web schemes.
func fixLink(a *html.Node, linkBase *url.URL) {
	abs := resolveLink(attr(a, "href"), linkBase)
	if abs == "" {
		unwrap(a)
		return
	}
	a.Attr = []html.Attribute{{Key: "href", Val: abs}}
}

func unwrap(n *html.Node) {
	p := n.Parent
	if p == nil {
		return
	}
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		n.RemoveChild(c)
		p.InsertBefore(c, n)
		c = next
	}
	p.RemoveChild(n)
}

var (
	entityUnescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">")
	invisibleSet    = strings.NewReplacer("\u00AD", "", "\u200B", "", "\uFEFF", "", "\r\n", "\n", "\r", "\n")
)

// tidyMarkdown normalises text: NFC, no soft hyphens or zero-width spaces,
// no trailing spaces or tabs, at most one blank line in a row. One pass
// over the lines: the two regular-expression replaces it did before were
// a sixth of the Markdown conversion.
func tidyMarkdown(s string) string {
	s = norm.NFC.String(invisibleSet.Replace(s))
	var b strings.Builder
	b.Grow(len(s))
	blank := 0
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			blank++
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
			if blank > 0 {
				b.WriteString("\n")
			}
		}
		blank = 0
		b.WriteString(line)
	}
	return strings.TrimSpace(b.String())
}

// dropRepeatedBlocks removes Markdown blocks that repeat earlier ones,
// and a last block that merely runs all the others together.
func dropRepeatedBlocks(md string) string {
	blocks := strings.Split(md, "\n\n")
	keys := make([]string, 0, len(blocks))
	seen := map[string]bool{}
	out := blocks[:0]
	for _, b := range blocks {
		k := squash(b)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, b)
		keys = append(keys, k)
	}
	if n := len(out); n >= 2 {
		last, rest := keys[n-1], 0
		pos := 0
		for _, k := range keys[:n-1] {
			i := strings.Index(last[pos:], k)
			if i < 0 {
				rest = -1
				break
			}
			pos += i + len(k)
			rest += len(k)
		}
		if rest >= 0 && rest*10 >= len(last)*7 {
			out = out[:n-1]
		}
	}
	return strings.Join(out, "\n\n")
}

// squash keeps only the letters and digits of s, for comparing text
// across formatting.
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return -1
	}, s)
}

// cleanLine collapses whitespace in a one-line value such as a title.
func cleanLine(s string) string {
	return strings.Join(strings.Fields(norm.NFC.String(invisibleSet.Replace(s))), " ")
}

func findElement(n *html.Node, a atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findElement(c, a); f != nil {
			return f
		}
	}
	return nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

func setAttr(n *html.Node, key, val string) {
	for i, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

func textContent(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
