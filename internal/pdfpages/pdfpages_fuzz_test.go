package pdfpages

import (
	"bytes"
	"testing"
	"time"

	"github.com/ledongthuc/pdf"

	"github.com/sova-ai/sova/internal/sovatest/hostile"
)

// FuzzPageTree: a catalogue whose page tree is three objects of any text.
// Pages returns (the library's own walk hangs on some trees), with at most
// the pages asked for and never more than MaxPages. The PDF library panics
// on some malformed files, also inside Pages' reads; callers recover, and
// so does the test.
// Seeds: testdata/fuzz/FuzzPageTree.
func FuzzPageTree(f *testing.F) {
	f.Add("<</Type/Pages/Kids[3 0 R 4 0 R]/Count 2>>", "<</Type/Page/Parent 2 0 R>>", "<</Type/Page/Parent 2 0 R>>", 1)
	f.Fuzz(func(t *testing.T, root, kid, other string, limit int) {
		data := hostile.PDF("<</Type/Catalog/Pages 2 0 R>>", root, kid, other)
		r, ok := reader(data)
		if !ok {
			return
		}
		type result struct {
			n   int
			err error
		}
		done := make(chan result, 1)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					done <- result{}
				}
			}()
			pages, _, err := Pages(r, limit)
			done <- result{n: len(pages), err: err}
		}()
		select {
		case res := <-done:
			want := limit
			if want <= 0 || want > MaxPages {
				want = MaxPages
			}
			if res.n > want {
				t.Fatalf("%d pages, at most %d asked for", res.n, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Pages did not return on %q %q %q", root, kid, other)
		}
	})
}

// reader opens data, or reports false where the library refuses or
// panics on it (outside what Pages is tested for).
func reader(data []byte) (r *pdf.Reader, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	return r, err == nil
}
