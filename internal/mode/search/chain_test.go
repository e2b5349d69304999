package search

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

// schemaCounts counts the model's requests by structured-output schema.
func schemaCounts(reqs []*llmtest.Request) map[string]int {
	out := map[string]int{}
	for _, r := range reqs {
		out[r.SchemaName()]++
	}
	return out
}

// The rewrite writes the first queries: no separate query-generation call
// waits on it; follow-ups still have their own.
func TestRewriteWritesTheFirstQueries(t *testing.T) {
	e := newSearchEnv(t)
	e.run(t, e.mode(t), "How did presidents describe the economy in the 1930s?")
	counts := schemaCounts(e.model.Requests())
	if counts["QueryRewrite"] != 1 || counts["SearchQueries"] != 1 {
		t.Errorf("model calls by schema %v, want 1 QueryRewrite and 1 SearchQueries (the follow-ups)", counts)
	}
	if q := e.sx.Queries(); len(q) != 5 || q[0] != "economy 1930s presidents" && q[1] != "economy 1930s presidents" && q[2] != "economy 1930s presidents" {
		t.Errorf("searched %q, want the rewrite's 3 queries and 2 follow-ups", q)
	}
}

// A rewrite without queries (a model that leaves them out) is completed by
// the query-generation call, as before.
func TestRewriteWithoutQueriesAsksForThem(t *testing.T) {
	e := newSearchEnv(t)
	e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		if r.SchemaName() == "QueryRewrite" {
			return llmtest.Reply{Content: `{"rewritten_query": "economy of the 1930s", "queries": []}`}
		}
		return e.model.Respond(r)
	})
	e.run(t, e.mode(t), "How did presidents describe the economy in the 1930s?")
	if counts := schemaCounts(e.model.Requests()); counts["SearchQueries"] != 2 {
		t.Errorf("model calls by schema %v, want 2 SearchQueries (first queries and follow-ups)", counts)
	}
	if len(e.sx.Queries()) != 5 {
		t.Errorf("searched %q", e.sx.Queries())
	}
}

// The best pages of the first iteration are read while the second
// searches: with searches and pages each taking a while, the run lasts
// about two searches and not two searches and a page; it still shows and
// cites only the pages of the final ranking, each fetched once, and shows
// none as read before the last iteration's searches answered.
func TestPagesAreReadWhileTheLastIterationSearches(t *testing.T) {
	e := newSearchEnv(t)
	const searchDelay, pageDelay = 300 * time.Millisecond, 300 * time.Millisecond
	e.sx.SetDelay(searchDelay)
	e.site.SetDelay(pageDelay)
	var mu sync.Mutex
	var followUpsAsked time.Time
	e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		if r.SchemaName() == "SearchQueries" && strings.Contains(r.LastUser(), "follow-up") {
			mu.Lock()
			followUpsAsked = time.Now()
			mu.Unlock()
		}
		return e.model.Respond(r)
	})
	// The same run with no delays first: what the run costs on this
	// machine now (seconds on a loaded CI machine) is not judged.
	base := newSearchEnv(t)
	start := time.Now()
	base.run(t, base.mode(t), "How did presidents describe the economy in the 1930s?")
	overhead := time.Since(start)

	start = time.Now()
	res, rec := e.run(t, e.mode(t), "How did presidents describe the economy in the 1930s?")
	elapsed := time.Since(start)

	var read []string
	var firstRead time.Time
	for _, ev := range rec.Filter(event.TypePage) {
		if ev.Page.State == event.PageRead {
			read = append(read, ev.Page.URL)
			if firstRead.IsZero() {
				firstRead = ev.Time
			}
		}
	}
	if len(read) != 4 || len(res.Sources) == 0 {
		t.Fatalf("read %v, cited %d", read, len(res.Sources))
	}
	for _, u := range read {
		if h := e.site.Hits(strings.TrimPrefix(u, e.site.URL)); h != 1 {
			t.Errorf("%s fetched %d times, want once", u, h)
		}
	}
	mu.Lock()
	asked := followUpsAsked
	mu.Unlock()
	if asked.IsZero() || !firstRead.After(asked.Add(searchDelay)) {
		t.Errorf("a page was shown as read %v after the follow-ups were asked, before the last iteration's searches (%v) answered",
			firstRead.Sub(asked), searchDelay)
	}
	// Reading after the last iteration would take at least
	// 2*searchDelay+pageDelay = 900 ms more than the run without delays.
	if limit := 2*searchDelay + pageDelay - 100*time.Millisecond; elapsed-overhead > limit {
		t.Errorf("the run took %v, %v more than without delays: the pages waited for the last iteration (limit %v)", elapsed, elapsed-overhead, limit)
	}
}

// A page's summary does not hold a fetch slot: with two slots and four
// pages whose summaries take a while, the four summaries are written at
// once, not in two waves.
func TestSummaryDoesNotHoldAFetchSlot(t *testing.T) {
	e := newSearchEnv(t)
	e.cfg.Concurrency = 2
	e.cfg.Iterations = 1 // no reading ahead
	const summaryDelay = 600 * time.Millisecond
	var mu sync.Mutex
	var asked []time.Time // when each summary was asked for
	e.model.Handle(func(r *llmtest.Request) llmtest.Reply {
		reply := e.model.Respond(r)
		if strings.Contains(r.System(), "summarise a web page") {
			mu.Lock()
			asked = append(asked, time.Now())
			mu.Unlock()
			reply.Delay = summaryDelay
		}
		return reply
	})
	_, rec := e.run(t, e.mode(t), "How did presidents describe the economy in the 1930s?")
	read := 0
	for _, ev := range rec.Filter(event.TypePage) {
		if ev.Page.State == event.PageRead {
			read++
		}
	}
	if read != 4 {
		t.Fatalf("read %d pages, want 4", read)
	}
	// In waves, the third summary is asked for only when one of the first
	// two has answered, summaryDelay after it: the spread is judged, not
	// the run's wall time, which a loaded machine stretches.
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 4 {
		t.Fatalf("%d summaries asked for, want 4", len(asked))
	}
	if spread := asked[3].Sub(asked[0]); spread >= summaryDelay {
		t.Errorf("the last summary was asked for %v after the first: summaries were written in waves (a wave takes %v)", spread, summaryDelay)
	}
}
