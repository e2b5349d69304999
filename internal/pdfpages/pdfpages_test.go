package pdfpages

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ledongthuc/pdf"

	"github.com/sova-ai/sova/internal/sovatest/hostile"
)

func open(t *testing.T, data []byte) *pdf.Reader {
	t.Helper()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// pagesWithin fails the test when Pages has not returned within a few
// seconds (the library's own walk never returns on these files).
func pagesWithin(t *testing.T, r *pdf.Reader, limit int) ([]pdf.Page, bool, error) {
	t.Helper()
	type result struct {
		pages []pdf.Page
		more  bool
		err   error
	}
	done := make(chan result, 1)
	go func() {
		p, more, err := Pages(r, limit)
		done <- result{p, more, err}
	}()
	select {
	case res := <-done:
		return res.pages, res.more, res.err
	case <-time.After(60 * time.Second): // only a hang fails; a loaded race build is slow
		t.Fatal("Pages did not return")
		return nil, false, nil
	}
}

// tree is a catalogue, a root Pages node with kids [a Pages node with
// pages 1 and 2, page 3], and the pages marked /N.
func tree() []byte {
	return hostile.PDF(
		"<</Type/Catalog/Pages 2 0 R>>",
		"<</Type/Pages/Kids[3 0 R 6 0 R]/Count 3>>",
		"<</Type/Pages/Parent 2 0 R/Kids[4 0 R 5 0 R]/Count 2>>",
		"<</Type/Page/Parent 3 0 R/N 1>>",
		"<</Type/Page/Parent 3 0 R/N 2>>",
		"<</Type/Page/Parent 2 0 R/N 3>>",
	)
}

func numbers(pages []pdf.Page) string {
	var out []string
	for _, p := range pages {
		out = append(out, fmt.Sprint(p.V.Key("N").Int64()))
	}
	return strings.Join(out, " ")
}

func TestPagesInOrder(t *testing.T) {
	r := open(t, tree())
	pages, more, err := pagesWithin(t, r, 0)
	if err != nil || more || numbers(pages) != "1 2 3" {
		t.Fatalf("pages %q, more %v, err %v", numbers(pages), more, err)
	}
	pages, more, err = pagesWithin(t, r, 2)
	if err != nil || !more || numbers(pages) != "1 2" {
		t.Fatalf("first two: pages %q, more %v, err %v", numbers(pages), more, err)
	}
}

func TestHostilePageTrees(t *testing.T) {
	deep := []string{"<</Type/Catalog/Pages 2 0 R>>"}
	for i := 2; i < 2+MaxDepth+5; i++ {
		deep = append(deep, fmt.Sprintf("<</Type/Pages/Kids[%d 0 R]/Count 1>>", i+1))
	}
	deep = append(deep, "<</Type/Page>>")
	// 101 nodes of 100 pages under a root that claims one page.
	many := []string{"<</Type/Catalog/Pages 2 0 R>>", ""}
	var nodes []string
	for range 101 {
		node := len(many) + 1
		nodes = append(nodes, fmt.Sprintf("%d 0 R", node))
		many = append(many, "")
		var kids []string
		for range 100 {
			kids = append(kids, fmt.Sprintf("%d 0 R", len(many)+1))
			many = append(many, fmt.Sprintf("<</Type/Page/Parent %d 0 R>>", node))
		}
		many[node-1] = "<</Type/Pages/Parent 2 0 R/Kids[" + strings.Join(kids, " ") + "]/Count 100>>"
	}
	many[1] = "<</Type/Pages/Kids[" + strings.Join(nodes, " ") + "]/Count 1>>"

	tests := []struct {
		name string
		data []byte
		is   error
		msg  string
	}{
		{"kid is its own node", hostile.SelfReferentialPDF(), ErrPageTree, "never ends"},
		{"two billion pages claimed", hostile.PDFClaimingPages(2_000_000_000), ErrTooManyPages, "claims 2000000000 pages"},
		{"negative count", hostile.PDFClaimingPages(-1), ErrTooManyPages, "claims -1 pages"},
		{"page is its own parent", hostile.PDF(
			"<</Type/Catalog/Pages 2 0 R>>",
			"<</Type/Pages/Kids[3 0 R]/Count 1>>",
			"<</Type/Page/Parent 3 0 R>>",
		), ErrPageTree, "page 1's /Parent chain never ends"},
		{"nested too deep", hostile.PDF(deep...), ErrPageTree, "nested more than 64 levels"},
		{"more pages than claimed, too many", hostile.PDF(many...), ErrTooManyPages, "more than 10000"},
		{"no page tree", hostile.PDF("<</Type/Catalog>>"), ErrPageTree, "no page tree"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := pagesWithin(t, open(t, tt.data), 0)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %v saying %q", err, tt.is, tt.msg)
			}
		})
	}
}

func TestClaimedCountIsNotTrusted(t *testing.T) {
	// One real page under a claim of 9,999: the walk finds one.
	pages, more, err := pagesWithin(t, open(t, hostile.PDFClaimingPages(9_999)), 0)
	if err != nil || more || len(pages) != 1 {
		t.Fatalf("%d pages, more %v, err %v", len(pages), more, err)
	}
}
