package fetch

import (
	"context"
	"net/url"
	"strings"

	"github.com/sova-ai/sova/internal/inflight"
)

// Shared is a Reader whose reads of the same page in flight at the same
// moment make one read: concurrent runs (and the agents of one run) that
// fetch and extract a page at once share the fetch and the extraction,
// and each gets its own copy of the Page. A page read after the first
// finished is read again (the web cache, when configured, keeps pages).
type Shared struct {
	r     Reader
	calls inflight.Group[string, *Page]
}

var _ Reader = (*Shared)(nil)

// NewShared returns r with reads in flight shared.
func NewShared(r Reader) *Shared { return &Shared{r: r} }

// Fetch implements Reader.
func (s *Shared) Fetch(ctx context.Context, rawURL string) (*Page, error) {
	p, _, err := s.calls.Do(ctx, pageKey(rawURL), func(ctx context.Context) (*Page, error) {
		return s.r.Fetch(ctx, rawURL)
	})
	if p != nil {
		cp := *p
		p = &cp
	}
	return p, err
}

// pageKey is the URL a page is shared by: the fragment dropped, scheme and
// host in lower case; an address that does not parse is its own key.
func pageKey(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return rawURL
	}
	u.Fragment, u.RawFragment = "", ""
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	return u.String()
}
