package tools

import (
	"slices"
	"sync"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/cite"
	"github.com/sova-ai/sova/internal/search"
)

// Found is the search results an agent loop has seen, once per
// normalised URL, in the order found: web_search adds to it, retrieve
// takes titles and favicons from it, and the mode reads it afterwards
// (deep_research's note lists the snippets it did not read).
type Found struct {
	mu    sync.Mutex
	byKey map[string]int
	list  []search.Result
}

// add records r and reports whether it was new.
func (f *Found) add(r search.Result) bool {
	key := search.NormalizeURL(r.URL)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byKey == nil {
		f.byKey = map[string]int{}
	}
	if _, ok := f.byKey[key]; ok {
		return false
	}
	f.byKey[key] = len(f.list)
	f.list = append(f.list, r)
	return true
}

// Restore adds results seen by an earlier execution of the loop, restored
// from a checkpoint.
func (f *Found) Restore(rs []search.Result) {
	for _, r := range rs {
		f.add(r)
	}
}

// Lookup returns the result seen for url.
func (f *Found) Lookup(url string) (search.Result, bool) {
	if f == nil {
		return search.Result{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	i, ok := f.byKey[search.NormalizeURL(url)]
	if !ok {
		return search.Result{}, false
	}
	return f.list[i], true
}

// All returns the results seen, in order.
func (f *Found) All() []search.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.list)
}

// Citations numbers the sources a run's tools return, across all their
// calls, as they are found (seed 003: every search result has a number n
// the answer may cite), and checks the answer's citations against them
// while it streams. Tools of one step run in parallel; the model writes
// only between steps, but the lock keeps that a property of this type
// rather than of the loop.
type Citations struct {
	mu     sync.Mutex
	byURL  map[string]int
	filter *cite.Filter
	n      int
}

// NewCitations returns an empty numbering; onCite is called once per
// source when the answer first cites it, with its published number.
func NewCitations(onCite func(sova.Source)) *Citations {
	return &Citations{byURL: map[string]int{}, filter: cite.NewFilter(nil, onCite)}
}

// Number returns the citation number of a source, adding it when new.
func (c *Citations) Number(src sova.Source) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := src.URL
	if src.Kind == sova.SourceWeb {
		key = search.NormalizeURL(src.URL)
	}
	if n, ok := c.byURL[key]; ok {
		return n
	}
	c.n++
	c.byURL[key] = c.n
	c.filter.Extend(src)
	return c.n
}

// Count is how many sources have been numbered.
func (c *Citations) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Write takes the next piece of the answer and returns what can be shown
// now, its citations checked and renumbered by first use.
func (c *Citations) Write(delta string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.filter.Write(delta)
}

// Flush returns the answer's held-back end.
func (c *Citations) Flush() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.filter.Flush()
}

// Cited returns the sources the answer cited, numbered as published.
func (c *Citations) Cited() []sova.Source {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.filter.Cited()
}
