package spaces

import (
	"archive/zip"
	"bytes"
	"errors"
	"strings"
	"testing"

	"codeberg.org/go-pdf/fpdf"
)

// texts renders blocks as "#2 Heading" and "paragraph" lines, for
// comparing.
func texts(blocks []block) []string {
	var out []string
	for _, b := range blocks {
		if b.kind == blockHeading {
			out = append(out, strings.Repeat("#", b.level)+" "+b.text)
		} else {
			out = append(out, b.text)
		}
	}
	return out
}

func equalLines(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n|") != strings.Join(want, "\n|") {
		t.Errorf("blocks:\n got %q\nwant %q", got, want)
	}
}

func TestParseMarkdown(t *testing.T) {
	tests := []struct {
		name, src string
		title     string
		want      []string
	}{
		{
			name:  "atx headings and paragraphs",
			src:   "# Report\n\nIntro line one\nline two\n\n## Budget ##\n\nThe budget is 5 M.\n\n#hashtag is text\n",
			title: "Report",
			want:  []string{"# Report", "Intro line one\nline two", "## Budget", "The budget is 5 M.", "#hashtag is text"},
		},
		{
			name:  "setext headings",
			src:   "Title\n=====\n\nSection\n-------\ntext\n",
			title: "Title",
			want:  []string{"# Title", "## Section", "text"},
		},
		{
			name: "fenced code keeps its lines, # inside is no heading",
			src:  "## Code\n\n```sh\n# not a heading\necho hi\n\n```\nafter\n",
			want: []string{"## Code", "```sh\n# not a heading\necho hi\n\n```", "after"},
		},
		{
			name:  "front matter title",
			src:   "---\ntitle: \"Notes 2024\"\ntags: [a]\n---\n# Other\nbody\n",
			title: "Notes 2024",
			want:  []string{"# Other", "body"},
		},
		{
			name:  "CRLF and Russian",
			src:   "# Отчёт\r\n\r\nБюджет проекта «Восток» — 5 млн.\r\n",
			title: "Отчёт",
			want:  []string{"# Отчёт", "Бюджет проекта «Восток» — 5 млн."},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := parseMarkdown(tc.src)
			equalLines(t, texts(p.blocks), tc.want)
			if p.title != tc.title {
				t.Errorf("title = %q, want %q", p.title, tc.title)
			}
		})
	}
}

func TestParsePlainTextAndEncoding(t *testing.T) {
	p, err := parse("notes.txt", FormatText, []byte("first para\nstill first\n\n\nsecond"))
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, texts(p.blocks), []string{"first para\nstill first", "second"})

	// A Windows-1251 file (no BOM, not UTF-8) is decoded.
	cp1251 := []byte{0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2, 0x2c, 0x20, 0xec, 0xe8, 0xf0} // "Привет, мир"
	p, err = parse("old.txt", FormatText, cp1251)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.blocks[0].text; got != "Привет, мир" {
		t.Errorf("cp1251 text = %q", got)
	}
}

func TestParseHTMLKeepsMainContent(t *testing.T) {
	page := `<!doctype html><html><head><title>Vostok project</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a> <a href="/login">Log in</a></nav>
<article><h1>Vostok project</h1>
<p>The Vostok project started in March 2024 with a budget of five million roubles, approved by the board after a long debate about risks.</p>
<h2>Risks</h2>
<p>The main risk is the supplier of the turbines, who delivered late twice last year and has no second factory to fall back on.</p>
<p>A second risk is the weather window in the north, which closes in October and leaves only five months for construction.</p>
</article>
<footer>© 2024 Example Corp. All rights reserved. Privacy policy. Cookie settings.</footer></body></html>`
	p, err := parse("vostok.html", FormatHTML, []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(texts(p.blocks), "\n")
	if p.title != "Vostok project" || !strings.Contains(all, "## Risks") || !strings.Contains(all, "supplier of the turbines") {
		t.Errorf("title %q, blocks:\n%s", p.title, all)
	}
	if strings.Contains(all, "Cookie settings") || strings.Contains(all, "Log in") {
		t.Errorf("boilerplate kept:\n%s", all)
	}
}

// testPDF writes a two-page PDF with a title, a section heading and body
// paragraphs.
func testPDF(t *testing.T) []byte {
	t.Helper()
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetTitle("Annual report", true)
	pdf.AddPage()
	pdf.SetFont("Helvetica", "B", 22)
	pdf.Cell(0, 12, "Annual report 2024")
	pdf.Ln(16)
	pdf.SetFont("Helvetica", "", 11)
	pdf.MultiCell(0, 5, "Revenue grew by twelve percent over the year, driven by exports of turbines to the north. "+
		"The board approved a dividend of two roubles per share.", "", "L", false)
	pdf.Ln(8)
	pdf.SetFont("Helvetica", "B", 16)
	pdf.Cell(0, 10, "Outlook")
	pdf.Ln(12)
	pdf.SetFont("Helvetica", "", 11)
	pdf.MultiCell(0, 5, "Next year the company expects slower growth because of the supplier delays.", "", "L", false)
	pdf.AddPage()
	pdf.MultiCell(0, 5, "The second page lists the members of the board and their terms.", "", "L", false)
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestParsePDF(t *testing.T) {
	p, err := parse("report.pdf", FormatPDF, testPDF(t))
	if err != nil {
		t.Fatal(err)
	}
	lines := texts(p.blocks)
	all := strings.Join(lines, "\n")
	if p.title != "Annual report" {
		t.Errorf("title = %q", p.title)
	}
	for _, want := range []string{"# Annual report 2024", "## Outlook", "Revenue grew by twelve percent over the year", "dividend of two roubles per share"} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	var second int
	for _, b := range p.blocks {
		if strings.Contains(b.text, "members of the board") {
			second = b.page
		}
	}
	if second != 2 {
		t.Errorf("second-page paragraph on page %d, want 2", second)
	}
}

func TestParsePDFErrors(t *testing.T) {
	for name, data := range map[string][]byte{
		"garbage":   []byte("%PDF-1.4 this is not really a pdf"),
		"truncated": testPDF(t)[:300],
	} {
		if _, err := parse(name+".pdf", FormatPDF, data); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// testDOCX builds a minimal Word document.
func testDOCX(t *testing.T, body string, styles string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name, content string) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(content))
	}
	add("[Content_Types].xml", `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`)
	add("word/document.xml", `<?xml version="1.0" encoding="UTF-8"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`+body+`</w:body></w:document>`)
	if styles != "" {
		add("word/styles.xml", `<?xml version="1.0"?><w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">`+styles+`</w:styles>`)
	}
	add("docProps/core.xml", `<?xml version="1.0"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Протокол</dc:title></cp:coreProperties>`)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func para(style, text string) string {
	pPr := ""
	if style != "" {
		pPr = `<w:pPr><w:pStyle w:val="` + style + `"/></w:pPr>`
	}
	return `<w:p>` + pPr + `<w:r><w:t xml:space="preserve">` + text + `</w:t></w:r></w:p>`
}

func TestParseDOCX(t *testing.T) {
	// Localised style IDs ("1") are headings through their names in
	// styles.xml; runs, tabs and breaks join into one paragraph; a table row
	// is one paragraph.
	styles := `<w:style w:type="paragraph" w:styleId="1"><w:name w:val="heading 1"/></w:style>
<w:style w:type="paragraph" w:styleId="a3"><w:name w:val="Заголовок раздела"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>`
	body := para("1", "Совещание") +
		`<w:p><w:r><w:t>Решили: </w:t></w:r><w:r><w:t>бюджет</w:t><w:tab/><w:t>5 млн</w:t><w:br/><w:t>срок — март</w:t></w:r></w:p>` +
		para("a3", "Риски") + para("Heading3", "Poставщик") +
		`<w:tbl><w:tr><w:tc>` + para("", "Риск") + `</w:tc><w:tc>` + para("", "Вероятность") + `</w:tc></w:tr>` +
		`<w:tr><w:tc>` + para("", "Задержка") + `</w:tc><w:tc>` + para("", "высокая") + `</w:tc></w:tr></w:tbl>` +
		para("", "Конец.")
	p, err := parse("protocol.docx", FormatDOCX, testDOCX(t, body, styles))
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, texts(p.blocks), []string{
		"# Совещание", "Решили: бюджет\t5 млн\nсрок — март", "## Риски", "### Poставщик",
		"Риск | Вероятность", "Задержка | высокая", "Конец.",
	})
	if p.title != "Протокол" {
		t.Errorf("title = %q", p.title)
	}
	if _, err := parse("bad.docx", FormatDOCX, []byte("PK\x03\x04 not a zip")); err == nil {
		t.Error("broken DOCX: no error")
	}
}

func TestDetectFormat(t *testing.T) {
	pdf := testPDF(t)
	tests := []struct {
		name string
		data []byte
		want Format
		err  bool
	}{
		{"a.MD", nil, FormatMarkdown, false},
		{"b.markdown", nil, FormatMarkdown, false},
		{"c.txt", nil, FormatText, false},
		{"d.htm", nil, FormatHTML, false},
		{"e.PDF", nil, FormatPDF, false},
		{"f.docx", nil, FormatDOCX, false},
		{"no-extension", pdf, FormatPDF, false},
		{"page", []byte("<!DOCTYPE html><html><body>x</body></html>"), FormatHTML, false},
		{"README", []byte("just some text\n"), FormatText, false},
		{"image.png", []byte("\x89PNG\r\n\x1a\n\x00\x00"), "", true},
		{"blob", []byte{0, 1, 2, 3, 0xff, 0xfe}, "", true},
	}
	for _, tc := range tests {
		got, err := DetectFormat(tc.name, tc.data)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("DetectFormat(%q) = %q, %v; want %q (error %v)", tc.name, got, err, tc.want, tc.err)
		}
		if err != nil && !errors.Is(err, ErrUnsupportedFormat) {
			t.Errorf("DetectFormat(%q) error %v is not ErrUnsupportedFormat", tc.name, err)
		}
	}
}

func TestParseEmptyDocument(t *testing.T) {
	for _, f := range []struct {
		name   string
		format Format
		data   string
	}{
		{"empty.md", FormatMarkdown, "# Only a heading\n"},
		{"blank.txt", FormatText, "   \n\n  "},
	} {
		if _, err := parse(f.name, f.format, []byte(f.data)); !errors.Is(err, ErrNoText) {
			t.Errorf("%s: err = %v, want ErrNoText", f.name, err)
		}
	}
}
