// Package report renders a research report written in Markdown as a PDF:
// a title block, headings with a PDF outline, paragraphs with inline
// styles and clickable links, lists, quotes, code, tables and page numbers,
// set in embedded fonts that cover Latin and Cyrillic.
//
// The Markdown is parsed with goldmark (CommonMark with the GitHub tables,
// strikethrough, autolink and task list extensions) and laid out here, line
// by line, so that long URLs wrap and stay clickable and nothing in the
// input can make the renderer panic or run away.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/sova-ai/sova/internal/lang"
)

// MaxInput is the largest Markdown document PDF accepts, in bytes: about
// six hundred pages, far beyond any report, and small enough that rendering
// stays within seconds.
const MaxInput = 2 << 20

// MaxPages is the longest document PDF renders. Page count, not input
// size, is what the output and the time to write it grow with, and a
// document of headings alone would otherwise run to thousands of pages.
const MaxPages = 2000

// ErrTooLarge is returned for input over MaxInput or a document that would
// run over MaxPages.
var ErrTooLarge = errors.New("report: markdown too large to render")

// Creator is the application named in the document's metadata.
const Creator = "Sova"

// Options describe the document around the Markdown.
type Options struct {
	// Title heads the first page and the document metadata. When empty,
	// a level-one heading that opens the Markdown is the title.
	Title string
	// Author goes to the metadata and under the title, when set.
	Author string
	// Date is shown under the title and used as the creation date; the
	// zero time shows none and stamps the time of rendering.
	Date time.Time
	// Language is the document's language code ("ru", "en"), used for the
	// date format, a few labels and the PDF's /Lang; detected from the
	// text when empty.
	Language string
	// Images gives the PNG images the Markdown references (a run's
	// charts); an image on a line of its own is then embedded. Nil: every
	// image is its description and link.
	Images ImageSource
}

// PDF renders markdown as a PDF document written to w.
func PDF(w io.Writer, markdown string, opts Options) (err error) {
	if len(markdown) > MaxInput {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(markdown), MaxInput)
	}
	m, err := fontMetrics()
	if err != nil {
		return fmt.Errorf("report: load fonts: %w", err)
	}
	// The renderer is written not to panic; this keeps a bug in it or in
	// the PDF library from taking the server down with it.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("report: rendering failed: %v", p)
		}
	}()

	// fpdf mangles text that is not UTF-8, so nothing else reaches it.
	src := []byte(defuse(strings.ToValidUTF8(markdown, "\uFFFD")))
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	doc := md.Parser().Parse(text.NewReader(src))

	r := newRenderer(m, src, opts)
	r.document(doc)
	if r.full {
		return fmt.Errorf("%w: it runs over %d pages", ErrTooLarge, MaxPages)
	}
	var buf bytes.Buffer
	if err := r.pdf.Output(&buf); err != nil {
		return fmt.Errorf("report: write pdf: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("report: write pdf: %w", err)
	}
	return nil
}

// Page geometry and colours, in points.
const (
	pageMarginX      = 64.0
	pageMarginTop    = 60.0
	pageMarginBottom = 64.0
	headerY          = 34.0 // baseline of the running header
	footerY          = 36.0 // baseline of the footer, from the bottom edge

	bodySize    = 10.5
	bodyLeading = 1.45
	paraGap     = 7.0
)

var (
	colorText    = rgb{34, 34, 38}
	colorHeading = rgb{22, 44, 78}
	colorMuted   = rgb{112, 117, 125}
	colorLink    = rgb{22, 92, 196}
	colorRule    = rgb{205, 209, 215}
	colorCodeBg  = rgb{244, 245, 247}
	colorQuote   = rgb{74, 80, 90}
	colorBar     = rgb{196, 205, 220}
	colorTableHd = rgb{234, 239, 246}
	colorZebra   = rgb{249, 250, 252}
)

var bodyStyle = textStyle{size: bodySize, leading: bodyLeading, color: colorText}

// renderer draws one document.
type renderer struct {
	pdf    *fpdf.Fpdf
	m      *metrics
	src    []byte
	lang   string
	title  string
	author string
	date   time.Time

	pageW, pageH float64
	left, width  float64 // the text column
	maxY         float64 // bottom of the text area

	y    float64 // where the next block starts
	full bool    // MaxPages reached: stop laying out
	gap  float64 // space owed before the next block, dropped at a page top

	// Font and colour last set, so that runs in one style cost one
	// operator.
	font      fontID
	fontSize  float64
	textColor rgb
	loaded    [numFonts]bool

	quotes   []*quoteBar // block quotes open on this page
	outline  int         // level of the last PDF outline entry, -1 before any
	minLevel int         // heading level that maps to the outline's top

	images   ImageSource // nil: no images embedded
	embedded int         // images registered so far
}

// quoteBar is the rule beside an open block quote.
type quoteBar struct {
	x   float64
	top float64 // where it starts on the current page
}

func newRenderer(m *metrics, src []byte, opts Options) *renderer {
	pdf := fpdf.New("P", "pt", "A4", "")
	// The page-count alias must be set before fonts are added: it decides
	// which characters go into the font subsets from the start.
	pdf.AliasNbPages("{nb}")
	pdf.SetAutoPageBreak(false, 0)
	pdf.SetMargins(pageMarginX, pageMarginTop, pageMarginX)
	pdf.SetCellMargin(0)
	r := &renderer{pdf: pdf, m: m, src: src, outline: -1, font: numFonts, images: opts.Images}
	r.pageW, r.pageH = pdf.GetPageSize()
	r.left = pageMarginX
	r.width = r.pageW - 2*pageMarginX
	r.maxY = r.pageH - pageMarginBottom

	r.title = oneLine(opts.Title)
	r.author = oneLine(opts.Author)
	r.date = opts.Date
	tag := languageTag(opts.Language)
	if tag == "" {
		sample := src
		if len(sample) > 8<<10 {
			sample = sample[:8<<10]
		}
		tag = lang.Detect(r.title + " " + string(sample)).Code
	}
	r.lang, _, _ = strings.Cut(tag, "-")

	pdf.SetCreator(Creator, true)
	pdf.SetProducer(Creator, true)
	pdf.SetLang(tag)
	if r.author != "" {
		pdf.SetAuthor(r.author, true)
	}
	if !opts.Date.IsZero() {
		pdf.SetCreationDate(opts.Date)
		pdf.SetModificationDate(opts.Date)
	}
	return r
}

// maxTitle is the most characters of a title or author kept: a heading can
// be any length, a title block and a running header cannot.
const maxTitle = 300

// oneLine squeezes s onto one line of at most maxTitle characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if t := truncateRunes(s, maxTitle); t != s {
		return strings.TrimRight(t, " ") + "…"
	}
	return s
}

// languageTag returns a well-formed language tag ("ru", "en-GB") in lower
// case, or "" for anything else: it goes into the PDF unescaped.
func languageTag(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || len(s) > 16 {
		return ""
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && c != '-' && (c < '0' || c > '9') {
			return ""
		}
	}
	return s
}

// document renders the parsed Markdown.
func (r *renderer) document(doc ast.Node) {
	first := doc.FirstChild()
	if h, ok := first.(*ast.Heading); ok && h.Level == 1 {
		text := oneLine(plainText(h, r.src))
		if r.title == "" || strings.EqualFold(text, r.title) {
			// The report's own title line is the title block.
			if r.title == "" {
				r.title = text
			}
			doc.RemoveChild(doc, h)
		}
	}
	r.minLevel = 6
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok && h.Level < r.minLevel {
			r.minLevel = h.Level
		}
	}
	r.pdf.SetTitle(r.title, true)
	r.addPage()
	r.titleBlock()
	r.blocks(box{x: r.left, w: r.width}, doc)
	r.footer()
}

// box is the horizontal extent blocks are set in, with what nested blocks
// inherit.
type box struct {
	x, w   float64
	color  *rgb    // text colour in a block quote
	marker *marker // list marker waiting for the item's first line
	depth  int     // list nesting
}

// marker is a list item's bullet or number, drawn beside the first line of
// the item's content.
type marker struct {
	text  string
	right float64 // the marker ends here
	done  bool
}

// addPage starts a page: the running header on all but the first.
func (r *renderer) addPage() {
	r.pdf.AddPage()
	r.font = numFonts // state is set again on each page
	r.textColor = rgb{-1, -1, -1}
	r.y = pageMarginTop
	r.gap = 0
	if r.pdf.PageNo() > 1 && r.title != "" {
		r.setFont(fontRegular, 8)
		r.setTextColor(colorMuted)
		r.pdf.Text(r.left, headerY, r.fit(r.title, fontRegular, 8, r.width))
		r.hline(r.left, r.left+r.width, headerY+6, 0.4, colorRule)
	}
	for _, q := range r.quotes {
		q.top = r.y
	}
}

// fit returns s, shortened with an ellipsis if it is wider than w.
func (r *renderer) fit(s string, f fontID, size, w float64) string {
	s = r.m.clean(s, f)
	if r.m.width(s, f, size) <= w {
		return s
	}
	room := w - r.m.width("…", f, size)
	acc := 0.0
	for i, c := range s {
		acc += r.m.runeWidth(c, f, size)
		if acc > room {
			return s[:i] + "…"
		}
	}
	return s
}

// newPage ends the page and starts the next one. At MaxPages it marks the
// document full instead; the loops that lay out content stop on that, and
// what is still drawn lands on the last page of a document PDF discards.
func (r *renderer) newPage() {
	if r.pdf.PageNo() >= MaxPages {
		r.full = true
		r.y = pageMarginTop
		return
	}
	for _, q := range r.quotes {
		r.drawBar(q, r.y)
	}
	r.footer()
	r.addPage()
}

// footer numbers the current page.
func (r *renderer) footer() {
	r.setFont(fontRegular, 8.5)
	r.setTextColor(colorMuted)
	n := strconv.Itoa(r.pdf.PageNo())
	s := n + " / {nb}"
	// The total replaces "{nb}" after the last page; centre on a total as
	// wide as this page's number, which is right or one digit off.
	w := r.m.width(n+" / "+n, fontRegular, 8.5)
	r.pdf.Text((r.pageW-w)/2, r.pageH-footerY, s)
}

// need makes room for h points of content after the pending gap, starting a
// new page when the current one is too full. At a page top the gap goes.
func (r *renderer) need(h float64) {
	if r.y+r.gap+h > r.maxY && r.y > pageMarginTop+0.5 {
		r.newPage()
		return
	}
	r.y += r.gap
	r.gap = 0
}

// space asks for at least h points before the next block.
func (r *renderer) space(h float64) {
	if h > r.gap {
		r.gap = h
	}
}

func (r *renderer) setFont(f fontID, size float64) {
	if f == r.font && size == r.fontSize {
		return
	}
	if !r.loaded[f] {
		addFont(r.pdf, f)
		r.loaded[f] = true
	}
	r.pdf.SetFont(faces[f].family, faces[f].style, size)
	r.font, r.fontSize = f, size
}

func (r *renderer) setTextColor(c rgb) {
	if c == r.textColor {
		return
	}
	r.pdf.SetTextColor(c.r, c.g, c.b)
	r.textColor = c
}

func (r *renderer) fillRect(x, y, w, h float64, c rgb) {
	r.pdf.SetFillColor(c.r, c.g, c.b)
	r.pdf.Rect(x, y, w, h, "F")
}

func (r *renderer) hline(x1, x2, y, width float64, c rgb) {
	r.pdf.SetDrawColor(c.r, c.g, c.b)
	r.pdf.SetLineWidth(width)
	r.pdf.Line(x1, y, x2, y)
}

func (r *renderer) drawBar(q *quoteBar, bottom float64) {
	if bottom > q.top {
		r.fillRect(q.x, q.top, 2.2, bottom-q.top, colorBar)
	}
}

// drawLine draws a laid-out line whose box starts at x, y and is w wide.
func (r *renderer) drawLine(ln line, x, y, w float64, ts textStyle) {
	switch ts.align {
	case alignCenter:
		x += (w - ln.w) / 2
	case alignRight:
		x += w - ln.w
	}
	lh := ts.lineHeight()
	// Centre capitals in the line: the Go fonts' cap height is 0.69 em.
	baseline := y + lh/2 + 0.345*ts.size

	// Inline code backgrounds go first, under the text, one box for a run
	// of code from the same span.
	for i := 0; i < len(ln.frags); {
		f := ln.frags[i]
		if f.st&styleCode == 0 {
			i++
			continue
		}
		j := i + 1
		for j < len(ln.frags) && ln.frags[j].st&styleCode != 0 && ln.frags[j].span == f.span {
			j++
		}
		last := ln.frags[j-1]
		top := baseline - 0.80*f.size - 1
		r.fillRect(x+f.x-1.5, top, last.x+last.w-f.x+3, 1.04*f.size+2, colorCodeBg)
		i = j
	}
	for _, f := range ln.frags {
		r.setFont(f.font, f.size)
		c := ts.color
		if f.link != "" {
			c = colorLink
		}
		r.setTextColor(c)
		r.pdf.Text(x+f.x, baseline, f.text)
		if f.st&styleStrike != 0 {
			r.pdf.SetDrawColor(c.r, c.g, c.b)
			r.pdf.SetLineWidth(0.6)
			r.pdf.Line(x+f.x, baseline-0.3*f.size, x+f.x+f.w, baseline-0.3*f.size)
		}
	}
	// One link area for each run of a target, spaces included.
	for i := 0; i < len(ln.frags); {
		f := ln.frags[i]
		if f.link == "" {
			i++
			continue
		}
		j := i + 1
		for j < len(ln.frags) && ln.frags[j].link == f.link {
			j++
		}
		last := ln.frags[j-1]
		r.pdf.LinkString(x+f.x, y, last.x+last.w-f.x, lh, f.link)
		i = j
	}
}

// lines draws laid-out lines in the box, breaking pages between lines. The
// first line of a list item gets the item's marker.
func (r *renderer) lines(b box, lns []line, ts textStyle) {
	lh := ts.lineHeight()
	for _, ln := range lns {
		if r.full {
			return
		}
		r.need(lh)
		r.drawMarker(b, r.y, ts)
		r.drawLine(ln, b.x, r.y, b.w, ts)
		r.y += lh
	}
}

// drawMarker draws a pending list marker beside a line at y set in ts.
func (r *renderer) drawMarker(b box, y float64, ts textStyle) {
	mk := b.marker
	if mk == nil || mk.done {
		return
	}
	mk.done = true
	baseline := y + ts.lineHeight()/2 + 0.345*ts.size
	t := r.m.clean(mk.text, fontRegular)
	r.setFont(fontRegular, bodySize)
	c := colorText
	if b.color != nil {
		c = *b.color
	}
	r.setTextColor(c)
	r.pdf.Text(mk.right-r.m.width(t, fontRegular, bodySize), baseline, t)
}
