package spaces

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"

	"github.com/sova-ai/sova/internal/pdfpages"
)

// pdfLine is one line of text on a PDF page.
type pdfLine struct {
	text string
	size float64 // largest font size on the line
	y    float64 // baseline, from the bottom of the page
	page int
}

// parsePDF rebuilds lines, paragraphs and headings from the positioned
// characters of each page: characters on one baseline form a line, a gap
// wider than a fraction of the font size is a space, extra vertical space
// starts a paragraph, and short lines set larger than the body text are
// headings. The pages come from pdfpages, which refuses the page trees
// the library cannot walk. The PDF library panics on some malformed
// files; that becomes an error. It runs in a worker process (parse.go).
func parsePDF(data []byte) (p *parsed, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("malformed PDF: %v", r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if strings.Contains(err.Error(), "encrypt") || strings.Contains(err.Error(), "password") {
			return nil, errors.New("the PDF is encrypted; save an unprotected copy and add that")
		}
		return nil, fmt.Errorf("malformed PDF: %w", err)
	}
	p = &parsed{}
	if info := r.Trailer().Key("Info"); !info.IsNull() {
		p.title = strings.TrimSpace(info.Key("Title").Text())
	}
	var (
		lines []pdfLine
		sizes = map[int]int{} // font size (rounded to a tenth) → characters set in it
		total int
	)
	pages, _, err := pdfpages.Pages(r, 0)
	if err != nil {
		return nil, err
	}
	for i, page := range pages {
		n := i + 1
		pl := pageLines(page, n, sizes)
		if len(pl) == 0 {
			// No positioned text (unusual operators): the page's plain text
			// still gives its words.
			text, _ := page.GetPlainText(nil)
			for _, l := range strings.Split(text, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					pl = append(pl, pdfLine{text: l, page: n})
				}
			}
		}
		for _, l := range pl {
			total += len(l.text)
		}
		if total > maxTextBytes {
			return nil, fmt.Errorf("%w: the PDF holds more than %d MiB of text", ErrTooMuchText, maxTextBytes>>20)
		}
		lines = append(lines, pl...)
	}
	p.blocks = pdfBlocks(lines, bodySize(sizes))
	return p, nil
}

// pageLines groups a page's characters into lines. Fonts without width
// tables (the standard 14) report no glyph widths; a width of half the
// font size stands in, and only a wide gap counts as a space.
func pageLines(page pdf.Page, n int, sizes map[int]int) []pdfLine {
	var (
		out      []pdfLine
		cur      strings.Builder
		line     pdfLine
		lastEnd  float64
		started  bool
		lastRune rune
	)
	flush := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			line.text = strings.Join(strings.Fields(t), " ")
			out = append(out, line)
		}
		cur.Reset()
		started = false
	}
	for _, t := range page.Content().Text {
		if t.S == "" || t.S == "\n" {
			continue
		}
		size := math.Abs(t.FontSize)
		if size < 1 {
			size = 10
		}
		w, gap := t.W, size*0.18
		if w == 0 {
			w, gap = size*0.5, size*0.6
		}
		switch {
		case !started:
		case math.Abs(t.Y-line.y) > size*0.5 || t.X < lastEnd-size*3:
			flush()
		case t.X-lastEnd > gap && lastRune != ' ' && t.S != " ":
			cur.WriteByte(' ')
		}
		if !started {
			line = pdfLine{y: t.Y, page: n}
			started = true
		}
		line.size = max(line.size, size)
		cur.WriteString(t.S)
		lastEnd = t.X + w
		lastRune, _ = utf8.DecodeLastRuneInString(t.S)
		sizes[int(math.Round(size*10))] += utf8.RuneCountInString(t.S)
	}
	flush()
	return out
}

// bodySize is the font size most characters are set in.
func bodySize(sizes map[int]int) float64 {
	best, n := 0, -1
	for s, c := range sizes {
		if c > n || (c == n && s < best) {
			best, n = s, c
		}
	}
	return float64(best) / 10
}

// pdfBlocks joins lines into paragraphs and headings.
func pdfBlocks(lines []pdfLine, body float64) []block {
	// Heading levels: each distinct size clearly above the body text, the
	// largest first.
	var headingSizes []int
	isHeading := func(l pdfLine) bool {
		return body > 0 && l.size >= body*1.15 && utf8.RuneCountInString(l.text) <= 150 && strings.IndexFunc(l.text, unicode.IsLetter) >= 0
	}
	for _, l := range lines {
		if isHeading(l) {
			s := int(math.Round(l.size * 10))
			if !slices.Contains(headingSizes, s) {
				headingSizes = append(headingSizes, s)
			}
		}
	}
	slices.Sort(headingSizes)
	slices.Reverse(headingSizes)
	level := func(size float64) int {
		i := slices.Index(headingSizes, int(math.Round(size*10)))
		return min(i+1, 3)
	}

	var (
		out  []block
		cur  strings.Builder
		curB block
		prev *pdfLine
	)
	flush := func() {
		if cur.Len() > 0 {
			curB.text = cur.String()
			out = append(out, curB)
			cur.Reset()
		}
	}
	for i := range lines {
		l := lines[i]
		heading := isHeading(l)
		kind := blockText
		if heading {
			kind = blockHeading
		}
		newBlock := prev == nil || l.page != prev.page || kind != curB.kind ||
			(heading && level(l.size) != curB.level)
		if !newBlock && prev != nil {
			gap := prev.y - l.y
			if gap < 0 || gap > max(prev.size, l.size)*1.6 {
				newBlock = true
			}
		}
		if newBlock {
			flush()
			curB = block{kind: kind, page: l.page}
			if heading {
				curB.level = level(l.size)
			}
			cur.WriteString(l.text)
		} else {
			joinLine(&cur, l.text)
		}
		prev = &lines[i]
	}
	flush()
	return out
}

// joinLine appends the next line of a paragraph, undoing end-of-line
// hyphenation ("infor-" + "mation").
func joinLine(b *strings.Builder, next string) {
	s := b.String()
	first, _ := utf8.DecodeRuneInString(next)
	before, _ := utf8.DecodeLastRuneInString(strings.TrimSuffix(s, "-"))
	if strings.HasSuffix(s, "-") && unicode.IsLetter(before) && unicode.IsLower(first) {
		b.Reset()
		b.WriteString(s[:len(s)-1])
		b.WriteString(next)
		return
	}
	b.WriteByte(' ')
	b.WriteString(next)
}
