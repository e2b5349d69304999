package spaces

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"
	"unsafe"

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
	// blockParagraphs is a run of body paragraphs of one page, joined by
	// paraSep, that the chunker reads as the paragraphs they were. A
	// worker sends a document's paragraphs so (joinable): a DOCX of
	// 24 MiB is some 117,000 short paragraphs, and a block each cost the
	// parent 5 MiB beside their 17 MiB of text.
	blockParagraphs
)

// paraSep separates the paragraphs of a blockParagraphs block.
const paraSep = "\n\n"

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
	// notice says what of the file was left out when it was read only
	// in part (a limit cut it); empty when it was read whole.
	notice string
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

// ownedParse is parseIsolated for bytes the caller owns and will not
// change again: Markdown and plain text that are valid UTF-8 are read
// from them in place, as a string sharing their memory, rather than from
// a copy (a copy of a 50 MiB file is 50 MiB more at the peak of an
// upload).
func ownedParse(ctx context.Context, lim isolate.Limits, name string, format Format, data []byte) (*parsed, error) {
	if (format != FormatMarkdown && format != FormatText) || len(data) == 0 ||
		bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}) || !utf8.Valid(data) {
		return parseIsolated(ctx, lim, name, format, data)
	}
	text := unsafe.String(unsafe.SliceData(data), len(data))
	var p *parsed
	if format == FormatMarkdown {
		p = parseMarkdown(text)
	} else {
		p = parsePlainText(text)
	}
	return finish(name, format, p, nil)
}

// The worker sends a parsed document back as length-prefixed fields:
// the title, the notice, then per block a kind byte (0 text, 1 heading,
// 2 paragraphs), the level, the page and the text. The parent reads the
// texts in place, as strings sharing the worker's output, rather than
// decoding copies of them: a large document's text is then in memory
// once, not three times.

func parseWorker(f Format, data []byte) ([]byte, error) {
	p, err := parseContent(f, data)
	if err != nil {
		return nil, err
	}
	n := len(p.title) + len(p.notice) + 2*binary.MaxVarintLen64
	for _, b := range p.blocks {
		n += 1 + 3*binary.MaxVarintLen64 + len(b.text) + len(paraSep)
	}
	out := make([]byte, 0, n)
	out = appendString(out, p.title)
	out = appendString(out, p.notice)
	for i := 0; i < len(p.blocks); {
		b := p.blocks[i]
		j := i + 1
		for j < len(p.blocks) && joinable(b, p.blocks[j]) {
			j++
		}
		kind := byte(0)
		switch {
		case b.kind == blockHeading:
			kind = 1
		case j-i > 1:
			kind = 2
		}
		out = append(out, kind)
		out = binary.AppendUvarint(out, uint64(max(b.level, 0)))
		out = binary.AppendUvarint(out, uint64(max(b.page, 0)))
		size := (j - i - 1) * len(paraSep)
		for _, jb := range p.blocks[i:j] {
			size += len(jb.text)
		}
		out = binary.AppendUvarint(out, uint64(size))
		for k, jb := range p.blocks[i:j] {
			if k > 0 {
				out = append(out, paraSep...)
			}
			out = append(out, jb.text...)
		}
		i = j
	}
	return out, nil
}

// joinable says whether next may travel in one blockParagraphs block
// with b: both body paragraphs of one page, each trimmed and without a
// blank line of its own, so that splitting the block at paraSep gives
// back the very paragraphs.
func joinable(b, next block) bool {
	plain := func(x block) bool {
		return x.kind == blockText && x.text != "" && x.text == strings.TrimSpace(x.text) && !strings.Contains(x.text, paraSep)
	}
	return plain(b) && plain(next) && b.page == next.page
}

func appendString(out []byte, s string) []byte {
	out = binary.AppendUvarint(out, uint64(len(s)))
	return append(out, s...)
}

// errWire is a worker's output that does not read as a parsed document.
var errWire = errors.New("unreadable result from the parser")

// readWire reads parseWorker's output. out is the caller's, not written
// again: the texts are slices of it.
func readWire(out []byte) (*parsed, error) {
	// Read twice: counted first, the blocks are made at their size once
	// rather than grown by doubling.
	_, n, err := readWireBlocks(out, nil)
	if err != nil {
		return nil, err
	}
	p, _, err := readWireBlocks(out, make([]block, 0, n))
	return p, err
}

// readWireBlocks reads the output into blocks, and returns how many it
// read; with blocks nil it only counts them.
func readWireBlocks(out []byte, blocks []block) (*parsed, int, error) {
	count := blocks == nil
	n := 0
	uvarint := func() (uint64, error) {
		v, n := binary.Uvarint(out)
		if n <= 0 {
			return 0, errWire
		}
		out = out[n:]
		return v, nil
	}
	str := func() (string, error) {
		n, err := uvarint()
		if err != nil || n > uint64(len(out)) {
			return "", errWire
		}
		s := unsafe.String(unsafe.SliceData(out), int(n))
		out = out[n:]
		return s, nil
	}
	title, err := str()
	if err != nil {
		return nil, 0, err
	}
	notice, err := str()
	if err != nil {
		return nil, 0, err
	}
	p := &parsed{title: title, notice: notice}
	for len(out) > 0 {
		var kind blockKind
		switch out[0] {
		case 0:
			kind = blockText
		case 1:
			kind = blockHeading
		case 2:
			kind = blockParagraphs
		default:
			return nil, 0, errWire
		}
		out = out[1:]
		level, err := uvarint()
		if err != nil {
			return nil, 0, err
		}
		page, err := uvarint()
		if err != nil {
			return nil, 0, err
		}
		text, err := str()
		if err != nil {
			return nil, 0, err
		}
		if level > 64 || page > 1<<31 {
			return nil, 0, errWire
		}
		if n++; !count {
			blocks = append(blocks, block{kind: kind, level: int(level), page: int(page), text: text})
		}
	}
	p.blocks = blocks
	return p, n, nil
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
	p, err := readWire(out)
	return finish(name, format, p, err)
}

// parseIsolatedReader is parseIsolated for a format read in a worker,
// with the file read from r as the worker takes it.
func parseIsolatedReader(ctx context.Context, lim isolate.Limits, name string, format Format, r io.Reader) (*parsed, error) {
	out, err := isolate.RunReader(ctx, lim, workerKind(format), r)
	if err != nil {
		return finish(name, format, nil, err)
	}
	p, err := readWire(out)
	return finish(name, format, p, err)
}

func hasText(blocks []block) bool {
	for _, b := range blocks {
		if (b.kind == blockText || b.kind == blockParagraphs) && strings.TrimSpace(b.text) != "" {
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
	title, md, cut, err := fetch.ExtractCut(data, "")
	if err != nil {
		return nil, err
	}
	p := parseMarkdown(md)
	if title != "" {
		p.title = title
	}
	if cut {
		p.notice = fmt.Sprintf("only the beginning of this HTML file was read (%s of text from %s of HTML): "+
			"the reader of HTML pages stops at a limit; convert the file to Markdown or plain text to add all of it",
			sizeWords(int64(len(md))), sizeWords(int64(len(data))))
	}
	return p, nil
}

// sizeWords writes a byte count for people: "45 MiB", "230 KiB", "900 bytes".
func sizeWords(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", (n+1<<19)>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", (n+1<<9)>>10)
	}
	return fmt.Sprintf("%d bytes", n)
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
