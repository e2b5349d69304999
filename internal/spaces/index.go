package spaces

import (
	"context"
	"errors"
)

// Index keeps the chunks of every space and finds them again. The
// embedded implementation is Bleve (OpenBleve), one index per space under
// the data directory; a search server can implement the same interface.
//
// A space's chunks carry the ID and version of their document. Versions
// let the Service keep the index and the store in step: a document's row
// names the version whose chunks count, and chunks of any other version
// are left over from an ingestion that did not finish.
type Index interface {
	// Apply changes one space's chunks atomically: when it fails, none of
	// the batch is visible. Calls that only put chunks may run
	// concurrently.
	Apply(ctx context.Context, space string, b *Batch) error
	// Versions lists the document versions the space's index holds.
	Versions(ctx context.Context, space string) ([]DocVersion, error)
	// Search finds chunks in the query's spaces, best first. A space
	// without an index yet has no hits.
	Search(ctx context.Context, q Query) ([]Hit, error)
	// Chunks returns the chunks of one document version with the given
	// sequence numbers, in order; numbers it does not hold are left out.
	Chunks(ctx context.Context, space string, version string, seqs []int) ([]Hit, error)
	// Drop deletes a space's index.
	Drop(ctx context.Context, space string) error
	// Close releases the index; it waits for calls in progress.
	Close() error
}

// DocVersion names one ingestion of a document.
type DocVersion struct {
	DocID   string
	Version string
}

// Batch is one atomic change to a space's chunks.
type Batch struct {
	// Remove drops the chunks of document versions; an empty Version
	// drops every version of the document.
	Remove []DocVersion
	// Put adds chunks.
	Put []IndexedChunk
}

// IndexedChunk is a chunk with what the index keeps about its document.
type IndexedChunk struct {
	DocID   string
	Version string
	DocName string
	Title   string
	Chunk
	// Vector is the chunk's embedding; nil without an embedding model.
	Vector []float32
}

// Query is a search of one or more spaces.
type Query struct {
	Spaces []string
	Text   string
	// Vector is the query's embedding: when set, chunks are ranked by
	// BM25 and by embedding similarity, and the two rankings are fused.
	Vector []float32
	Limit  int
}

// Hit is one chunk found by a search.
type Hit struct {
	SpaceID    string `json:"spaceId"`
	SpaceName  string `json:"space,omitempty"`
	DocumentID string `json:"documentId"`
	Document   string `json:"document"` // the document's name
	Title      string `json:"title,omitempty"`
	Version    string `json:"-"`
	Chunk
	// ChunkCount is how many chunks the document has, for "chunk 3 of 12".
	ChunkCount int     `json:"chunkCount,omitempty"`
	Snippet    string  `json:"snippet"`
	Score      float64 `json:"score"`
	// URL is the hit's citable address, see URL.
	URL string `json:"url"`
}

// ErrIndexBusy is matched when a space's index is held by another Sova
// process (the embedded index is opened by one process at a time).
var ErrIndexBusy = errors.New("the space's index is in use by another Sova process (is `sova serve` running? stop it, or add documents through its API)")

// ErrClosed is returned by an index after Close.
var ErrClosed = errors.New("spaces: index closed")
