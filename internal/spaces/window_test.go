package spaces

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/store"
)

// Short documents share embedding requests: the passages of a window of
// files go to the model EmbedBatch at a time, whatever document they are
// from, and every passage gets its own vector.
func TestEmbeddingRequestsSpanDocuments(t *testing.T) {
	srv := llmtest.New(t)
	client, err := llm.New(llm.Config{BaseURL: srv.URL(), Model: "embed-small"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &vectorIndex{}
	e := newEnv(t, Config{EmbedBatch: 16}, EmbedFunc(client.Embed), func(st store.Store, idx Index) (store.Store, Index) {
		rec.Index = idx
		return st, rec
	})
	sp := e.space(t, "Notes")
	files := shortDocs(40)
	res := e.add(t, sp.ID, files...)
	for _, r := range res {
		if r.Status != StatusAdded {
			t.Fatalf("%s: %s %s", r.Name, r.Status, r.Error)
		}
	}
	got, err := e.svc.Space(t.Context(), user, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.EmbeddingRequests()
	inputs := 0
	for _, r := range reqs {
		if len(r.Inputs) > 16 {
			t.Errorf("a request of %d inputs; EmbedBatch is 16", len(r.Inputs))
		}
		inputs += len(r.Inputs)
	}
	if inputs != got.ChunkCount {
		t.Errorf("%d inputs embedded for %d passages", inputs, got.ChunkCount)
	}
	if want := (got.ChunkCount + 15) / 16; len(reqs) != want {
		t.Errorf("%d embedding requests for %d passages of %d documents; want %d", len(reqs), got.ChunkCount, len(files), want)
	}
	// Each passage has the vector of its own text.
	if rec.put != got.ChunkCount {
		t.Errorf("%d passages indexed; the space has %d", rec.put, got.ChunkCount)
	}
	for _, c := range rec.wrong {
		t.Errorf("%s#%d was indexed with another passage's vector", c.DocName, c.Seq)
	}
}

// vectorIndex checks that every chunk put carries the vector llmtest's
// HashEmbedding gives its text.
type vectorIndex struct {
	Index
	mu    sync.Mutex
	put   int
	wrong []IndexedChunk
}

func (v *vectorIndex) Apply(ctx context.Context, space string, b *Batch) error {
	v.mu.Lock()
	for _, c := range b.Put {
		v.put++
		want := llmtest.HashEmbedding("", clipBytes(indexedText(c.Title, c.Heading, c.Text), maxEmbedChars))
		ok := len(c.Vector) == len(want)
		for i := 0; ok && i < len(want); i++ {
			ok = c.Vector[i] == float32(want[i])
		}
		if !ok {
			v.wrong = append(v.wrong, c)
		}
	}
	v.mu.Unlock()
	return v.Index.Apply(ctx, space, b)
}

// refusingEmbedder refuses every request that holds a passage with a
// given word, as a model refuses an input it cannot take.
type refusingEmbedder struct {
	word string

	mu    sync.Mutex
	calls []int // inputs per call
}

func (r *refusingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.calls = append(r.calls, len(texts))
	r.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if strings.Contains(t, r.word) {
			return nil, errors.New("400: this input cannot be embedded")
		}
		out[i] = []float32{1, float32(len(t))}
	}
	return out, nil
}

// A document the model refuses fails alone: the other documents of its
// request are embedded again without it and added.
func TestEmbeddingRefusalFailsOneDocument(t *testing.T) {
	emb := &refusingEmbedder{word: "xylophone"}
	e := newEnv(t, Config{}, emb, nil)
	sp := e.space(t, "Notes")
	var files []File
	for i := range 10 {
		text := fmt.Sprintf("# Note %d\n\nThe garden needs water on day %d.\n", i, i)
		if i == 6 {
			text += "\nA xylophone in the shed.\n"
		}
		files = append(files, BytesFile(fmt.Sprintf("n%d.md", i), []byte(text)))
	}
	res := e.add(t, sp.ID, files...)
	for i, r := range res {
		want := StatusAdded
		if i == 6 {
			want = StatusFailed
		}
		if r.Status != want {
			t.Errorf("%s: %s %q; want %s", r.Name, r.Status, r.Error, want)
		}
	}
	if !strings.Contains(res[6].Error, "n6.md: embedding: 400") {
		t.Errorf("the refused document's error: %q", res[6].Error)
	}
	// One request for the window, then one for each of its documents.
	if len(emb.calls) != 11 || emb.calls[0] != 10 {
		t.Errorf("embedding calls of %v inputs; want one of 10, then ten of 1", emb.calls)
	}
	docs, err := e.svc.Documents(t.Context(), user, sp.ID)
	if err != nil || len(docs) != 9 {
		t.Errorf("the space holds %d documents (%v); want 9", len(docs), err)
	}

	// A document alone in its request that fails is not asked again.
	emb.calls = nil
	res = e.add(t, sp.ID, BytesFile("solo.md", []byte("# Solo\n\nA xylophone solo.\n")))
	if res[0].Status != StatusFailed || len(emb.calls) != 1 {
		t.Errorf("solo: %s after %d calls; want failed after 1", res[0].Status, len(emb.calls))
	}
}

// readCountingStore records, at each PutDocuments, how many files had
// been read.
type readCountingStore struct {
	store.Store
	read   *atomic.Int32
	atPuts []int32
}

func (s *readCountingStore) PutDocuments(ctx context.Context, userID, spaceID string, docs []*sova.Document, apply func([]sova.Document) error) error {
	s.atPuts = append(s.atPuts, s.read.Load())
	return s.Store.PutDocuments(ctx, userID, spaceID, docs, apply)
}

// A window of files ends once BatchBytes of text has been read: the
// files read are written before more are read.
func TestWindowBoundedByText(t *testing.T) {
	var read atomic.Int32
	rec := &readCountingStore{read: &read}
	e := newEnv(t, Config{BatchBytes: 50, Workers: 1}, nil, func(st store.Store, idx Index) (store.Store, Index) {
		rec.Store = st
		return rec, idx
	})
	sp := e.space(t, "Words")
	var files []File
	for _, w := range []string{"alpha", "bravo", "charlie", "delta", "echo"} {
		files = append(files, BytesFile(w+".txt", []byte("The code word of this file is "+w+".")))
	}
	res, err := e.svc.Add(t.Context(), user, sp.ID, files, AddOptions{OnRead: func(string) { read.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(res); !slices.Equal(got, []string{"alpha.txt:added", "bravo.txt:added", "charlie.txt:added", "delta.txt:added", "echo.txt:added"}) {
		t.Fatalf("statuses = %v", got)
	}
	// Each file is 36 bytes: windows of two files (the second passes 50
	// bytes), each written in two batches of one (BatchBytes bounds
	// those too).
	if want := []int32{2, 2, 4, 4, 5}; !slices.Equal(rec.atPuts, want) {
		t.Errorf("files read at each write: %v; want %v", rec.atPuts, want)
	}
	for _, w := range []string{"alpha", "charlie", "echo"} {
		if got := e.found(t, sp.ID, w); !slices.Equal(got, []string{w + ".txt"}) {
			t.Errorf("%s: found %v", w, got)
		}
	}
}
