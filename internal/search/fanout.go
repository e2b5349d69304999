package search

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
)

// FanOut runs queries on p in parallel, at most limit at a time (limit <= 0
// means all at once), and returns their results indexed like queries; a
// failed query leaves nil in its slot. FanOut returns when every query has
// finished.
//
// A query's failure is reported through onDone and does not cancel the
// others; only ctx does. onStart(i, q) is called when query i is sent;
// onDone(i, q, n, err) is called exactly once per query, with the number of
// results or the error. A query that never started because ctx was done gets
// onDone with ctx's error and no onStart. Either hook may be nil. Hook calls
// are serialised, so hooks need no locking of their own, but they should
// return quickly.
func FanOut(ctx context.Context, p Provider, queries []Query, limit int,
	onStart func(i int, q Query), onDone func(i int, q Query, n int, err error)) [][]Result {
	out := make([][]Result, len(queries))
	if len(queries) == 0 {
		return out
	}
	if limit <= 0 || limit > len(queries) {
		limit = len(queries)
	}

	var hookMu sync.Mutex
	started := func(i int, q Query) {
		if onStart != nil {
			hookMu.Lock()
			defer hookMu.Unlock()
			onStart(i, q)
		}
	}
	done := func(i int, q Query, n int, err error) {
		if onDone != nil {
			hookMu.Lock()
			defer hookMu.Unlock()
			onDone(i, q, n, err)
		}
	}

	// The group is plain, not WithContext: one query's error must not
	// cancel the others, so every goroutine returns nil and reports through
	// onDone instead.
	var g errgroup.Group
	g.SetLimit(limit)
	for i, q := range queries {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				done(i, q, 0, err)
				return nil
			}
			started(i, q)
			res, err := p.Search(ctx, q)
			if err != nil {
				done(i, q, 0, err)
				return nil
			}
			out[i] = res
			done(i, q, len(res), nil)
			return nil
		})
	}
	_ = g.Wait() // goroutines never return an error
	return out
}
