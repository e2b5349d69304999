package spaces

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits of a DOCX file, enforced while it is unpacked and decoded, before
// the bytes they guard are held: a DOCX is a ZIP archive, and a file of a
// few hundred KiB can unpack to gigabytes.
const (
	// maxDOCXPartBytes bounds the unpacked size of one XML part, as its
	// header declares it and as its stream really delivers it.
	maxDOCXPartBytes = 4 * maxTextBytes
	// maxDOCXEntries bounds the entries of the archive (a document has a
	// few dozen), checked before its directory is read.
	maxDOCXEntries = 10_000
	// maxDOCXRatio bounds how much a part larger than minRatioBytes may
	// expand: XML packs to between a fifth and a fiftieth of its size, a
	// ZIP bomb to a thousandth.
	maxDOCXRatio  = 200
	minRatioBytes = 4 << 20
	// maxRunBytes bounds the bytes between two '<' of the XML: a text run
	// or a tag. The XML decoder holds such a token whole.
	maxRunBytes = 4 << 20
	// maxParagraphBytes bounds the text of one paragraph.
	maxParagraphBytes = 8 << 20
	// maxXMLDepth bounds the nesting of elements (the decoder keeps a
	// stack of them); Word's own nesting is a few dozen deep.
	maxXMLDepth = 1000
)

// ErrZipBomb is matched when a DOCX unpacks to far more than its size
// suggests, or has more entries than any document.
var ErrZipBomb = errors.New("refused as a ZIP bomb")

// parseDOCX reads the paragraphs of word/document.xml. A paragraph is a
// heading when its style is a heading (by name, "heading 1", or by
// outline level, which covers localised style names) or the title; a
// table row becomes one paragraph with its cells separated by " | ".
// It runs in a worker process (parse.go).
func parseDOCX(data []byte) (*parsed, error) {
	if n, ok := zipEntries(data); ok && n > maxDOCXEntries {
		return nil, fmt.Errorf("%w: %d entries in the archive, at most %d are taken", ErrZipBomb, n, maxDOCXEntries)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("not a DOCX (ZIP) file: %w", err)
	}
	if len(zr.File) > maxDOCXEntries {
		return nil, fmt.Errorf("%w: %d entries in the archive, at most %d are taken", ErrZipBomb, len(zr.File), maxDOCXEntries)
	}
	parts := map[string]*zip.File{}
	for _, f := range zr.File {
		parts[f.Name] = f
	}
	doc := parts["word/document.xml"]
	if doc == nil {
		return nil, errors.New("not a Word document: word/document.xml is missing")
	}
	styles := map[string]int{}
	if f := parts["word/styles.xml"]; f != nil {
		if err := readPart(f, func(d *xmlTokens) error { return docxStyles(d, styles) }); err != nil {
			return nil, fmt.Errorf("word/styles.xml: %w", err)
		}
	}
	p := &parsed{}
	if f := parts["docProps/core.xml"]; f != nil {
		if err := readPart(f, func(d *xmlTokens) error { p.title = docxTitle(d); return nil }); errors.Is(err, ErrZipBomb) {
			return nil, fmt.Errorf("docProps/core.xml: %w", err)
		}
	}
	if err := readPart(doc, func(d *xmlTokens) error { return docxBody(d, styles, p) }); err != nil {
		return nil, fmt.Errorf("word/document.xml: %w", err)
	}
	return p, nil
}

// readPart decodes one part of the archive with fn. The part is refused
// before it is opened when its header declares more than maxDOCXPartBytes
// or an expansion over maxDOCXRatio, and while it is read when the stream
// delivers more than the header declared; no token longer than
// maxRunBytes or nested deeper than maxXMLDepth reaches fn.
func readPart(f *zip.File, fn func(*xmlTokens) error) error {
	size := f.UncompressedSize64
	if size > maxDOCXPartBytes {
		return fmt.Errorf("%w: it unpacks to %d MiB, more than %d MiB", ErrZipBomb, size>>20, maxDOCXPartBytes>>20)
	}
	if size > minRatioBytes && size/max(f.CompressedSize64, 1) > maxDOCXRatio {
		return fmt.Errorf("%w: %d KiB unpack to %d MiB", ErrZipBomb, f.CompressedSize64>>10, size>>20)
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	// archive/zip also stops at the declared size; the limit holds whatever
	// the reader beneath does.
	lr := &io.LimitedReader{R: rc, N: int64(size) + 1}
	err = fn(&xmlTokens{d: xml.NewDecoder(&runLimiter{r: lr, max: maxRunBytes})})
	read := int64(size) + 1 - lr.N
	if read > int64(size) || errors.Is(err, zip.ErrFormat) && read == int64(size) {
		return fmt.Errorf("%w: it unpacks to more than the %d bytes its header declares", ErrZipBomb, size)
	}
	return err
}

// runLimiter fails a read once more than max bytes pass without a '<':
// one text run, or one tag, that the XML decoder would hold whole.
type runLimiter struct {
	r   io.Reader
	max int
	run int
}

var errLongRun = fmt.Errorf("%w: a run of text or a tag longer than %d MiB", ErrTooMuchText, maxRunBytes>>20)

func (l *runLimiter) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	b := p[:n]
	for {
		i := bytes.IndexByte(b, '<')
		if i < 0 {
			l.run += len(b)
			break
		}
		if l.run+i > l.max {
			return 0, errLongRun
		}
		l.run, b = 0, b[i+1:]
	}
	if l.run > l.max {
		return 0, errLongRun
	}
	return n, err
}

// xmlTokens reads tokens, bounding their nesting.
type xmlTokens struct {
	d     *xml.Decoder
	depth int
}

func (t *xmlTokens) Token() (xml.Token, error) {
	tok, err := t.d.Token()
	switch tok.(type) {
	case xml.StartElement:
		if t.depth++; t.depth > maxXMLDepth {
			return nil, fmt.Errorf("elements nested more than %d deep", maxXMLDepth)
		}
	case xml.EndElement:
		t.depth--
	}
	return tok, err
}

// zipEntries reads the number of entries from the end of central
// directory record (or its ZIP64 form), without reading the directory.
func zipEntries(data []byte) (uint64, bool) {
	const eocdLen, maxComment = 22, 65535
	from := max(0, len(data)-eocdLen-maxComment)
	i := bytes.LastIndex(data[from:], []byte("PK\x05\x06"))
	if i < 0 || from+i+eocdLen > len(data) {
		return 0, false
	}
	eocd := data[from+i:]
	n := uint64(binary.LittleEndian.Uint16(eocd[10:]))
	if n != 0xffff {
		return n, true
	}
	// ZIP64: a locator just before the record points to the ZIP64 record.
	loc := from + i - 20
	if loc < 0 || !bytes.Equal(data[loc:loc+4], []byte("PK\x06\x07")) {
		return 0, false
	}
	off := binary.LittleEndian.Uint64(data[loc+8:])
	if len(data) < 56 || off > uint64(len(data)-56) || !bytes.Equal(data[off:off+4], []byte("PK\x06\x06")) {
		return 0, false
	}
	return binary.LittleEndian.Uint64(data[off+32:]), true
}

func attr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// docxStyles maps paragraph style IDs to heading levels (0: not a heading).
func docxStyles(d *xmlTokens, out map[string]int) error {
	var (
		id    string
		level int
	)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "style":
				id, level = attr(t, "styleId"), 0
			case "name":
				name := strings.ToLower(strings.TrimSpace(attr(t, "val")))
				if name == "title" {
					level = 1
				} else if n, ok := strings.CutPrefix(name, "heading "); ok {
					if v, err := strconv.Atoi(n); err == nil && v >= 1 {
						level = v
					}
				}
			case "outlineLvl":
				if v, err := strconv.Atoi(attr(t, "val")); err == nil && v < 9 && level == 0 {
					level = v + 1
				}
			}
		case xml.EndElement:
			if t.Name.Local == "style" && id != "" && level > 0 {
				out[id] = level
			}
		}
	}
}

// docxTitle reads dc:title from docProps/core.xml.
func docxTitle(d *xmlTokens) string {
	in := false
	var b strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			return strings.TrimSpace(b.String())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			in = t.Name.Local == "title"
		case xml.CharData:
			if in {
				b.Write(t)
			}
		case xml.EndElement:
			if t.Name.Local == "title" {
				return strings.TrimSpace(b.String())
			}
		}
	}
}

// docxBody walks the document body.
func docxBody(d *xmlTokens, styles map[string]int, p *parsed) error {
	var (
		para     strings.Builder
		level    int  // heading level of the current paragraph
		inText   bool // inside <w:t>
		rowDepth int  // nesting of table rows
		cells    []string
		total    int
	)
	endParagraph := func() {
		text := strings.TrimSpace(para.String())
		para.Reset()
		total += len(text)
		if text == "" {
			level = 0
			return
		}
		if rowDepth > 0 {
			cells = append(cells, text)
		} else if level > 0 {
			p.blocks = append(p.blocks, block{kind: blockHeading, level: level, text: text})
		} else {
			p.blocks = append(p.blocks, block{kind: blockText, text: text})
		}
		level = 0
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if total > maxTextBytes {
			return fmt.Errorf("%w: more than %d MiB of text", ErrTooMuchText, maxTextBytes>>20)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "pStyle":
				level = styles[attr(t, "val")]
				if level == 0 {
					// Documents without styles.xml still name headings by ID.
					if n, ok := strings.CutPrefix(strings.ToLower(attr(t, "val")), "heading"); ok {
						if v, err := strconv.Atoi(n); err == nil && v >= 1 {
							level = v
						}
					}
				}
			case "outlineLvl":
				if v, err := strconv.Atoi(attr(t, "val")); err == nil && v < 9 && level == 0 {
					level = v + 1
				}
			case "t":
				inText = true
			case "tab":
				para.WriteByte('\t')
			case "br", "cr":
				para.WriteByte('\n')
			case "tr":
				rowDepth++
				if rowDepth == 1 {
					cells = cells[:0]
				}
			}
		case xml.CharData:
			if inText {
				if para.Len()+len(t) > maxParagraphBytes {
					return fmt.Errorf("%w: a paragraph longer than %d MiB", ErrTooMuchText, maxParagraphBytes>>20)
				}
				para.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				endParagraph()
			case "tc":
				if rowDepth > 0 && para.Len() > 0 {
					endParagraph()
				}
			case "tr":
				rowDepth--
				if rowDepth == 0 && len(cells) > 0 {
					p.blocks = append(p.blocks, block{kind: blockText, text: strings.Join(cells, " | ")})
					cells = cells[:0]
				}
			}
		}
	}
}
