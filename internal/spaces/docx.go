package spaces

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxDOCXPartBytes bounds how much of one XML part of a DOCX is read.
const maxDOCXPartBytes = 4 * maxTextBytes

// parseDOCX reads the paragraphs of word/document.xml. A paragraph is a
// heading when its style is a heading (by name, "heading 1", or by
// outline level, which covers localised style names) or the title; a
// table row becomes one paragraph with its cells separated by " | ".
func parseDOCX(data []byte) (*parsed, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("not a DOCX (ZIP) file: %w", err)
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
		if err := readPart(f, func(d *xml.Decoder) error { return docxStyles(d, styles) }); err != nil {
			return nil, fmt.Errorf("word/styles.xml: %w", err)
		}
	}
	p := &parsed{}
	if f := parts["docProps/core.xml"]; f != nil {
		_ = readPart(f, func(d *xml.Decoder) error { p.title = docxTitle(d); return nil })
	}
	if err := readPart(doc, func(d *xml.Decoder) error { return docxBody(d, styles, p) }); err != nil {
		return nil, fmt.Errorf("word/document.xml: %w", err)
	}
	return p, nil
}

func readPart(f *zip.File, fn func(*xml.Decoder) error) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	lr := &io.LimitedReader{R: rc, N: maxDOCXPartBytes + 1}
	err = fn(xml.NewDecoder(lr))
	if lr.N <= 0 {
		return fmt.Errorf("larger than %d MiB", maxDOCXPartBytes>>20)
	}
	return err
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
func docxStyles(d *xml.Decoder, out map[string]int) error {
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
func docxTitle(d *xml.Decoder) string {
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
func docxBody(d *xml.Decoder, styles map[string]int, p *parsed) error {
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
			return fmt.Errorf("more than %d MiB of text", maxTextBytes>>20)
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
