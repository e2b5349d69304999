package llmtest

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"unicode"
)

// EmbeddingDims is the length of the vectors HashEmbedding returns.
const EmbeddingDims = 64

// EmbedFunc returns the embedding of one input for a model.
type EmbedFunc func(model, input string) []float64

// EmbeddingRequest is what the server saw of one /v1/embeddings request.
type EmbeddingRequest struct {
	Header http.Header
	Model  string
	Inputs []string
}

// embeddings is the server's /v1/embeddings state.
type embeddings struct {
	mu       sync.Mutex
	fn       EmbedFunc
	fail     []Reply // errors sent to the next requests, in order
	requests []EmbeddingRequest
}

// HandleEmbeddings sets how inputs are embedded (default HashEmbedding).
func (s *Server) HandleEmbeddings(fn EmbedFunc) {
	s.emb.mu.Lock()
	defer s.emb.mu.Unlock()
	s.emb.fn = fn
}

// FailEmbeddings makes the next embedding requests fail, in order, with
// the given replies' Status and Content (or ErrorBody) and RetryAfter.
func (s *Server) FailEmbeddings(replies ...Reply) {
	s.emb.mu.Lock()
	defer s.emb.mu.Unlock()
	s.emb.fail = append(s.emb.fail, replies...)
}

// EmbeddingRequests returns the /v1/embeddings requests received so far.
func (s *Server) EmbeddingRequests() []EmbeddingRequest {
	s.emb.mu.Lock()
	defer s.emb.mu.Unlock()
	return append([]EmbeddingRequest(nil), s.emb.requests...)
}

// HashEmbedding is the default embedding: a bag of lower-cased words,
// each hashed to one of EmbeddingDims dimensions with a sign, normalised
// to unit length. It is deterministic and lexical (texts sharing words are
// close), like a very small embedding model.
func HashEmbedding(_ string, input string) []float64 {
	v := make([]float64, EmbeddingDims)
	for _, w := range strings.FieldsFunc(strings.ToLower(input), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		h := fnv.New64a()
		_, _ = h.Write([]byte(w))
		x := h.Sum64()
		sign := 1.0
		if x&(1<<63) != 0 {
			sign = -1
		}
		v[x%EmbeddingDims] += sign
	}
	return Normalize(v)
}

// Normalize scales v to unit length (a zero vector stays zero).
func Normalize(v []float64) []float64 {
	var n float64
	for _, x := range v {
		n += x * x
	}
	if n == 0 {
		return v
	}
	n = math.Sqrt(n)
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x / n
	}
	return out
}

func (s *Server) embed(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		return
	}
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, ErrorJSON("invalid_request_error", "", "We could not parse the JSON body of your request: "+err.Error()), "")
		return
	}
	var inputs []string
	var one string
	switch {
	case json.Unmarshal(req.Input, &one) == nil:
		inputs = []string{one}
	case json.Unmarshal(req.Input, &inputs) == nil:
	default:
		writeError(w, http.StatusBadRequest, ErrorJSON("invalid_request_error", "", "'input' must be a string or an array of strings"), "")
		return
	}
	if req.Model == "" || len(inputs) == 0 {
		writeError(w, http.StatusBadRequest, ErrorJSON("invalid_request_error", "", "you must provide a model and a non-empty input"), "")
		return
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" {
		writeError(w, http.StatusBadRequest, ErrorJSON("invalid_request_error", "", "llmtest serves encoding_format float only"), "")
		return
	}
	for _, in := range inputs {
		if in == "" {
			writeError(w, http.StatusBadRequest, ErrorJSON("invalid_request_error", "", "'$.input' is invalid: empty strings are not allowed"), "")
			return
		}
	}

	s.emb.mu.Lock()
	s.emb.requests = append(s.emb.requests, EmbeddingRequest{Header: hr.Header.Clone(), Model: req.Model, Inputs: inputs})
	fn := s.emb.fn
	var fail *Reply
	if len(s.emb.fail) > 0 {
		fail = &s.emb.fail[0]
		s.emb.fail = s.emb.fail[1:]
	}
	s.emb.mu.Unlock()
	if fail != nil {
		body := fail.ErrorBody
		if body == "" {
			body = ErrorJSON(errorType(fail.Status), "", fail.Content)
		}
		writeError(w, fail.Status, body, fail.RetryAfter)
		return
	}
	if fn == nil {
		fn = HashEmbedding
	}
	data := make([]map[string]any, len(inputs))
	tokens := 0
	for i, in := range inputs {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": fn(req.Model, in)}
		tokens += len(strings.Fields(in))
	}
	writeJSON(w, map[string]any{
		"object": "list", "data": data, "model": req.Model,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}
