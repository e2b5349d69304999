package tools

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/search"
)

// Page is a page the run read. Its number is its citation number [N]
// throughout the run: in deep_research's notes, the supervisor's draft
// and the report prompt, so that citations survive each hand-over.
type Page struct {
	N       int
	Source  sova.Source
	Summary string // what the first reader learnt from it
}

// Pages numbers the pages a run read and remembers fetched pages, so that
// two agents asking for the same URL fetch it once. Only pages read may be
// cited: search snippets alone are not reading.
type Pages struct {
	mu      sync.Mutex
	byKey   map[string]*Page
	list    []*Page
	fetches map[string]*fetchEntry
}

type fetchEntry struct {
	done chan struct{}
	page *fetch.Page
	err  error
}

// NewPages returns an empty set of pages.
func NewPages() *Pages {
	return &Pages{byKey: map[string]*Page{}, fetches: map[string]*fetchEntry{}}
}

// Add records a read page and returns it with its number; a page already
// read keeps its first number and summary.
func (r *Pages) Add(src sova.Source, summary string) *Page {
	key := search.NormalizeURL(src.URL)
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.byKey[key]; ok {
		return p
	}
	p := &Page{N: len(r.list) + 1, Source: src, Summary: summary}
	p.Source.Number = 0
	r.byKey[key] = p
	r.list = append(r.list, p)
	return p
}

// Lookup returns the read page for a URL.
func (r *Pages) Lookup(url string) (*Page, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.byKey[search.NormalizeURL(url)]
	return p, ok
}

// Get returns page n.
func (r *Pages) Get(n int) (*Page, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n < 1 || n > len(r.list) {
		return nil, false
	}
	return r.list[n-1], true
}

// Sources returns the read pages as citable sources, [n] at index n-1.
func (r *Pages) Sources() []sova.Source {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]sova.Source, len(r.list))
	for i, p := range r.list {
		out[i] = p.Source
	}
	return out
}

// All returns the read pages in number order.
func (r *Pages) All() []*Page {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Page(nil), r.list...)
}

// Count is the number of read pages.
func (r *Pages) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.list)
}

// Fetched reports whether url was read (or is being read) already.
func (r *Pages) Fetched(url string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.fetches[search.NormalizeURL(url)]
	return ok
}

// fetch reads url once per run; concurrent callers for the same URL wait
// for the first one.
func (r *Pages) fetch(ctx context.Context, reader PageReader, url string) (*fetch.Page, error) {
	key := search.NormalizeURL(url)
	r.mu.Lock()
	e, ok := r.fetches[key]
	if !ok {
		e = &fetchEntry{done: make(chan struct{})}
		r.fetches[key] = e
	}
	r.mu.Unlock()
	if ok {
		select {
		case <-e.done:
			return e.page, e.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e.page, e.err = reader.Fetch(ctx, url)
	if e.err == nil && strings.TrimSpace(e.page.Markdown) == "" {
		e.err = errNoText
	}
	if ctx.Err() != nil {
		// A cancelled read says nothing about the page: let a later
		// caller try again.
		r.mu.Lock()
		delete(r.fetches, key)
		r.mu.Unlock()
	}
	close(e.done)
	return e.page, e.err
}

// MarkerRE matches a citation marker [n].
var MarkerRE = regexp.MustCompile(`\[(\d{1,4})\]`)

// KeepKnownMarkers drops [n] markers that point at no read page, so notes
// and drafts only carry citations the report can honour.
func (r *Pages) KeepKnownMarkers(text string) string {
	return MarkerRE.ReplaceAllStringFunc(text, func(m string) string {
		n, _ := strconv.Atoi(m[1 : len(m)-1])
		if _, ok := r.Get(n); ok {
			return m
		}
		return ""
	})
}

// Markers returns the page numbers cited in text that are read pages.
func (r *Pages) Markers(text string) []int {
	var out []int
	seen := map[int]bool{}
	for _, m := range MarkerRE.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		if _, ok := r.Get(n); ok && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// RemapMarkers rewrites [k] markers by mapping; markers without a mapping
// are dropped.
func RemapMarkers(text string, mapping map[int]int) string {
	return MarkerRE.ReplaceAllStringFunc(text, func(m string) string {
		k, _ := strconv.Atoi(m[1 : len(m)-1])
		if n, ok := mapping[k]; ok {
			return "[" + strconv.Itoa(n) + "]"
		}
		return ""
	})
}
