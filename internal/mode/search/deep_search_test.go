package search

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/rank"
)

// deepSearchConfig is deep_search as app.New builds it with the defaults:
// SOVA_BALANCED_MAX_ITERATIONS=6, SOVA_BALANCED_RERANK_TOP_K=12,
// SOVA_BALANCED_SCRAPE_TOP_N=8, answers of 800-1200 words.
func deepSearchConfig(cfg Config) Config {
	cfg.ID = "deep_search"
	cfg.Iterations = 6
	cfg.RerankTopK = 12
	cfg.ScrapeTopN = 8
	cfg.AnswerWords = "800-1200"
	return cfg
}

func TestDeepSearchRunsSixIterations(t *testing.T) {
	e := newSearchEnv(t)
	e.cfg = deepSearchConfig(e.cfg)
	res, rec := e.run(t, e.mode(t), "How did presidents describe the economy in the 1930s?")

	// 3 first queries, then 2 follow-ups in each of the 5 later iterations.
	if q := e.sx.Queries(); len(q) != 13 {
		t.Errorf("searched %d queries, want 13: %q", len(q), q)
	}
	iterations := map[int]int{}
	for _, ev := range rec.Filter(event.TypeQuery) {
		if ev.Query.Status == event.QueryCompleted {
			iterations[ev.Query.Iteration]++
		}
	}
	if len(iterations) != 6 || iterations[1] != 3 || iterations[6] != 2 {
		t.Errorf("completed queries per iteration = %v, want 6 iterations", iterations)
	}
	var progress int
	for _, ev := range rec.Filter(event.TypeStatus) {
		if strings.HasPrefix(ev.Status.Message, "Searching, iteration ") && strings.HasSuffix(ev.Status.Message, " of 6") {
			progress++
		}
	}
	if progress != 6 {
		t.Errorf("%d iteration status events, want 6", progress)
	}
	var steps searchSteps
	if err := json.Unmarshal(res.Steps, &steps); err != nil || len(steps.Iterations) != 6 {
		t.Errorf("stored steps have %d iterations (%v)", len(steps.Iterations), err)
	}

	// More sources considered than search's 4: every distinct result of the
	// fake site (6) is offered and read, within the top 12 and 8.
	var sources, read int
	for _, ev := range rec.Filter(event.TypeSource) {
		if ev.Source.Number == 0 {
			sources++
		}
	}
	for _, ev := range rec.Filter(event.TypePage) {
		if ev.Page.State == event.PageRead {
			read++
		}
	}
	if sources != 6 || read != 6 {
		t.Errorf("%d sources offered, %d pages read; want all 6", sources, read)
	}

	// The answer is asked for at deep_search's length, with citations.
	var synth *llmtest.Request
	for _, r := range e.model.Requests() {
		if strings.Contains(r.System(), "answers from web sources") {
			synth = r
		}
	}
	if synth == nil {
		t.Fatal("no synthesis request")
	}
	if !strings.Contains(synth.System(), "answer of 800-1200 words") || !strings.Contains(synth.System(), "Cite every factual sentence") {
		t.Errorf("synthesis prompt: %s", synth.System())
	}
	if strings.Count(synth.LastUser(), "\nURL: ") != 6 {
		t.Errorf("synthesis saw %d sources, want 6", strings.Count(synth.LastUser(), "\nURL: "))
	}
	if len(res.Sources) == 0 || strings.Contains(res.Text, "[9]") {
		t.Errorf("citations not verified: %q %+v", res.Text, res.Sources)
	}
}

// TestSearchWithEmbeddingRerank runs the pipeline with the hybrid
// reranker on the fake model's /v1/embeddings, and checks that a failing
// embedding endpoint only costs the embedding order, not the answer.
func TestSearchWithEmbeddingRerank(t *testing.T) {
	e := newSearchEnv(t)
	embed, err := llm.New(llm.Config{BaseURL: e.model.URL(), APIKey: "k", Model: "embed-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.cfg.Reranker = rank.NewHybrid(embed, rank.HybridConfig{})
	res, rec := e.run(t, e.mode(t), "How did presidents describe the economy in the 1930s?")
	if len(res.Sources) == 0 {
		t.Fatal("no sources")
	}
	reqs := e.model.EmbeddingRequests()
	if len(reqs) == 0 || reqs[0].Model != "embed-model" {
		t.Fatalf("embedding requests = %+v", reqs)
	}
	for _, ev := range rec.Filter(event.TypeStatus) {
		if strings.Contains(ev.Status.Message, "Embedding rerank failed") {
			t.Errorf("unexpected status %q", ev.Status.Message)
		}
	}

	e2 := newSearchEnv(t)
	embed2, _ := llm.New(llm.Config{BaseURL: e2.model.URL(), APIKey: "k", Model: "embed-model", MaxRetries: -1, Timeout: time.Second})
	e2.cfg.Reranker = rank.NewHybrid(embed2, rank.HybridConfig{})
	e2.model.FailEmbeddings(llmtest.Fail(500, "down"), llmtest.Fail(500, "down"), llmtest.Fail(500, "down"), llmtest.Fail(500, "down"))
	res2, rec2 := e2.run(t, e2.mode(t), "How did presidents describe the economy in the 1930s?")
	warned := 0
	for _, ev := range rec2.Filter(event.TypeStatus) {
		if strings.Contains(ev.Status.Message, "Embedding rerank failed") {
			warned++
		}
	}
	if warned != 1 || res2.Text == "" {
		t.Errorf("%d warnings (want 1) and answer %q", warned, res2.Text)
	}
}
