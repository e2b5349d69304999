package report

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"codeberg.org/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gobolditalic"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// fontID names one of the embedded faces.
type fontID uint8

const (
	fontRegular fontID = iota
	fontBold
	fontItalic
	fontBoldItalic
	fontMono
	numFonts
)

// faces are the Go fonts: one family with Latin, Cyrillic and Greek in all
// four styles plus a monospace face with the same coverage, under a BSD
// licence, already vendored with golang.org/x/image.
var faces = [numFonts]struct {
	family, style string
	ttf           []byte
}{
	fontRegular:    {"go", "", goregular.TTF},
	fontBold:       {"go", "B", gobold.TTF},
	fontItalic:     {"go", "I", goitalic.TTF},
	fontBoldItalic: {"go", "BI", gobolditalic.TTF},
	fontMono:       {"gomono", "", gomono.TTF},
}

// metrics holds the advance width of every character each face has, in
// thousandths of the font size, rounded as fpdf rounds them so that line
// breaking here agrees with what fpdf draws. A character missing from a map
// has no glyph in that face.
type metrics struct {
	widths [numFonts]map[rune]uint16
}

// fontMetrics is computed once per process: scanning the Basic Multilingual
// Plane of five faces takes a few milliseconds and the result never changes.
var fontMetrics = sync.OnceValues(func() (*metrics, error) {
	m := &metrics{}
	var buf sfnt.Buffer
	for id, face := range faces {
		f, err := sfnt.Parse(face.ttf)
		if err != nil {
			return nil, fmt.Errorf("parse font %s%s: %w", face.family, face.style, err)
		}
		upem := float64(f.UnitsPerEm())
		ppem := fixed.Int26_6(f.UnitsPerEm()) << 6 // advances in font units
		w := make(map[rune]uint16, 1024)
		// fpdf keeps widths for the Basic Multilingual Plane only.
		for r := rune(1); r < 0x10000; r++ {
			g, err := f.GlyphIndex(&buf, r)
			if err != nil || g == 0 {
				continue
			}
			adv, err := f.GlyphAdvance(&buf, g, ppem, 0)
			if err != nil {
				continue
			}
			w[r] = uint16(math.Round(float64(adv) / 64 * 1000 / upem))
		}
		m.widths[id] = w
	}
	return m, nil
})

// addFont registers an embedded face with a document. Faces are added on
// first use: fpdf parses and hashes each one and embeds every face it was
// given, used or not.
func addFont(pdf *fpdf.Fpdf, f fontID) {
	// fpdf writes into the font bytes it is given while subsetting, so each
	// document gets its own copy: the embedded fonts are shared by every
	// goroutine rendering at the same time.
	pdf.AddUTF8FontFromBytes(faces[f].family, faces[f].style, bytes.Clone(faces[f].ttf))
}

// width is the width of s set in font f at size points. s must already be
// clean for f.
func (m *metrics) width(s string, f fontID, size float64) float64 {
	w := m.widths[f]
	total := 0
	for _, r := range s {
		total += int(w[r])
	}
	return float64(total) * size / 1000
}

// runeWidth is the width of one character, clean for f.
func (m *metrics) runeWidth(r rune, f fontID, size float64) float64 {
	return float64(m.widths[f][r]) * size / 1000
}

// substitutes stand in for characters the Go fonts lack but reports use.
var substitutes = map[rune]string{
	'✓': "+", '✔': "+", '✅': "+",
	'✗': "×", '✘': "×", '❌': "×",
	'☐': "□", '☑': "■", '☒': "■",
	'▸': "•", '►': "•", '‣': "•", '⁃': "–",
	'₽':      "RUB",
	'\u2011': "-", // non-breaking hyphen
}

// clean makes text printable in font f: tabs and odd spaces become spaces,
// control and formatting characters go, characters the face lacks get a
// look-alike, emoji and other pictographs are dropped, and anything else
// missing shows as U+FFFD so that the reader sees something was there.
// Newlines are kept; callers decide what they mean.
func (m *metrics) clean(s string, f fontID) string {
	w := m.widths[f]
	// A soft hyphen has a glyph but marks where a word may break; lines
	// break at spaces only here, so it has nothing to show.
	keep := func(r rune) bool {
		if r == '\n' {
			return true
		}
		_, has := w[r]
		return has && r >= ' ' && r != '\u00ad'
	}
	ok := utf8.ValidString(s)
	for _, r := range s {
		if !keep(r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if keep(r) {
			b.WriteRune(r)
			continue
		}
		switch {
		case r == '\t' || r == '\r' || r == '\f' || r == '\v':
			b.WriteByte(' ')
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		case unicode.IsControl(r), unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me, unicode.Sk):
			// zero-width joiners, variation selectors, soft hyphens,
			// combining marks the font cannot place: nothing to draw.
		default:
			if sub, found := substitutes[r]; found && m.has(sub, f) {
				b.WriteString(sub)
			} else if unicode.Is(unicode.So, r) || (r >= 0x1F000 && r <= 0x1FAFF) {
				// emoji and pictographs carry no text
			} else {
				b.WriteRune('\uFFFD')
			}
		}
	}
	return b.String()
}

// has reports whether face f has every character of s.
func (m *metrics) has(s string, f fontID) bool {
	for _, r := range s {
		if _, ok := m.widths[f][r]; !ok {
			return false
		}
	}
	return true
}
