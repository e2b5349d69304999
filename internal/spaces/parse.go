package spaces

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/isolate"
	"github.com/sova-ai/sova/internal/pdfpages"
)

// Format is the kind of a document's file.
type Format string

// Formats that can be added to a space.
const (
	FormatMarkdown Format = "markdown"
	FormatText     Format = "text"
	FormatHTML     Format = "html"
	FormatPDF      Format = "pdf"
	FormatDOCX     Format = "docx"
)

// ErrUnsupportedFormat is matched (errors.Is) when a file is none of the
// formats a space takes.
var ErrUnsupportedFormat = errors.New("unsupported file format: Sova reads Markdown, plain text, HTML, PDF and DOCX")

// ErrNoText is matched when a document holds no text that can be indexed
// (for example a PDF of scanned images).
var ErrNoText = errors.New("no text found in the document")

// maxTextBytes bounds the text taken from one document, so that a small
// compressed file (PDF, DOCX) cannot expand without limit.
const maxTextBytes = 64 << 20

// ErrTooMuchText is matched when a document holds more text than Sova
// takes from one file (maxTextBytes), or a single paragraph or run of it
// is longer than any real one.
var ErrTooMuchText = errors.New("too much text")

var extFormats = map[string]Format{
	".md": FormatMarkdown, ".markdown": FormatMarkdown, ".mdx": FormatMarkdown, ".mkd": FormatMarkdown,
	".txt": FormatText, ".text": FormatText, ".rst": FormatText, ".org": FormatText, ".csv": FormatText, ".log": FormatText,
	".html": FormatHTML, ".htm": FormatHTML, ".xhtml": FormatHTML,
	".pdf":  FormatPDF,
	".docx": FormatDOCX,
}

// SupportedExtension reports whether a file name's extension is one a
// space takes, for walking folders.
func SupportedExtension(name string) bool {
	_, ok := extFormats[strings.ToLower(path.Ext(name))]
	return ok
}

// DetectFormat chooses a document's format from its file name and, for
// unknown extensions, its first bytes.
func DetectFormat(name string, data []byte) (Format, error) {
	if f, ok := extFormats[strings.ToLower(path.Ext(name))]; ok {
		return f, nil
	}
	switch {
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return FormatPDF, nil
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) && bytes.Contains(data, []byte("word/document.xml")):
		return FormatDOCX, nil
	}
	ct := http.DetectContentType(data)
	switch {
	case strings.HasPrefix(ct, "text/html"):
		return FormatHTML, nil
	case strings.HasPrefix(ct, "text/plain"):
		return FormatText, nil
	}
	return "", fmt.Errorf("%s: %w", name, ErrUnsupportedFormat)
}

// blockKind tells headings from body text.
type blockKind int

const (
	blockText blockKind = iota
	blockHeading
)

// block is one heading or paragraph of a document, in reading order.
type block struct {
	kind  blockKind
	level int // heading level, 1 is the highest
	text  string
	page  int // 1-based page of a PDF; 0 when the format has no pages
}

// parsed is a document reduced to its title and blocks.
type parsed struct {
	format Format
	title  string
	blocks []block
}

// parse reads a document of the given format in this process. Only the
// worker process (parseWorker) and tests call it with PDF, DOCX or HTML;
// the Service reads those through parseIsolated.
func parse(name string, format Format, data []byte) (*parsed, error) {
	p, err := parseContent(format, data)
	return finish(name, format, p, err)
}

// parseContent reads the headings and paragraphs of a document.
func parseContent(format Format, data []byte) (*parsed, error) {
	switch format {
	case FormatMarkdown:
		return parseMarkdown(fetch.DecodeText(data, "text/markdown")), nil
	case FormatText:
		return parsePlainText(fetch.DecodeText(data, "text/plain")), nil
	case FormatHTML:
		return parseHTML(data)
	case FormatPDF:
		return parsePDF(data)
	case FormatDOCX:
		return parseDOCX(data)
	}
	return nil, ErrUnsupportedFormat
}

// finish checks what parseContent found and completes the title.
func finish(name string, format Format, p *parsed, err error) (*parsed, error) {
	if errors.Is(err, ErrUnsupportedFormat) {
		return nil, fmt.Errorf("%s: %w", name, ErrUnsupportedFormat)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s as %s: %w", name, format, err)
	}
	p.format = format
	if !hasText(p.blocks) {
		return nil, fmt.Errorf("%s: %w", name, ErrNoText)
	}
	if p.title == "" {
		p.title = firstHeading(p.blocks)
	}
	p.title = strings.TrimSpace(clipBytes(p.title, 300))
	return p, nil
}

// Formats whose parsers are third-party code, or unpack what they read,
// run in a worker process under the Service's parse limits (see
// internal/isolate): a crafted file can make them loop or swell, and only a
// process can be stopped. Markdown and plain text are read in this
// process; their parsers are linear in the input.
var isolatedFormats = map[Format]string{
	FormatPDF:  "the PDF",
	FormatDOCX: "the DOCX file",
	FormatHTML: "the HTML file",
}

func workerKind(f Format) string { return "spaces." + string(f) }

func init() {
	for f, what := range isolatedFormats {
		isolate.Register(workerKind(f), what, func(data []byte) ([]byte, error) {
			return parseWorker(f, data)
		}, pdfpages.ErrPageTree, pdfpages.ErrTooManyPages, ErrZipBomb, ErrTooMuchText)
	}
}

// wireDoc is a parsed document as the worker sends it back.
type wireDoc struct {
	Title  string
	Blocks []wireBlock
}

type wireBlock struct {
	Heading     bool
	Level, Page int
	Text        string
}

func parseWorker(f Format, data []byte) ([]byte, error) {
	p, err := parseContent(f, data)
	if err != nil {
		return nil, err
	}
	w := wireDoc{Title: p.title, Blocks: make([]wireBlock, len(p.blocks))}
	for i, b := range p.blocks {
		w.Blocks[i] = wireBlock{Heading: b.kind == blockHeading, Level: b.level, Page: b.page, Text: b.text}
	}
	var out bytes.Buffer
	err = gob.NewEncoder(&out).Encode(w)
	return out.Bytes(), err
}

// parseIsolated reads a document as parse does, PDF, DOCX and HTML in a
// worker process under lim.
func parseIsolated(ctx context.Context, lim isolate.Limits, name string, format Format, data []byte) (*parsed, error) {
	if _, ok := isolatedFormats[format]; !ok {
		return parse(name, format, data)
	}
	out, err := isolate.Run(ctx, lim, workerKind(format), data)
	if err != nil {
		return finish(name, format, nil, err)
	}
	var w wireDoc
	if err := gob.NewDecoder(bytes.NewReader(out)).Decode(&w); err != nil {
		return finish(name, format, nil, fmt.Errorf("unreadable result from the parser: %w", err))
	}
	p := &parsed{title: w.Title, blocks: make([]block, len(w.Blocks))}
	for i, b := range w.Blocks {
		p.blocks[i] = block{kind: blockText, level: b.Level, page: b.Page, text: b.Text}
		if b.Heading {
			p.blocks[i].kind = blockHeading
		}
	}
	return finish(name, format, p, nil)
}

func hasText(blocks []block) bool {
	for _, b := range blocks {
		if b.kind == blockText && strings.TrimSpace(b.text) != "" {
			return true
		}
	}
	return false
}

func firstHeading(blocks []block) string {
	for _, b := range blocks {
		if b.kind == blockHeading {
			return b.text
		}
	}
	return ""
}

// parseHTML keeps the main content of a page, as the web pipeline does.
func parseHTML(data []byte) (*parsed, error) {
	title, md, err := fetch.Extract(data, "")
	if err != nil {
		return nil, err
	}
	p := parseMarkdown(md)
	if title != "" {
		p.title = title
	}
	return p, nil
}

// parsePlainText splits text into paragraphs at blank lines.
func parsePlainText(text string) *parsed {
	p := &parsed{}
	for _, para := range splitParagraphs(normalizeNewlines(text)) {
		p.blocks = append(p.blocks, block{kind: blockText, text: para})
	}
	return p
}

func normalizeNewlines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.ReplaceAll(s, "\f", "\n\n")
}

// splitParagraphs splits at blank lines, trimming each paragraph.
func splitParagraphs(s string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
			cur = cur[:0]
		}
	}
	for line := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		cur = append(cur, strings.TrimRight(line, " \t"))
	}
	flush()
	return out
}

// clipBytes shortens s to at most n bytes without splitting a character.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
