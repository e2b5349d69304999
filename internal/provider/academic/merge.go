package academic

import (
	"context"
	"errors"
	"strings"

	"golang.org/x/sync/errgroup"
)

// Merge returns a searcher that asks every searcher at once and
// interleaves their answers (first of each, then second of each, ...),
// duplicates dropped (see Dedupe). When some searchers fail and others
// answer, the answers are returned without an error; when all fail, their
// errors are returned joined.
func Merge(searchers ...Searcher) Searcher {
	return &merged{searchers: searchers}
}

type merged struct {
	searchers []Searcher
}

func (m *merged) Name() string {
	names := make([]string, len(m.searchers))
	for i, s := range m.searchers {
		names[i] = s.Name()
	}
	return strings.Join(names, "+")
}

func (m *merged) Search(ctx context.Context, query string, limit int) ([]Paper, error) {
	limit = max(limit, 1)
	lists := make([][]Paper, len(m.searchers))
	errs := make([]error, len(m.searchers))
	var g errgroup.Group
	for i, s := range m.searchers {
		g.Go(func() error {
			lists[i], errs[i] = s.Search(ctx, query, limit)
			return nil
		})
	}
	_ = g.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	if failed == len(m.searchers) && failed > 0 {
		return nil, errors.Join(errs...)
	}
	var all []Paper
	for i := 0; ; i++ {
		more := false
		for _, l := range lists {
			if i < len(l) {
				all = append(all, l[i])
				more = true
			}
		}
		if !more {
			break
		}
	}
	out := Dedupe(all)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
