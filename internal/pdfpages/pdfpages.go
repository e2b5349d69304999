// Package pdfpages lists the pages of a PDF opened with
// github.com/ledongthuc/pdf, refusing the page trees on which that
// library never returns.
//
// The library finds page n by walking the page tree from the root, trusting
// every /Count and /Kids it meets: a /Kids entry that points back to its
// own node loops forever, and a /Count of two billion makes a loop over
// the pages spin two billion times. A page's resources are looked up
// through its /Parent chain, which loops when a /Parent points to itself.
// Pages walks the tree once, in order, with bounds on its depth, its
// number of nodes and pages and the declared count, and checks each
// page's /Parent chain, so that the library is only asked about pages
// that exist. These checks give a clear error up front; a parse that goes
// wrong in some other way is stopped by the isolation it runs in
// (internal/isolate).
package pdfpages

import (
	"errors"
	"fmt"

	"github.com/ledongthuc/pdf"
)

// Bounds of a page tree.
const (
	// MaxPages is the most pages a PDF may claim or have.
	MaxPages = 10_000
	// MaxDepth bounds the nesting of the tree and the length of a page's
	// /Parent chain; real trees are a few levels deep.
	MaxDepth = 64
	// maxNodes bounds the nodes visited, pages and intermediate nodes.
	maxNodes = 3 * MaxPages
)

// ErrPageTree is matched (errors.Is) when the page tree is malformed in
// a way the PDF library cannot survive.
var ErrPageTree = errors.New("the PDF's page tree is malformed")

// ErrTooManyPages is matched when a PDF claims or has more than MaxPages
// pages.
var ErrTooManyPages = errors.New("the PDF has too many pages")

// Pages returns the first limit pages of the document, in order
// (limit <= 0 or over MaxPages means MaxPages), and whether it has more.
// It refuses a declared page count over MaxPages, a tree that refers back
// to itself or is nested deeper than MaxDepth, and a page whose /Parent
// chain does not end. The library panics on some malformed files; the
// caller recovers.
func Pages(r *pdf.Reader, limit int) (pages []pdf.Page, more bool, err error) {
	if limit <= 0 || limit > MaxPages {
		limit = MaxPages
	}
	root := r.Trailer().Key("Root").Key("Pages")
	if root.IsNull() {
		return nil, false, fmt.Errorf("%w: the document has no page tree", ErrPageTree)
	}
	if n := root.Key("Count").Int64(); n > MaxPages || n < 0 {
		return nil, false, fmt.Errorf("%w: it claims %d pages; at most %d are read", ErrTooManyPages, n, MaxPages)
	}
	w := &walker{limit: limit}
	if err := w.walk(root, 0); err != nil {
		return nil, false, err
	}
	if w.more && limit == MaxPages {
		return nil, false, fmt.Errorf("%w: more than %d", ErrTooManyPages, MaxPages)
	}
	return w.pages, w.more, nil
}

type walker struct {
	limit int
	pages []pdf.Page
	nodes int
	more  bool
}

func (w *walker) walk(node pdf.Value, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("%w: it never ends (a node refers back to itself, or the tree is nested more than %d levels deep)", ErrPageTree, MaxDepth)
	}
	if w.nodes++; w.nodes > maxNodes {
		return fmt.Errorf("%w: more than %d nodes", ErrPageTree, maxNodes)
	}
	switch node.Key("Type").Name() {
	case "Pages":
		kids := node.Key("Kids")
		for i := range kids.Len() {
			if w.more {
				return nil
			}
			if err := w.walk(kids.Index(i), depth+1); err != nil {
				return err
			}
		}
	case "Page":
		if len(w.pages) == w.limit {
			w.more = true
			return nil
		}
		// Resources are inherited through /Parent; the chain must end.
		steps := 0
		for v := node.Key("Parent"); !v.IsNull(); v = v.Key("Parent") {
			if steps++; steps > MaxDepth {
				return fmt.Errorf("%w: page %d's /Parent chain never ends", ErrPageTree, len(w.pages)+1)
			}
		}
		w.pages = append(w.pages, pdf.Page{V: node})
	}
	// Anything else in /Kids is skipped, as the library does.
	return nil
}
