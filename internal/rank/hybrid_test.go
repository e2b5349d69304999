package rank_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/rank"
)

// conceptEmbedding stands in for a real embedding model: words map to
// meanings, so synonyms are close and a word with two senses is split.
func conceptEmbedding(_, input string) []float64 {
	senses := map[string][]float64{ // waterway, finance, other
		"river": {1, 0, 0}, "rivers": {1, 0, 0}, "stream": {1, 0, 0}, "streams": {1, 0, 0},
		"shore": {1, 0, 0}, "shores": {1, 0, 0}, "levee": {1, 0, 0}, "levees": {1, 0, 0},
		"water": {1, 0, 0}, "flowing": {1, 0, 0}, "erosion": {1, 0, 0}, "wears": {1, 0, 0}, "carving": {1, 0, 0},
		"bank": {0.5, 0.5, 0}, "banks": {0.5, 0.5, 0},
		"fees": {0, 1, 0}, "account": {0, 1, 0}, "interest": {0, 1, 0}, "rates": {0, 1, 0},
		"savers": {0, 1, 0}, "mortgage": {0, 1, 0},
	}
	v := []float64{0, 0, 0.05}
	for _, w := range strings.FieldsFunc(strings.ToLower(input), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if s, ok := senses[w]; ok {
			for i := range v {
				v[i] += s[i]
			}
		}
	}
	return llmtest.Normalize(v)
}

var (
	query = "river bank erosion"
	docs  = []rank.Doc{
		{ID: "finance", Text: "Bank fees and bank account interest: how a bank sets rates for savers."},
		{ID: "mortgage", Text: "Mortgage rates explained for first-time buyers."},
		{ID: "waterway", Text: "Flowing water wears away the shores of streams, carving levees over centuries."},
	}
)

func embedClient(t *testing.T) (*llm.Client, *llmtest.Server) {
	t.Helper()
	srv := llmtest.New(t)
	srv.HandleEmbeddings(conceptEmbedding)
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "k", Model: "embed-model",
		MaxRetries: -1, BackoffBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

func ids(s []rank.Scored) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = docs[x.Index].ID
	}
	return out
}

// TestHybridCorrectsMisleadingOverlap: the finance page repeats the
// query's word "bank" in its other sense and wins on BM25; the page about
// river banks shares no word with the query and comes last. With
// embeddings, the river page comes first.
func TestHybridCorrectsMisleadingOverlap(t *testing.T) {
	lexical := ids(rank.Rerank(query, docs, 0))
	if lexical[0] != "finance" {
		t.Fatalf("BM25 order %v: the test needs lexical overlap to mislead", lexical)
	}
	c, _ := embedClient(t)
	got, err := rank.NewHybrid(c, rank.HybridConfig{}).Rerank(context.Background(), query, docs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if order := ids(got); order[0] != "waterway" || len(order) != 3 {
		t.Errorf("hybrid order %v, want the river page first (BM25 order was %v)", order, lexical)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score {
			t.Errorf("scores not descending: %+v", got)
		}
	}
}

func TestHybridThresholdAndTopK(t *testing.T) {
	c, _ := embedClient(t)
	h := rank.NewHybrid(c, rank.HybridConfig{Threshold: 0.6})
	got, err := h.Rerank(context.Background(), query, docs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if order := ids(got); len(order) != 1 || order[0] != "waterway" {
		t.Errorf("threshold 0.6 kept %v, want only the river page", order)
	}
	// A threshold no document reaches keeps them all rather than none.
	got, _ = rank.NewHybrid(c, rank.HybridConfig{Threshold: 0.999}).Rerank(context.Background(), query, docs, 2)
	if len(got) != 2 {
		t.Errorf("got %d documents, want topK 2", len(got))
	}
}

func TestHybridCachesDocumentVectors(t *testing.T) {
	c, srv := embedClient(t)
	h := rank.NewHybrid(c, rank.HybridConfig{})
	for _, q := range []string{query, "levee maintenance"} {
		if _, err := h.Rerank(context.Background(), q, docs, 0); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.EmbeddingRequests()
	if len(reqs) != 2 || len(reqs[0].Inputs) != 4 || len(reqs[1].Inputs) != 1 || reqs[1].Inputs[0] != "levee maintenance" {
		t.Errorf("embedding requests = %+v; want the documents embedded once", reqs)
	}
}

func TestHybridCandidatesBoundTheCost(t *testing.T) {
	c, srv := embedClient(t)
	got, err := rank.NewHybrid(c, rank.HybridConfig{Candidates: 1}).Rerank(context.Background(), query, docs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if reqs := srv.EmbeddingRequests(); len(reqs[0].Inputs) != 2 {
		t.Errorf("embedded %d texts, want the query and one candidate", len(reqs[0].Inputs))
	}
	if len(got) != 3 || docs[got[0].Index].ID != "finance" {
		t.Errorf("order %v: documents past the candidates follow in BM25 order", ids(got))
	}
}

func TestHybridFallsBackToBM25(t *testing.T) {
	c, srv := embedClient(t)
	srv.FailEmbeddings(llmtest.Fail(500, "embedding server down"))
	got, err := rank.NewHybrid(c, rank.HybridConfig{}).Rerank(context.Background(), query, docs, 2)
	if err == nil || !strings.Contains(err.Error(), "embedding server down") {
		t.Errorf("err = %v", err)
	}
	if order := ids(got); len(order) != 2 || order[0] != "finance" {
		t.Errorf("fallback order %v, want BM25's", order)
	}
	var e *llm.APIError
	if !errors.As(err, &e) {
		t.Errorf("err %T does not wrap the API error", err)
	}
}

func TestCosine(t *testing.T) {
	tests := []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 0}, []float64{1, 0}, 1},
		{[]float64{1, 0}, []float64{0, 2}, 0},
		{[]float64{1, 1}, []float64{-1, -1}, -1},
		{[]float64{0, 0}, []float64{1, 1}, 0},
		{[]float64{1}, []float64{1, 1}, 0},
	}
	for _, tt := range tests {
		if got := rank.Cosine(tt.a, tt.b); got < tt.want-1e-9 || got > tt.want+1e-9 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
