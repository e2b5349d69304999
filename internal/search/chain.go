package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/metrics"
)

// Chain is a Provider that tries its providers in order (typically the
// SOVA_SEARCH_PROVIDER one, then SOVA_SEARCH_FALLBACK) and returns the first
// answer that is not an error. An empty result list counts as an answer.
//
// A Chain is safe for concurrent use if its providers and OnFailover are.
// Build one per server with NewChain and give each run its own hook with
// WithFailover.
type Chain struct {
	Providers []Provider
	// OnFailover, when set, is called each time a provider fails and the
	// next one is about to be tried.
	OnFailover func(failed string, err error, next string)
	// Cache, when set, keeps answers: a query asked again while its answer
	// is cached reaches no provider. Failures are not cached.
	Cache ResultCache
	// Logger, when set, gets one line per failed provider call, with the
	// provider's address that the error's text leaves out.
	Logger *slog.Logger
	// Metrics, when set, counts each provider call and its time.
	Metrics *metrics.Metrics
}

// ResultCache keeps search answers by query. Implementations decide how
// long; a failing cache must behave as a miss, never fail the search.
type ResultCache interface {
	GetResults(ctx context.Context, key string) ([]Result, bool)
	PutResults(ctx context.Context, key string, results []Result)
}

// NewChain returns a Chain over providers, skipping nil ones.
func NewChain(providers ...Provider) *Chain {
	c := &Chain{}
	for _, p := range providers {
		if p != nil {
			c.Providers = append(c.Providers, p)
		}
	}
	return c
}

// WithFailover returns a copy of c that calls fn on failover.
func (c *Chain) WithFailover(fn func(failed string, err error, next string)) *Chain {
	return &Chain{Providers: c.Providers, OnFailover: fn, Cache: c.Cache, Logger: c.Logger, Metrics: c.Metrics}
}

// Name returns "chain(a,b,...)".
func (c *Chain) Name() string {
	names := make([]string, len(c.Providers))
	for i, p := range c.Providers {
		names[i] = p.Name()
	}
	return "chain(" + strings.Join(names, ",") + ")"
}

// Search returns the results of the first provider that succeeds, with
// Result.Provider set to that provider's name where it left it empty. It
// stops without trying further providers once ctx is done. When every
// provider fails the error is a *ChainError naming each.
func (c *Chain) Search(ctx context.Context, q Query) ([]Result, error) {
	if len(c.Providers) == 0 {
		return nil, errors.New("search: no search provider is configured (set SOVA_SEARCH_PROVIDER)")
	}
	var key string
	if c.Cache != nil {
		key = CacheKey(c.Name(), q)
		if res, ok := c.Cache.GetResults(ctx, key); ok {
			return res, nil
		}
	}
	var errs []error
	for i, p := range c.Providers {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("search: cancelled before trying %s: %w", p.Name(), err)
		}
		start := time.Now()
		res, err := p.Search(ctx, q)
		c.Metrics.SearchCall(p.Name(), time.Since(start), err != nil)
		if err == nil {
			for j := range res {
				if res[j].Provider == "" {
					res[j].Provider = p.Name()
				}
			}
			if c.Cache != nil {
				c.Cache.PutResults(ctx, key, res)
			}
			return res, nil
		}
		errs = append(errs, named(p.Name(), err))
		if ctx.Err() != nil {
			break
		}
		if c.Logger != nil {
			c.Logger.WarnContext(ctx, "search provider failed", "provider", p.Name(), "err", errtext.Detail(err))
		}
		if i+1 < len(c.Providers) && c.OnFailover != nil {
			c.OnFailover(p.Name(), err, c.Providers[i+1].Name())
		}
	}
	return nil, &ChainError{Errs: errs}
}

// named makes sure err's text starts with the provider name.
func named(name string, err error) error {
	var pe *Error
	if errors.As(err, &pe) && pe.Provider == name {
		return err
	}
	if strings.HasPrefix(err.Error(), name+":") {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

// ChainError reports that every provider of a Chain failed. Errs holds one
// error per provider tried, in order; errors.Is and errors.As see them all.
type ChainError struct {
	Errs []error
}

func (e *ChainError) Error() string {
	parts := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		parts[i] = err.Error()
	}
	if len(parts) == 1 {
		return "search: the search provider failed: " + parts[0]
	}
	return fmt.Sprintf("search: all %d search providers failed: %s", len(parts), strings.Join(parts, "; "))
}

func (e *ChainError) Unwrap() []error { return e.Errs }

// CacheKey identifies the answer of provider to q: the same key means
// the same request. The query text is compared case-insensitively with
// whitespace collapsed; domain lists in any order.
func CacheKey(provider string, q Query) string {
	inc := normalizeDomains(q.IncludeDomains)
	exc := normalizeDomains(q.ExcludeDomains)
	slices.Sort(inc)
	slices.Sort(exc)
	return strings.Join([]string{
		provider,
		strings.ToLower(strings.Join(strings.Fields(q.Text), " ")),
		strconv.Itoa(q.maxResults()),
		strings.ToLower(q.Language),
		q.TimeRange,
		strings.Join(inc, ","),
		strings.Join(exc, ","),
	}, "\x1f")
}
