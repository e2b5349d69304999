package llm_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
)

func TestEmbed(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.Model = "embed-model" })
	var m llm.Meter
	ctx := llm.WithMeter(context.Background(), &m)
	inputs := []string{"tidal power stations", "", "Tidal POWER stations!"}
	vecs, err := c.Embed(ctx, inputs)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 || len(vecs[0]) != llmtest.EmbeddingDims {
		t.Fatalf("got %d vectors of %d", len(vecs), len(vecs[0]))
	}
	// The default embedding ignores case and punctuation: same words, same vector.
	for i := range vecs[0] {
		if math.Abs(vecs[0][i]-vecs[2][i]) > 1e-12 {
			t.Fatalf("vectors 0 and 2 differ at %d", i)
		}
	}
	reqs := srv.EmbeddingRequests()
	if len(reqs) != 1 || reqs[0].Model != "embed-model" || reqs[0].Inputs[1] != " " ||
		reqs[0].Header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("requests = %+v", reqs)
	}
	if u := m.Total(); u.PromptTokens != 6 || u.TotalTokens != 6 {
		t.Errorf("metered %+v", u)
	}
}

func TestEmbedBatchesAndKeepsOrder(t *testing.T) {
	srv := llmtest.New(t)
	// Each vector encodes its input's number, so order can be checked.
	srv.HandleEmbeddings(func(_, input string) []float64 {
		var n float64
		_, _ = fmt.Sscanf(input, "text %g", &n)
		return []float64{n, 1}
	})
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.Model = "e" })
	inputs := make([]string, 600)
	for i := range inputs {
		inputs[i] = fmt.Sprintf("text %d", i)
	}
	vecs, err := c.Embed(context.Background(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if v[0] != float64(i) {
			t.Fatalf("vector %d is for input %v", i, v[0])
		}
	}
	if n := len(srv.EmbeddingRequests()); n != 3 {
		t.Errorf("%d requests for 600 inputs, want 3 batches", n)
	}
}

func TestEmbedErrors(t *testing.T) {
	t.Run("retried", func(t *testing.T) {
		srv := llmtest.New(t)
		srv.FailEmbeddings(llmtest.Fail(500, "boom"), llmtest.Reply{Status: 429, Content: "slow down", RetryAfter: "0"})
		c := newClient(t, srv, func(cfg *llm.Config) { cfg.Model = "e"; cfg.MaxRetries = 3 })
		if _, err := c.Embed(context.Background(), []string{"a"}); err != nil {
			t.Fatal(err)
		}
		if n := len(srv.EmbeddingRequests()); n != 3 {
			t.Errorf("%d requests, want 3", n)
		}
	})
	t.Run("final", func(t *testing.T) {
		srv := llmtest.New(t)
		srv.FailEmbeddings(llmtest.FailWith(404, "invalid_request_error", "model_not_found", "The model `nope` does not exist"))
		c := newClient(t, srv, func(cfg *llm.Config) { cfg.Model = "nope" })
		_, err := c.Embed(context.Background(), []string{"a"})
		if err == nil || !strings.Contains(err.Error(), "does not exist") || strings.Contains(err.Error(), testKey) {
			t.Fatalf("err = %v", err)
		}
		if n := len(srv.EmbeddingRequests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
	t.Run("no inputs", func(t *testing.T) {
		srv := llmtest.New(t)
		vecs, err := newClient(t, srv).Embed(context.Background(), nil)
		if err != nil || len(vecs) != 0 || len(srv.EmbeddingRequests()) != 0 {
			t.Errorf("got %v, %v", vecs, err)
		}
	})
}
