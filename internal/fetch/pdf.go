package fetch

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"

	"github.com/sova-ai/sova/internal/isolate"
	"github.com/sova-ai/sova/internal/pdfpages"
)

// maxPDFPages bounds how many pages of a PDF are read; the text is trimmed
// to a few thousand characters anyway, and each page costs parsing time.
const maxPDFPages = 60

// maxPDFChars bounds the text read from a PDF's pages.
const maxPDFChars = 200_000

// ErrPDFTooLarge is matched (errors.Is) when a PDF is larger than the body
// limit: unlike HTML, a PDF cannot be read from its beginning alone (its
// index sits at the end).
var ErrPDFTooLarge = errors.New("the PDF is larger than the fetch size limit (SOVA_FETCH_MAX_BYTES)")

// pdfKind is the isolated worker that reads a PDF found on the web.
const pdfKind = "fetch.pdf"

func init() {
	isolate.Register(pdfKind, "the PDF", pdfWorker, ErrNoContent, pdfpages.ErrPageTree, pdfpages.ErrTooManyPages)
}

// pdfResult is what the worker sends back.
type pdfResult struct {
	Title, Author, Markdown string
	Cut                     bool
}

// readPDF extracts the text of a PDF in a worker process, under the
// fetcher's parse limits: a PDF is parsed by a third-party library that
// loops forever or swells on crafted files, and only a process can be
// stopped (see internal/isolate).
func (f *Fetcher) readPDF(ctx context.Context, body []byte) (extraction, error) {
	out, err := isolate.Run(ctx, f.cfg.Parse, pdfKind, body)
	if err != nil {
		return extraction{}, err
	}
	var r pdfResult
	if err := gob.NewDecoder(bytes.NewReader(out)).Decode(&r); err != nil {
		return extraction{}, fmt.Errorf("reading the PDF: %w", err)
	}
	return extraction{title: r.Title, author: r.Author, markdown: r.Markdown, cut: r.Cut}, nil
}

func pdfWorker(body []byte) ([]byte, error) {
	ex, err := extractPDF(body)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = gob.NewEncoder(&b).Encode(pdfResult{Title: ex.title, Author: ex.author, Markdown: ex.markdown, Cut: ex.cut})
	return b.Bytes(), err
}

// extractPDF reads the text of a PDF document: the pages' text in content
// order, words separated where the glyphs leave a gap, lines joined into
// paragraphs, paragraphs separated by blank lines. The title and author
// come from the document information dictionary. It stops after
// maxPDFPages pages or maxPDFChars characters, marking the result cut.
// A page tree the library cannot walk is refused (pdfpages). It runs in
// the worker process (readPDF).
func extractPDF(body []byte) (ex extraction, err error) {
	// The parser panics on some malformed files.
	defer func() {
		if r := recover(); r != nil {
			ex, err = extraction{}, fmt.Errorf("reading the PDF failed: %v", r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return extraction{}, fmt.Errorf("reading the PDF: %w", err)
	}
	info := r.Trailer().Key("Info")
	ex.title = cleanLine(info.Key("Title").Text())
	ex.author = cleanLine(info.Key("Author").Text())

	pages, more, err := pdfpages.Pages(r, maxPDFPages)
	if err != nil {
		return extraction{}, err
	}
	ex.cut = more
	var b strings.Builder
	for _, p := range pages {
		if utf8.RuneCountInString(b.String()) > maxPDFChars {
			ex.cut = true
			break
		}
		text := pageText(p.Content().Text)
		if text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(text)
	}
	ex.markdown = tidyMarkdown(b.String())
	if ex.markdown == "" {
		return ex, fmt.Errorf("%w: the PDF has no text layer (a scan?)", ErrNoContent)
	}
	return ex, nil
}

// pageText lays out the glyphs of one page as text. Glyphs on the same
// baseline form a line; a horizontal gap wider than a fifth of the font
// size is a space. A line break inside a paragraph becomes a space (or
// joins a word hyphenated across lines); a vertical gap well over the line
// height starts a new paragraph.
func pageText(glyphs []pdf.Text) string {
	var (
		paras   [][]string // lines of each paragraph
		line    strings.Builder
		prev    *pdf.Text
		lineGap float64 // the usual distance between the lines of this paragraph
	)
	endLine := func(newPara bool) {
		if t := strings.TrimSpace(line.String()); t != "" {
			if len(paras) == 0 {
				paras = append(paras, nil)
			}
			paras[len(paras)-1] = append(paras[len(paras)-1], t)
		}
		line.Reset()
		if newPara && len(paras) > 0 && len(paras[len(paras)-1]) > 0 {
			paras = append(paras, nil)
		}
	}
	for i := range glyphs {
		g := &glyphs[i]
		if g.S == "" {
			continue
		}
		if prev != nil {
			size := math.Max(1, math.Max(prev.FontSize, g.FontSize))
			dy := prev.Y - g.Y
			switch {
			case math.Abs(dy) < size*0.5: // same line
				if g.X-(prev.X+prev.W) > size*0.2 && line.Len() > 0 {
					line.WriteByte(' ')
				}
			case dy > 0 && (lineGap == 0 && dy < size*1.8 || lineGap > 0 && dy < lineGap*1.4):
				// next line of the same paragraph
				if lineGap == 0 {
					lineGap = dy
				}
				endLine(false)
			default: // a new paragraph, column or region
				lineGap = 0
				endLine(true)
			}
		}
		line.WriteString(g.S)
		prev = g
	}
	endLine(false)

	var b strings.Builder
	for _, lines := range paras {
		if len(lines) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		for j, l := range lines {
			if j > 0 && !strings.HasSuffix(lines[j-1], "-") {
				b.WriteByte(' ')
			}
			if j+1 < len(lines) && splitWord(l, lines[j+1]) {
				l = l[:len(l)-1]
			}
			b.WriteString(l)
		}
	}
	return b.String()
}

// splitWord reports whether line ends in a word split by a hyphen across
// lines: a hyphen after a lower-case letter, and a lower-case letter
// starting the next line ("exam-" "ple"). Other line-final hyphens
// ("COVID-" "19", "Jean-" "Paul") are kept, and the lines joined without
// a space.
func splitWord(line, next string) bool {
	if !strings.HasSuffix(line, "-") {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(line[:len(line)-1])
	after, _ := utf8.DecodeRuneInString(next)
	return unicode.IsLower(before) && unicode.IsLower(after)
}
