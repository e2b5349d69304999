package fetch

import (
	"context"
	"errors"
	"fmt"
)

// Reader reads a web page into Markdown. *Fetcher, *ExternalReader and
// *Fallback implement it, so they compose.
type Reader interface {
	Fetch(ctx context.Context, url string) (*Page, error)
}

// DefaultFallbackChars is the content length below which Fallback asks
// the next reader (seed 000 §8.3: content shorter than 100 characters).
const DefaultFallbackChars = 100

// Fallback reads with Primary and turns to Next when Primary fails or
// returns fewer than MinChars characters: script-built pages, bot walls
// and formats Primary cannot read. Pages the address guard refuses are not
// handed on, and neither are requests whose context has ended.
type Fallback struct {
	Primary, Next Reader
	// MinChars is the shortest content accepted from Primary (<= 0:
	// DefaultFallbackChars).
	MinChars int
}

var _ Reader = (*Fallback)(nil)

// Fetch implements Reader. When Next fails too, Primary's short page is
// returned if it had one, otherwise both errors.
func (f *Fallback) Fetch(ctx context.Context, url string) (*Page, error) {
	minChars := f.MinChars
	if minChars <= 0 {
		minChars = DefaultFallbackChars
	}
	page, err := f.Primary.Fetch(ctx, url)
	if err == nil && page.Chars >= minChars {
		return page, nil
	}
	if f.Next == nil || ctx.Err() != nil || errors.Is(err, ErrBlocked) {
		return page, err
	}
	next, nerr := f.Next.Fetch(ctx, url)
	switch {
	case nerr == nil && (page == nil || next.Chars > page.Chars):
		return next, nil
	case page != nil:
		return page, nil
	case nerr == nil:
		return next, nil
	}
	return nil, fmt.Errorf("%w; the fallback reader also failed: %w", err, nerr)
}
