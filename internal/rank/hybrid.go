package rank

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Defaults of HybridConfig.
const (
	DefaultEmbedCandidates = 50
	DefaultEmbedWeight     = 0.7
	DefaultEmbedCacheSize  = 4096
	// rrfK is the constant of reciprocal rank fusion: a document at rank r
	// contributes 1/(rrfK+r). 60 is the value its authors found robust.
	rrfK = 60
	// maxEmbedRunes bounds the text embedded per document; titles and
	// snippets come first, so the start says what the document is about.
	maxEmbedRunes = 2000
)

// Embedder turns texts into vectors, one per text, in order.
// llm.Client.Embed fits.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float64, error)
}

// HybridConfig tunes a Hybrid reranker.
type HybridConfig struct {
	// Threshold drops documents whose cosine similarity to the query is
	// below it (0 keeps all). When it would drop every document, none is.
	Threshold float64
	// Candidates is how many documents, best by BM25 first, are embedded
	// and fused (<= 0: DefaultEmbedCandidates); the rest follow them in
	// BM25 order. It bounds the embedding cost of a large pool.
	Candidates int
	// Weight is the embedding ranking's share of the fused score, 0 to 1
	// (<= 0: DefaultEmbedWeight); BM25 has the rest.
	Weight float64
	// CacheSize is how many document vectors are remembered between calls
	// (<= 0: DefaultEmbedCacheSize), so a growing pool is embedded once.
	CacheSize int
}

// Hybrid reranks by BM25 and embedding similarity together: both rank the
// candidates, and weighted reciprocal rank fusion combines the two ranks.
// Lexical overlap alone is misled by shared words with another sense and
// blind to synonyms; the embedding ranking corrects both, while BM25 keeps
// exact names and numbers in play. It is safe for concurrent use.
type Hybrid struct {
	emb Embedder
	cfg HybridConfig

	mu    sync.Mutex
	cache map[[32]byte][]float64
}

// NewHybrid returns a Hybrid reranker over emb.
func NewHybrid(emb Embedder, cfg HybridConfig) *Hybrid {
	if cfg.Candidates <= 0 {
		cfg.Candidates = DefaultEmbedCandidates
	}
	if cfg.Weight <= 0 {
		cfg.Weight = DefaultEmbedWeight
	}
	cfg.Weight = min(cfg.Weight, 1)
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = DefaultEmbedCacheSize
	}
	return &Hybrid{emb: emb, cfg: cfg, cache: map[[32]byte][]float64{}}
}

// Rerank returns the best topK documents (all when topK <= 0), best first,
// Score being the fused score. When the embeddings cannot be had it
// returns the BM25 ranking with the error, so a caller can go on.
func (h *Hybrid) Rerank(ctx context.Context, query string, docs []Doc, topK int) ([]Scored, error) {
	lexical := Rerank(query, docs, 0)
	if len(docs) == 0 {
		return lexical, nil
	}
	n := min(len(lexical), h.cfg.Candidates)
	texts := make([]string, n+1)
	texts[0] = query
	for i, s := range lexical[:n] {
		texts[i+1] = docs[s.Index].Text
	}
	vecs, err := h.vectors(ctx, texts)
	if err != nil {
		return cut(lexical, topK), err
	}

	type cand struct {
		Scored
		sim          float64
		lexRank, emb int
	}
	cands := make([]cand, n)
	for i, s := range lexical[:n] {
		cands[i] = cand{Scored: s, sim: cosine(vecs[0], vecs[i+1]), lexRank: i + 1}
	}
	bySim := make([]int, n)
	for i := range bySim {
		bySim[i] = i
	}
	slices.SortStableFunc(bySim, func(a, b int) int { return cmpDesc(cands[a].sim, cands[b].sim) })
	for r, i := range bySim {
		cands[i].emb = r + 1
	}
	kept := cands[:0:0]
	for _, c := range cands {
		if c.sim >= h.cfg.Threshold {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		kept = cands
	}
	w := h.cfg.Weight
	for i := range kept {
		kept[i].Score = w/float64(rrfK+kept[i].emb) + (1-w)/float64(rrfK+kept[i].lexRank)
	}
	slices.SortStableFunc(kept, func(a, b cand) int { return cmpDesc(a.Score, b.Score) })

	out := make([]Scored, 0, len(kept)+len(lexical)-n)
	for _, c := range kept {
		out = append(out, c.Scored)
	}
	// Documents past the candidates were not judged by the embeddings;
	// they follow in BM25 order, below every fused score.
	for _, s := range lexical[n:] {
		s.Score = 0
		out = append(out, s)
	}
	return cut(out, topK), nil
}

// vectors embeds texts, reusing remembered vectors for documents (texts
// after the first, the query, which changes every call).
func (h *Hybrid) vectors(ctx context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	keys := make([][32]byte, len(texts))
	var missing []int
	h.mu.Lock()
	for i, t := range texts {
		keys[i] = sha256.Sum256([]byte(t))
		if v, ok := h.cache[keys[i]]; ok && i > 0 {
			out[i] = v
			continue
		}
		missing = append(missing, i)
	}
	h.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	batch := make([]string, len(missing))
	for j, i := range missing {
		batch[j] = clipText(texts[i], maxEmbedRunes)
	}
	vecs, err := h.emb.Embed(ctx, batch)
	if err != nil {
		return nil, fmt.Errorf("embedding %d texts for reranking: %w", len(batch), err)
	}
	if len(vecs) != len(batch) {
		return nil, fmt.Errorf("embedding %d texts for reranking: got %d vectors", len(batch), len(vecs))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.cache)+len(missing) > h.cfg.CacheSize {
		clear(h.cache) // simple and bounded; a new pool refills it
	}
	for j, i := range missing {
		out[i] = vecs[j]
		if i > 0 {
			h.cache[keys[i]] = vecs[j]
		}
	}
	return out, nil
}

// Cosine returns the cosine similarity of a and b (0 when either is zero
// or their lengths differ).
func Cosine(a, b []float64) float64 { return cosine(a, b) }

func cosine(a, b []float64) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

func cut(s []Scored, topK int) []Scored {
	if topK > 0 && topK < len(s) {
		return s[:topK]
	}
	return s
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
