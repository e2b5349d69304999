package cite

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/sova-ai/sova"
)

var published = regexp.MustCompile(`\[(\d+)\]`)

// FuzzCitations: an answer streamed in two pieces, cut anywhere, comes out
// as the whole answer does; every marker it keeps points at a cited page,
// and only read pages are cited. Seeds: testdata/fuzz/FuzzCitations.
func FuzzCitations(f *testing.F) {
	f.Add("Canberra [2] is the capital [1, 3].", 9)
	f.Fuzz(func(t *testing.T, answer string, cut int) {
		read := make([]sova.Source, 5)
		for i := range read {
			read[i] = sova.Source{Number: i + 1, URL: fmt.Sprintf("https://example.org/%d", i+1)}
		}
		whole, cited := Apply(answer, read)
		if cut < 0 {
			cut = -cut
		}
		cut %= len(answer) + 1
		for cut > 0 && cut < len(answer) && !utf8.RuneStart(answer[cut]) {
			cut-- // a model's deltas are whole characters
		}
		fl := NewFilter(read, nil)
		streamed := fl.Write(answer[:cut]) + fl.Write(answer[cut:]) + fl.Flush()
		if streamed != whole {
			t.Fatalf("cut at %d: streamed %q, whole %q", cut, streamed, whole)
		}
		if len(cited) > len(read) {
			t.Fatalf("%d cited of %d read", len(cited), len(read))
		}
		for i, s := range cited {
			if s.Number != i+1 {
				t.Fatalf("cited %d numbered %d", i, s.Number)
			}
		}
		// Markers the filter wrote (not text the model wrote as [n] that
		// was not a citation group) point at cited pages: the text from
		// the answer is left alone only where it is no citation.
		for _, m := range published.FindAllStringSubmatch(whole, -1) {
			n, _ := strconv.Atoi(m[1])
			if n > len(cited) && n <= len(read) && len(cited) > 0 {
				t.Fatalf("marker [%d] in %q with %d cited", n, whole, len(cited))
			}
		}
	})
}
