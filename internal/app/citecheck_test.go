package app

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/sovatest"
)

// siteHits is how often each article of the site was requested so far.
func siteHits(site *sovatest.Site, arts []sovatest.Article) map[string]int64 {
	out := make(map[string]int64, len(arts))
	for _, a := range arts {
		out["/a/"+a.Slug] = site.Hits("/a/" + a.Slug)
	}
	return out
}

// citesWhatWasRead checks an answer's citations against what its run
// did: it cites at least one source, every [n] names one of its sources,
// and every page of the site among them was read during this run (hits
// grew since before) or is marked as known only from a search snippet.
// It returns "" when all holds, else what failed.
func citesWhatWasRead(res *mode.Result, site *sovatest.Site, before map[string]int64) string {
	marks := markerRE.FindAllString(res.Text, -1)
	if len(res.Sources) == 0 || len(marks) == 0 {
		return fmt.Sprintf("cites nothing (%d sources, %d markers)", len(res.Sources), len(marks))
	}
	for _, m := range marks {
		if n, _ := strconv.Atoi(strings.Trim(m, "[]")); n < 1 || n > len(res.Sources) {
			return fmt.Sprintf("cites %s of %d sources", m, len(res.Sources))
		}
	}
	for _, src := range res.Sources {
		p, ok := strings.CutPrefix(src.URL, site.URL)
		if ok && !src.SnippetOnly && site.Hits(p) <= before[p] {
			return fmt.Sprintf("cites %s, which this run did not read", src.URL)
		}
	}
	return ""
}
