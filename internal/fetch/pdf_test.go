package fetch

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"codeberg.org/go-pdf/fpdf"
	"github.com/ledongthuc/pdf"
)

// makePDF renders paragraphs on A4 pages with a core font, wrapping long
// paragraphs over several lines, the way a report generator would.
func makePDF(t *testing.T, title string, paragraphs ...string) []byte {
	t.Helper()
	doc := fpdf.New("P", "mm", "A4", "")
	doc.SetTitle(title, true)
	doc.SetAuthor("Ada Lovelace", true)
	doc.AddPage()
	doc.SetFont("Helvetica", "B", 16)
	doc.MultiCell(0, 8, title, "", "", false)
	doc.Ln(6)
	doc.SetFont("Helvetica", "", 11)
	for _, p := range paragraphs {
		if p == "\f" {
			doc.AddPage()
			continue
		}
		doc.MultiCell(0, 5, p, "", "", false)
		doc.Ln(5)
	}
	var b bytes.Buffer
	if err := doc.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const (
	pdfPara1 = "Tidal power turns the regular rise and fall of the sea into electricity. Because the Moon and the Sun drive the tides, the energy arrives on a timetable that can be predicted decades in advance."
	pdfPara2 = "The La Rance station in Brittany has worked this way since 1966 and still produces about 500 gigawatt-hours a year."
	pdfPara3 = "On the second page: tidal stream turbines sit on the seabed in channels where the current runs fast."
)

func TestFetchPDF(t *testing.T) {
	doc := makePDF(t, "How Tidal Power Works", pdfPara1, pdfPara2, "\f", pdfPara3)
	for _, ct := range []string{"application/pdf", "application/octet-stream", ""} {
		t.Run("content type "+ct, func(t *testing.T) {
			srv := serve(t, staticPage(ct, doc))
			page, err := newTestFetcher(t, Config{MaxChars: -1}).Fetch(context.Background(), srv.URL+"/paper.pdf")
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if page.ContentType != "application/pdf" || page.Title != "How Tidal Power Works" || page.Author != "Ada Lovelace" {
				t.Errorf("page = %q %q %q", page.ContentType, page.Title, page.Author)
			}
			// Each paragraph comes back whole: wrapped lines joined, words
			// separated, paragraphs apart.
			for _, p := range []string{pdfPara1, pdfPara2, pdfPara3} {
				if !strings.Contains(page.Markdown, p) {
					t.Errorf("text lacks paragraph %q:\n%s", p, page.Markdown)
				}
			}
			if !strings.Contains(page.Markdown, pdfPara1+"\n\n"+pdfPara2) {
				t.Errorf("paragraphs not separated by a blank line:\n%s", page.Markdown)
			}
		})
	}
}

func TestFetchPDFLimits(t *testing.T) {
	doc := makePDF(t, "Long report", strings.Repeat(pdfPara1+" ", 40))

	t.Run("trimmed like any page", func(t *testing.T) {
		srv := serve(t, staticPage("application/pdf", doc))
		page, err := newTestFetcher(t, Config{MaxChars: 500}).Fetch(context.Background(), srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if !page.Truncated || len([]rune(page.Markdown)) > 500 || page.Chars < 5000 {
			t.Errorf("Truncated %v, %d chars kept of %d", page.Truncated, len([]rune(page.Markdown)), page.Chars)
		}
	})
	t.Run("larger than MaxBytes", func(t *testing.T) {
		srv := serve(t, staticPage("application/pdf", doc))
		_, err := newTestFetcher(t, Config{MaxBytes: int64(len(doc) / 2)}).Fetch(context.Background(), srv.URL)
		if !errors.Is(err, ErrPDFTooLarge) {
			t.Fatalf("err = %v, want ErrPDFTooLarge", err)
		}
	})
}

func TestFetchBrokenPDF(t *testing.T) {
	valid := makePDF(t, "Title", pdfPara1)
	tests := []struct {
		name string
		body []byte
	}{
		{"header only", []byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n")},
		{"cut in the middle", valid[:len(valid)/2]},
		{"garbled body", append(append([]byte{}, valid[:200]...), bytes.Repeat([]byte("\x00\xff"), 2000)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, staticPage("application/pdf", tt.body))
			_, err := newTestFetcher(t, Config{}).Fetch(context.Background(), srv.URL)
			if err == nil || errors.Is(err, ErrUnsupportedType) {
				t.Fatalf("err = %v, want a read error", err)
			}
		})
	}
}

func TestPDFWithoutText(t *testing.T) {
	doc := fpdf.New("P", "mm", "A4", "")
	doc.AddPage()
	doc.Rect(10, 10, 50, 50, "F") // a drawing, no text layer
	var b bytes.Buffer
	if err := doc.Output(&b); err != nil {
		t.Fatal(err)
	}
	_, err := extractPDF(b.Bytes())
	if !errors.Is(err, ErrNoContent) {
		t.Fatalf("err = %v, want ErrNoContent", err)
	}
}

func TestPageText(t *testing.T) {
	glyphs := func(specs ...any) []pdf.Text {
		// specs: x, y, text; each glyph 5 points wide per character.
		var out []pdf.Text
		for i := 0; i < len(specs); i += 3 {
			x, y, s := specs[i].(float64), specs[i+1].(float64), specs[i+2].(string)
			out = append(out, pdf.Text{X: x, Y: y, W: 5 * float64(len(s)), FontSize: 10, S: s})
		}
		return out
	}
	tests := []struct {
		name string
		in   []pdf.Text
		want string
	}{
		{"gaps are spaces, touching glyphs a word", glyphs(0.0, 700.0, "Ti", 10.0, 700.0, "de", 30.0, 700.0, "power"), "Tide power"},
		{"wrapped lines joined", glyphs(0.0, 700.0, "first line", 0.0, 688.0, "second line"), "first line second line"},
		{"hyphenated word rejoined", glyphs(0.0, 700.0, "an exam-", 0.0, 688.0, "ple here"), "an example here"},
		{"other hyphens kept", glyphs(0.0, 700.0, "Jean-", 0.0, 688.0, "Paul had COVID-", 0.0, 676.0, "19 twice"), "Jean-Paul had COVID-19 twice"},
		{"wide gap is a paragraph", glyphs(0.0, 700.0, "one", 0.0, 688.0, "two", 0.0, 650.0, "three"), "one two\n\nthree"},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		if got := pageText(tt.in); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
