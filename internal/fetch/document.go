package fetch

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// ReadDocument reads a document that is already at hand (a file) as Fetch
// reads a response body: HTML to its main content, PDF to its text, plain
// text and Markdown as they are. mediaType may be empty: the type is then
// sniffed from the bytes. pageURL, when not empty, makes links absolute.
// The Markdown is not trimmed. Errors match ErrUnsupportedType and
// ErrNoContent.
func ReadDocument(ctx context.Context, body []byte, mediaType, pageURL string) (*Page, error) {
	var u *url.URL
	if pageURL != "" {
		var err error
		if u, err = url.Parse(pageURL); err != nil {
			return nil, fmt.Errorf("page URL %q is not valid: %w", pageURL, err)
		}
	}
	header := mediaType
	mt, _, _ := mime.ParseMediaType(mediaType)
	kind := kindOf(strings.ToLower(mt))
	if kind == kindSniff {
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(body))
		header = ""
		kind = kindOf(mt)
	}
	var (
		ex  extraction
		err error
	)
	switch kind {
	case kindHTML:
		ex, err = extractHTML(decode(body, header), u)
	case kindPDF:
		ex, err = (&Fetcher{}).readPDF(ctx, body) // in a worker, under the default parse limits
	case kindText:
		ex = extractText(decode(body, header), mt)
	default:
		return nil, &UnsupportedTypeError{URL: pageURL, ContentType: mt}
	}
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(ex.markdown) == "" {
		return nil, ErrNoContent
	}
	return &Page{
		URL: pageURL, Title: ex.title, Markdown: ex.markdown, Chars: utf8.RuneCountInString(ex.markdown),
		ContentType: mt, Truncated: ex.cut, Published: ex.published, Author: ex.author,
		SiteName: ex.siteName, Language: ex.language,
	}, nil
}
