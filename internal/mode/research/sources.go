package research

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

// page is a page the run read. Its number is its citation number [n]
// throughout the run: in agents' notes, the supervisor's draft and the
// report prompt, so that citations survive each hand-over.
type page struct {
	n       int
	src     sova.Source
	summary string // what the first reader learnt from it
}

// registry numbers the pages a run read and remembers fetched pages, so
// that two agents asking for the same URL fetch it once. Only pages in the
// registry may be cited: search snippets alone are not reading.
type registry struct {
	mu      sync.Mutex
	byKey   map[string]*page
	list    []*page
	fetches map[string]*fetchEntry
}

type fetchEntry struct {
	done chan struct{}
	page *fetch.Page
	err  error
}

func newRegistry() *registry {
	return &registry{byKey: map[string]*page{}, fetches: map[string]*fetchEntry{}}
}

// add records a read page and returns it with its number; a page already
// read keeps its first number and summary.
func (r *registry) add(src sova.Source, summary string) *page {
	key := search.NormalizeURL(src.URL)
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.byKey[key]; ok {
		return p
	}
	p := &page{n: len(r.list) + 1, src: src, summary: summary}
	p.src.Number = 0
	r.byKey[key] = p
	r.list = append(r.list, p)
	return p
}

// lookup returns the read page for a URL.
func (r *registry) lookup(url string) (*page, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.byKey[search.NormalizeURL(url)]
	return p, ok
}

// get returns page n.
func (r *registry) get(n int) (*page, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n < 1 || n > len(r.list) {
		return nil, false
	}
	return r.list[n-1], true
}

// sources returns the read pages as citable sources, [n] at index n-1.
func (r *registry) sources() []sova.Source {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]sova.Source, len(r.list))
	for i, p := range r.list {
		out[i] = p.src
	}
	return out
}

// all returns the read pages in number order.
func (r *registry) all() []*page {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*page(nil), r.list...)
}

// count is the number of read pages.
func (r *registry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.list)
}

// fetched reports whether url was read (or is being read) already.
func (r *registry) fetched(url string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.fetches[search.NormalizeURL(url)]
	return ok
}

// fetch reads url once per run; concurrent callers for the same URL wait
// for the first one.
func (r *registry) fetch(ctx context.Context, reader PageReader, url string) (*fetch.Page, bool, error) {
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
			return e.page, true, e.err
		case <-ctx.Done():
			return nil, true, ctx.Err()
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
	return e.page, false, e.err
}

var markerRE = regexp.MustCompile(`\[(\d{1,4})\]`)

// keepKnownMarkers drops [n] markers that point at no read page, so notes
// and drafts only carry citations the report can honour.
func (r *registry) keepKnownMarkers(text string) string {
	return markerRE.ReplaceAllStringFunc(text, func(m string) string {
		n, _ := strconv.Atoi(m[1 : len(m)-1])
		if _, ok := r.get(n); ok {
			return m
		}
		return ""
	})
}

// markers returns the page numbers cited in text that are read pages.
func (r *registry) markers(text string) []int {
	var out []int
	seen := map[int]bool{}
	for _, m := range markerRE.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		if _, ok := r.get(n); ok && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// remapMarkers rewrites [k] markers by mapping; markers without a mapping
// are dropped.
func remapMarkers(text string, mapping map[int]int) string {
	return markerRE.ReplaceAllStringFunc(text, func(m string) string {
		k, _ := strconv.Atoi(m[1 : len(m)-1])
		if n, ok := mapping[k]; ok {
			return "[" + strconv.Itoa(n) + "]"
		}
		return ""
	})
}
