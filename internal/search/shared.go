package search

import (
	"context"
	"slices"

	"github.com/sova-ai/sova/internal/inflight"
)

// shared is a Provider whose identical queries in flight at the same
// moment make one request (see Shared).
type shared struct {
	Provider
	calls inflight.Group[string, []Result]
}

// Shared returns p with work in flight shared: concurrent searches for
// the same query (CacheKey: the text compared case-insensitively, the same
// options) by any runs of the server make one request to the provider,
// and each caller gets its own copy of the results. Research agents and
// concurrent runs often send one query at once; a query asked after the
// first answered is sent again (the result cache, when configured, is
// what keeps answers).
func Shared(p Provider) Provider {
	if _, ok := p.(*shared); ok {
		return p
	}
	return &shared{Provider: p}
}

// Search implements Provider.
func (s *shared) Search(ctx context.Context, q Query) ([]Result, error) {
	res, _, err := s.calls.Do(ctx, CacheKey(s.Name(), q), func(ctx context.Context) ([]Result, error) {
		return s.Provider.Search(ctx, q)
	})
	return slices.Clone(res), err
}

// Unwrap returns the provider searched.
func (s *shared) Unwrap() Provider { return s.Provider }

// SearchImages passes image searches through to the provider (not
// shared: they are asked once per query of a run); ErrNoImageSearch when
// it has none.
func (s *shared) SearchImages(ctx context.Context, q Query) ([]Image, error) {
	is, ok := s.Provider.(ImageSearcher)
	if !ok {
		return nil, ErrNoImageSearch
	}
	return is.SearchImages(ctx, q)
}
