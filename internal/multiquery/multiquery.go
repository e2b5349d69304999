// Package multiquery runs the 1–5 queries of a multi-query search tool
// (academic_search, reddit_search: seed 000 §3.2, §3.3) in parallel and
// reports each query's progress in the shape of the seed's
// data-query_completion stream part (000 §5.2).
package multiquery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"
)

// MaxQueries is the most queries one tool call may carry (000 §3.2, §3.3).
const MaxQueries = 5

// Status is the state of one query.
type Status string

// The states of a query, as data-query_completion names them.
const (
	StatusStarted   Status = "started"
	StatusCompleted Status = "completed"
	StatusError     Status = "error"
)

// Progress is one data-query_completion event.
type Progress struct {
	Query  string `json:"query"`
	Index  int    `json:"index"` // 0-based position in the tool call's queries
	Total  int    `json:"total"`
	Status Status `json:"status"`
	// ResultsCount is the number of results a completed query found; it is
	// left out of the JSON of a started or failed query.
	ResultsCount int    `json:"resultsCount"`
	Error        string `json:"error,omitempty"`
}

// MarshalJSON writes resultsCount only for a completed query, as the seed's
// optional field.
func (p Progress) MarshalJSON() ([]byte, error) {
	type wire struct {
		Query        string `json:"query"`
		Index        int    `json:"index"`
		Total        int    `json:"total"`
		Status       Status `json:"status"`
		ResultsCount *int   `json:"resultsCount,omitempty"`
		Error        string `json:"error,omitempty"`
	}
	w := wire{Query: p.Query, Index: p.Index, Total: p.Total, Status: p.Status, Error: p.Error}
	if p.Status == StatusCompleted {
		w.ResultsCount = &p.ResultsCount
	}
	return json.Marshal(w)
}

// ProgressFunc receives progress events. Run never calls it concurrently.
type ProgressFunc func(Progress)

// Outcome is what one query produced.
type Outcome[T any] struct {
	Results []T
	Err     error
}

// Run calls search for every query at the same time and returns the
// outcomes in query order. Each query reports "started" when its search
// begins and "completed" (with its result count) or "error" when it ends;
// one query's failure does not stop the others. progress may be nil.
func Run[T any](ctx context.Context, queries []string, progress ProgressFunc, search func(ctx context.Context, index int, query string) ([]T, error)) []Outcome[T] {
	var mu sync.Mutex
	emit := func(p Progress) {
		if progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		progress(p)
	}
	out := make([]Outcome[T], len(queries))
	var g errgroup.Group
	for i, q := range queries {
		g.Go(func() error {
			emit(Progress{Query: q, Index: i, Total: len(queries), Status: StatusStarted})
			res, err := search(ctx, i, q)
			out[i] = Outcome[T]{Results: res, Err: err}
			p := Progress{Query: q, Index: i, Total: len(queries), Status: StatusCompleted, ResultsCount: len(res)}
			if err != nil {
				p.Status, p.Error, p.ResultsCount = StatusError, err.Error(), 0
			}
			emit(p)
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// AllFailed returns the failures joined when every outcome failed, and nil
// when at least one query succeeded (or there were none).
func AllFailed[T any](outs []Outcome[T]) error {
	errs := make([]error, 0, len(outs))
	for _, o := range outs {
		if o.Err == nil {
			return nil
		}
		errs = append(errs, o.Err)
	}
	return errors.Join(errs...)
}

// Validate trims the queries and checks that there are 1 to MaxQueries of
// them, none empty and none longer than maxRunes runes (0: no limit).
func Validate(queries []string, maxRunes int) ([]string, error) {
	if len(queries) == 0 {
		return nil, errors.New("at least one query is required")
	}
	if len(queries) > MaxQueries {
		return nil, fmt.Errorf("at most %d queries are allowed, got %d", MaxQueries, len(queries))
	}
	out := make([]string, len(queries))
	for i, q := range queries {
		q = strings.TrimSpace(q)
		if q == "" {
			return nil, fmt.Errorf("query %d is empty", i+1)
		}
		if maxRunes > 0 && utf8.RuneCountInString(q) > maxRunes {
			return nil, fmt.Errorf("query %d is longer than %d characters", i+1, maxRunes)
		}
		out[i] = q
	}
	return out, nil
}

// At returns xs[i], or def when xs is too short or xs[i] is the zero value.
func At[T comparable](xs []T, i int, def T) T {
	var zero T
	if i < len(xs) && xs[i] != zero {
		return xs[i]
	}
	return def
}
