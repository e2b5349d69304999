package fetch

import (
	"bytes"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// metaScanLimit is how far into a document <meta> charset declarations are
// looked for. The HTML standard says 1024 bytes, but many pages declare
// their charset after long <head> preambles, so this looks further (it stops
// at <body> anyway).
const metaScanLimit = 64 << 10

// decode converts body to UTF-8. The encoding is chosen, in order, from:
// a byte-order mark; valid UTF-8 with non-ASCII bytes (a legacy encoding
// practically never produces that by chance, and mislabelled UTF-8 pages
// are common); the charset parameter of contentType; a <meta charset> or
// http-equiv declaration; a Cyrillic single-byte guess; windows-1252, the
// web's default. Invalid sequences become U+FFFD.
func decode(body []byte, contentType string) string {
	enc := chooseEncoding(body, contentType)
	if enc == nil {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	return strings.ToValidUTF8(string(out), "\uFFFD")
}

// chooseEncoding returns the encoding of body, or nil for UTF-8.
func chooseEncoding(body []byte, contentType string) encoding.Encoding {
	switch {
	case bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}):
		return unicode.UTF8BOM
	case bytes.HasPrefix(body, []byte{0xFE, 0xFF}):
		return unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM)
	case bytes.HasPrefix(body, []byte{0xFF, 0xFE}):
		return unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM)
	}
	// A body truncated at MaxBytes may end inside a character.
	if hasNonASCII(body) && utf8.Valid(trimPartialRune(body)) {
		return nil
	}
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		if enc := lookupCharset(params["charset"]); enc != nil {
			return enc
		}
	}
	if label := metaCharset(body); label != "" {
		// A document read as ASCII cannot really be UTF-16 (HTML standard).
		if strings.HasPrefix(strings.ToLower(label), "utf-16") {
			return nil
		}
		if enc := lookupCharset(label); enc != nil {
			return enc
		}
	}
	if !hasNonASCII(body) {
		return nil
	}
	if enc := guessCyrillic(body); enc != nil {
		return enc
	}
	return charmap.Windows1252
}

// lookupCharset maps a WHATWG encoding label to an encoding; nil for UTF-8
// and unknown labels.
func lookupCharset(label string) encoding.Encoding {
	label = strings.TrimSpace(label)
	if label == "" {
		return nil
	}
	enc, name := charset.Lookup(label)
	if enc == nil || name == "utf-8" {
		return nil
	}
	return enc
}

// metaCharset finds the charset declared by <meta charset> or
// <meta http-equiv="Content-Type" content="...; charset=..."> in the head.
func metaCharset(body []byte) string {
	if len(body) > metaScanLimit {
		body = body[:metaScanLimit]
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch string(name) {
			case "body":
				return ""
			case "meta":
			default:
				continue
			}
			var cs, httpEquiv, content string
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				switch string(k) {
				case "charset":
					cs = string(v)
				case "http-equiv":
					httpEquiv = strings.ToLower(string(v))
				case "content":
					content = string(v)
				}
			}
			if cs != "" {
				return cs
			}
			if httpEquiv == "content-type" {
				if _, params, err := mime.ParseMediaType(content); err == nil && params["charset"] != "" {
					return params["charset"]
				}
				if i := strings.Index(strings.ToLower(content), "charset="); i >= 0 {
					return strings.Trim(content[i+len("charset="):], `"' ;`)
				}
			}
		}
	}
}

func hasNonASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// guessCyrillic recognises undeclared Russian-language text in
// windows-1251 or KOI8-R, the two single-byte encodings still met on the
// web. Cyrillic text in these encodings has most bytes at 0xC0-0xFF, in
// runs that form words; in windows-1251 the frequent lowercase letters are
// 0xE0-0xFF, in KOI8-R they are 0xC0-0xDF. Western text in windows-1252
// has few such bytes, mostly alone between ASCII letters.
func guessCyrillic(b []byte) encoding.Encoding {
	var high, letters, upperHalf, inRuns, run int
	flush := func() {
		if run >= 3 {
			inRuns += run
		}
		run = 0
	}
	for _, c := range b {
		if c < 0x80 {
			flush()
			continue
		}
		high++
		if c >= 0xC0 {
			letters++
			run++
			if c >= 0xE0 {
				upperHalf++
			}
		} else {
			flush()
		}
	}
	flush()
	if high < 8 || letters*10 < high*8 || inRuns*2 < letters {
		return nil
	}
	if upperHalf*2 >= letters {
		return charmap.Windows1251
	}
	return charmap.KOI8R
}
