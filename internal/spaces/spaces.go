// Package spaces keeps a person's documents in named spaces and searches
// them: it reads Markdown, plain text, HTML, PDF and DOCX, cuts them into
// chunks that keep their headings, indexes the chunks (BM25 with Russian
// and English stemming; with an embedding model, hybrid with embeddings)
// and finds passages with their document, position and a snippet.
//
// The store holds what a space contains (documents, sizes, checksums,
// chunk counts); the Index holds the text. Chunks carry their document's
// version and a search shows only chunks whose version the store names,
// so the store decides what a space holds: new chunks are indexed first,
// invisible, then a short store transaction makes them visible, and a
// failure of either step removes them again, so a failed ingestion leaves
// the space as it was. What a crash leaves in the index is invisible and
// removed by the next process to change the space.
//
// PDF, DOCX and HTML files are parsed in a worker process under
// Config.Parse (internal/isolate), before the space's lock is taken: a
// crafted file can make a parser loop or swell, and only a process can be
// stopped. The DOCX reader bounds what it unpacks as it goes.
package spaces

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sova-ai/sova"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/sova-ai/sova/internal/isolate"
)

// Embedder turns texts into embedding vectors (one per text, in order).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Config tunes the service; zero fields take the defaults.
type Config struct {
	// ChunkChars is the target size of a chunk in characters
	// (SOVA_SPACES_CHUNK_CHARS).
	ChunkChars int
	// ChunkOverlap is how much of a chunk's end the next chunk of the same
	// section repeats (SOVA_SPACES_CHUNK_OVERLAP).
	ChunkOverlap int
	// MaxFileBytes is the largest file taken (SOVA_SPACES_MAX_FILE_BYTES).
	MaxFileBytes int64
	// BatchFiles and BatchBytes bound a window of files read at once
	// (files, and text read), and BatchBytes one atomic batch written.
	BatchFiles int
	BatchBytes int
	// EmbedBatch is how many texts go to the embedding model per call.
	EmbedBatch int
	// Workers is how many files are read in parallel (default: CPUs).
	Workers int
	// Parse limits the reading of one PDF, DOCX or HTML file, which runs
	// in a worker process (SOVA_PARSE_TIMEOUT, SOVA_PARSE_MEMORY).
	Parse isolate.Limits
	// UploadsPerPerson caps one person's adds going at once
	// (uploadcap.go; 0: DefaultUploadsPerPerson).
	UploadsPerPerson int
}

// Defaults of Config.
const (
	DefaultChunkChars   = 1200
	DefaultChunkOverlap = 150
	DefaultMaxFileBytes = 50 << 20
	defaultBatchFiles   = 1024
	defaultBatchBytes   = 32 << 20
	defaultEmbedBatch   = 64
	// maxEmbedChars bounds the text of one chunk sent for embedding.
	maxEmbedChars = 8000
)

func (c Config) withDefaults() Config {
	if c.ChunkChars <= 0 {
		c.ChunkChars = DefaultChunkChars
	}
	if c.ChunkOverlap < 0 {
		c.ChunkOverlap = 0
	}
	if c.MaxFileBytes <= 0 {
		c.MaxFileBytes = DefaultMaxFileBytes
	}
	if c.BatchFiles <= 0 {
		c.BatchFiles = defaultBatchFiles
	}
	if c.BatchBytes <= 0 {
		c.BatchBytes = defaultBatchBytes
	}
	if c.EmbedBatch <= 0 {
		c.EmbedBatch = defaultEmbedBatch
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.UploadsPerPerson <= 0 {
		c.UploadsPerPerson = DefaultUploadsPerPerson
	}
	return c
}

// Service manages spaces: their metadata in the store and their text in
// the index. It is safe for concurrent use; changes to one space take
// turns.
type Service struct {
	store sova.SpaceStore
	index Index
	embed Embedder
	cfg   Config
	log   *slog.Logger
	terms *termAnalyzer // for snippets

	mu         sync.Mutex
	locks      map[string]chan struct{}
	reconciled map[string]bool
	uploads    map[string]int // adds going per person (uploadcap.go)
}

// NewService returns a Service. embed may be nil (BM25 only).
func NewService(st sova.SpaceStore, idx Index, embed Embedder, cfg Config, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{
		store: st, index: idx, embed: embed, cfg: cfg.withDefaults(), log: log,
		terms: newTermAnalyzer(), locks: map[string]chan struct{}{}, reconciled: map[string]bool{}, uploads: map[string]int{},
	}
}

// Hybrid reports whether searches use embeddings as well as BM25.
func (s *Service) Hybrid() bool { return s.embed != nil }

// Close releases the index.
func (s *Service) Close() error { return s.index.Close() }

// lock serialises changes to one space within this process. It is held
// for store and index work only, never while a file is parsed, and waiting
// for it ends with ctx.
func (s *Service) lock(ctx context.Context, spaceID string) (unlock func(), err error) {
	s.mu.Lock()
	m := s.locks[spaceID]
	if m == nil {
		m = make(chan struct{}, 1)
		s.locks[spaceID] = m
	}
	s.mu.Unlock()
	select {
	case m <- struct{}{}:
		return func() { <-m }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// CreateSpace creates a space.
func (s *Service) CreateSpace(ctx context.Context, userID, name, description string) (*sova.Space, error) {
	sp := &sova.Space{UserID: userID, Name: name, Description: strings.TrimSpace(description)}
	if err := s.store.CreateSpace(ctx, sp); err != nil {
		return nil, err
	}
	return sp, nil
}

// Spaces lists the user's spaces with their counts.
func (s *Service) Spaces(ctx context.Context, userID string) ([]sova.Space, error) {
	return s.store.ListSpaces(ctx, userID)
}

// Space finds one of the user's spaces by ID or, failing that, by name.
func (s *Service) Space(ctx context.Context, userID, ref string) (*sova.Space, error) {
	sp, err := s.store.GetSpace(ctx, userID, ref)
	if errors.Is(err, sova.ErrNotFound) {
		sp, err = s.store.GetSpaceByName(ctx, userID, strings.TrimSpace(ref))
	}
	if errors.Is(err, sova.ErrNotFound) {
		return nil, fmt.Errorf("no space %q: %w", ref, sova.ErrNotFound)
	}
	return sp, err
}

// UpdateSpace renames a space and sets its description.
func (s *Service) UpdateSpace(ctx context.Context, userID, spaceID, name, description string) error {
	return s.store.UpdateSpace(ctx, userID, spaceID, name, strings.TrimSpace(description))
}

// DeleteSpace deletes a space, its documents and its index. The rows go
// first: an index left behind when removing it fails belongs to no space
// and is never searched.
func (s *Service) DeleteSpace(ctx context.Context, userID, spaceID string) error {
	unlock, err := s.lock(ctx, spaceID)
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.store.DeleteSpace(ctx, userID, spaceID); err != nil {
		return err
	}
	if err := s.index.Drop(ctx, spaceID); err != nil {
		s.log.Warn("space deleted but its index could not be removed", "space", spaceID, "err", err)
	}
	s.mu.Lock()
	delete(s.reconciled, spaceID)
	s.mu.Unlock()
	return nil
}

// Documents lists a space's documents.
func (s *Service) Documents(ctx context.Context, userID, spaceID string) ([]sova.Document, error) {
	return s.store.ListDocuments(ctx, userID, spaceID)
}

// File is one file to add. Name is unique within the space (a file name,
// or a path relative to the folder added, with forward slashes).
type File struct {
	Name string
	Open func() (io.ReadCloser, error)
}

// BytesFile is a File whose content is in memory.
func BytesFile(name string, data []byte) File {
	return File{Name: name, Open: func() (io.ReadCloser, error) {
		return bytesReader{bytes.NewReader(data)}, nil
	}}
}

// bytesReader keeps bytes.Reader's Len visible (readAll sizes its buffer
// by it), which io.NopCloser would hide.
type bytesReader struct{ *bytes.Reader }

func (bytesReader) Close() error { return nil }

// Status of one file after Add.
const (
	StatusAdded     = "added"
	StatusReplaced  = "replaced"
	StatusUnchanged = "unchanged"
	StatusFailed    = "failed"
)

// FileResult is what became of one file.
type FileResult struct {
	Name     string         `json:"name"`
	Status   string         `json:"status"`
	Document *sova.Document `json:"document,omitempty"`
	Error    string         `json:"error,omitempty"`
	err      error
}

// Err is the file's error, for errors.Is.
func (r FileResult) Err() error { return r.err }

// AddOptions observe an Add.
type AddOptions struct {
	// OnRead is called after each file has been read and chunked (from
	// one goroutine at a time).
	OnRead func(name string)
}

// Add reads files into a space. A file whose checksum matches the stored
// document of that name is left as it is; a changed one replaces its
// chunks. Files that cannot be read are reported as failed and skipped.
// The rest are written in batches (all at once unless there are more
// than a thousand files or tens of MiB of text); each batch is atomic
// in the store and the index together. The returned error is set when a
// batch could not be written; the results then cover the files
// processed so far, and the failed batch left the space as it was.
//
// Files are read and parsed before the space's lock is taken (PDF, DOCX
// and HTML in worker processes under Config.Parse), so a file that takes
// long to parse holds up no other change to the space; the lock covers
// only the store and the index.
func (s *Service) Add(ctx context.Context, userID, spaceID string, files []File, opt AddOptions) ([]FileResult, error) {
	release, err := s.holdUpload(userID)
	if err != nil {
		return nil, err
	}
	defer release()
	unlock, err := s.lock(ctx, spaceID)
	if err != nil {
		return nil, err
	}
	err = s.reconcile(ctx, userID, spaceID)
	unlock()
	if err != nil {
		return nil, err
	}
	// What the space holds now, to skip reading unchanged files; checked
	// again under the lock before anything is written.
	existing, err := s.store.ListDocuments(ctx, userID, spaceID)
	if err != nil {
		return nil, err
	}
	known := make(map[string]sova.Document, len(existing))
	for _, d := range existing {
		known[d.Name] = d
	}
	// A name given twice is ambiguous: the later file is refused.
	results := make([]FileResult, len(files))
	given := make(map[string]bool, len(files))
	skip := make([]bool, len(files))
	for i, f := range files {
		if name, err := CleanName(f.Name); err == nil {
			if given[name] {
				err := fmt.Errorf("%s: %w: the same name was given twice", name, sova.ErrConflict)
				results[i] = FileResult{Name: f.Name, Status: StatusFailed, Error: err.Error(), err: err}
				skip[i] = true
			}
			given[name] = true
		}
	}
	for start := 0; start < len(files); {
		// Read the next window of files in parallel, without the lock: up
		// to BatchFiles files, fewer once BatchBytes of text has been read
		// (reads already going finish), so that a window of many short
		// files is written in one batch and one of large files is bounded.
		end := min(start+s.cfg.BatchFiles, len(files))
		items := make([]*prepared, end-start)
		g, gctx := errgroup.WithContext(ctx)
		var (
			onRead sync.Mutex
			text   atomic.Int64
			// A slot is taken before the text read so far is looked
			// at, so that the reads it waited for count.
			slots = make(chan struct{}, s.cfg.Workers)
		)
	window:
		for i := start; i < end; i++ {
			if skip[i] {
				continue
			}
			select {
			case slots <- struct{}{}:
			case <-gctx.Done():
				break window
			}
			if text.Load() >= int64(s.cfg.BatchBytes) {
				<-slots
				end = i
				break
			}
			g.Go(func() error {
				defer func() { <-slots }()
				p := s.prepare(gctx, files[i], known)
				items[i-start] = p
				text.Add(int64(p.textBytes))
				if opt.OnRead != nil {
					onRead.Lock()
					opt.OnRead(files[i].Name)
					onRead.Unlock()
				}
				return gctx.Err()
			})
		}
		if err := cmp.Or(g.Wait(), ctx.Err()); err != nil {
			return results[:start], err
		}
		items = items[:end-start]
		if s.embed != nil {
			if err := s.embedWindow(ctx, items); err != nil {
				return results[:start], err
			}
		}
		unlock, err := s.lock(ctx, spaceID)
		if err != nil {
			return results[:start], err
		}
		err = s.writeWindow(ctx, userID, spaceID, files, start, items, results, known)
		unlock()
		if err != nil {
			return s.notWritten(results[:end], files, err), err
		}
		start = end
	}
	return results, nil
}

// writeWindow writes a window of prepared files, files[start:start+len(items)],
// in batches of bounded text; results keep the order of the files. The
// caller holds the space's lock. The files were read against a snapshot
// of the space (known); settle brings each in line with the space as it
// is now.
func (s *Service) writeWindow(ctx context.Context, userID, spaceID string, files []File, start int, items []*prepared, results []FileResult, known map[string]sova.Document) error {
	current, err := s.store.ListDocuments(ctx, userID, spaceID)
	if err != nil {
		return err
	}
	now := make(map[string]sova.Document, len(current))
	for _, d := range current {
		now[d.Name] = d
	}
	var (
		batch []int // indexes into files
		size  int
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		ps := make([]*prepared, len(batch))
		for j, i := range batch {
			ps[j] = items[i-start]
		}
		err := s.write(ctx, userID, spaceID, ps)
		for j, i := range batch {
			if err == nil {
				known[ps[j].doc.Name] = *ps[j].doc
			}
			results[i] = ps[j].result(err)
		}
		batch, size = nil, 0
		return err
	}
	for k, p := range items {
		i := start + k
		if p != nil && p.err == nil {
			s.settle(p, now)
		}
		switch {
		case p == nil: // refused before reading
			continue
		case p.err != nil:
			results[i] = FileResult{Name: files[i].Name, Status: StatusFailed, Error: p.err.Error(), err: p.err}
			continue
		case p.unchanged != nil:
			results[i] = FileResult{Name: files[i].Name, Status: StatusUnchanged, Document: p.unchanged}
			continue
		}
		if len(batch) > 0 && size+p.textBytes > s.cfg.BatchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		batch = append(batch, i)
		size += p.textBytes
	}
	return flush()
}

// settle brings a file read against a snapshot of the space in line with
// the space as it is now (now, read under the lock): another change may
// have added, replaced or deleted the document of that name meanwhile.
func (s *Service) settle(p *prepared, now map[string]sova.Document) {
	if p.unchanged != nil {
		if cur, ok := now[p.unchanged.Name]; !ok || cur.SHA256 != p.unchanged.SHA256 {
			p.err = fmt.Errorf("%s: %w: the document changed while it was being added; add it again", p.unchanged.Name, sova.ErrConflict)
			p.unchanged = nil
		} else {
			p.unchanged = &cur
		}
		return
	}
	cur, ok := now[p.doc.Name]
	switch {
	case ok && cur.SHA256 == p.doc.SHA256:
		p.unchanged = &cur
	case ok:
		p.doc.ID, p.replaces = cur.ID, true
	case p.replaces:
		// Deleted meanwhile: this is a new document again.
		p.doc.ID, p.replaces = uuid.NewString(), false
	}
}

// notWritten marks the files of a window that a failed batch kept from
// being written.
func (s *Service) notWritten(results []FileResult, files []File, cause error) []FileResult {
	for i := range results {
		if results[i].Status == "" {
			err := fmt.Errorf("not written: an earlier batch failed: %w", cause)
			results[i] = FileResult{Name: files[i].Name, Status: StatusFailed, Error: err.Error(), err: err}
		}
	}
	return results
}

// prepared is a file read and chunked, ready to be written.
type prepared struct {
	doc *sova.Document
	// Either blocks, chunked as they are indexed, or (with an embedding
	// model, whose vectors are made before the space's lock is taken)
	// chunks with their vectors.
	blocks    []block
	chunks    []Chunk
	vectors   [][]float32
	textBytes int
	replaces  bool
	unchanged *sova.Document
	err       error
}

func (p *prepared) result(writeErr error) FileResult {
	if writeErr != nil {
		return FileResult{Name: p.doc.Name, Status: StatusFailed, Error: writeErr.Error(), err: writeErr}
	}
	st := StatusAdded
	if p.replaces {
		st = StatusReplaced
	}
	d := *p.doc
	return FileResult{Name: d.Name, Status: st, Document: &d}
}

// prepare reads, checks and chunks one file.
func (s *Service) prepare(ctx context.Context, f File, known map[string]sova.Document) *prepared {
	fail := func(err error) *prepared { return &prepared{err: err} }
	name, err := CleanName(f.Name)
	if err != nil {
		return fail(err)
	}
	if format, ok := extFormats[strings.ToLower(path.Ext(name))]; ok {
		if _, isolated := isolatedFormats[format]; isolated && f.Open != nil {
			return s.prepareStreamed(ctx, f, name, format, known)
		}
	}
	data, err := s.read(f)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", name, err))
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	old, exists := known[name]
	if exists && old.SHA256 == digest {
		return &prepared{unchanged: &old}
	}
	format, err := DetectFormat(name, data)
	if err != nil {
		return fail(err)
	}
	size := int64(len(data))
	// data was read here and is not written again: Markdown and plain
	// text are parsed from it without a copy (ownedParse), their blocks
	// slices of it.
	doc, err := ownedParse(ctx, s.cfg.Parse, name, format, data)
	if err != nil {
		return fail(err)
	}
	return s.chunked(name, format, size, digest, old, exists, doc)
}

// prepareStreamed is prepare for a file parsed in a worker (PDF, DOCX,
// HTML, known by its extension): the file goes from where it is to the
// worker without being held here, so that only the worker's result is
// (a 49 MiB DOCX held beside its text was most of the upload's peak).
// The file is read twice, to hash it and to parse it; the second reading
// must hash the same, or the file changed under the upload.
func (s *Service) prepareStreamed(ctx context.Context, f File, name string, format Format, known map[string]sova.Document) *prepared {
	fail := func(err error) *prepared { return &prepared{err: err} }
	sum, size, err := s.hashFile(f, nil)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", name, err))
	}
	digest := hex.EncodeToString(sum)
	old, exists := known[name]
	if exists && old.SHA256 == digest {
		return &prepared{unchanged: &old}
	}
	var doc *parsed
	again, _, err := s.hashFile(f, func(r io.Reader) error {
		var err error
		doc, err = parseIsolatedReader(ctx, s.cfg.Parse, name, format, r)
		return err
	})
	if err != nil {
		return fail(err)
	}
	if !bytes.Equal(again, sum) {
		return fail(fmt.Errorf("%s: the file changed while it was read", name))
	}
	return s.chunked(name, format, size, digest, old, exists, doc)
}

// hashFile reads f to its end, within the size limit, and returns its
// SHA-256 and size. With use set, use reads the file (and must read it to
// its end; what it leaves is read here).
func (s *Service) hashFile(f File, use func(io.Reader) error) ([]byte, int64, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, 0, err
	}
	defer rc.Close()
	h := sha256.New()
	cr := &countingReader{r: io.TeeReader(io.LimitReader(rc, s.cfg.MaxFileBytes+1), h)}
	if use != nil {
		if err := use(cr); err != nil {
			return nil, 0, err
		}
	}
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return nil, 0, err
	}
	if cr.n > s.cfg.MaxFileBytes {
		return nil, 0, fmt.Errorf("%w: larger than %d bytes (SOVA_SPACES_MAX_FILE_BYTES)", ErrTooLarge, s.cfg.MaxFileBytes)
	}
	return h.Sum(nil), cr.n, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// chunked makes the prepared document of a parsed file: its chunks (with
// an embedding model; embedWindow makes their vectors), or its blocks to
// be chunked as they are indexed.
func (s *Service) chunked(name string, format Format, size int64, digest string, old sova.Document, exists bool, doc *parsed) *prepared {
	fail := func(err error) *prepared { return &prepared{err: err} }
	// A replaced document keeps its ID; the chunks are indexed under it
	// before the row is written.
	id := old.ID
	if !exists {
		u, err := uuid.NewV7()
		if err != nil {
			return fail(err)
		}
		id = u.String()
	}
	p := &prepared{
		doc: &sova.Document{
			ID: id, Name: name, Title: doc.title, Format: string(format), Size: size,
			SHA256: digest, Version: uuid.NewString(), Notice: doc.notice,
		},
		replaces: exists,
	}
	if s.embed == nil {
		// The chunks are made as they are indexed (putChunks), a step at
		// a time, rather than held all at once beside the blocks. finish
		// saw text in the blocks, so there will be at least one chunk.
		p.blocks = doc.blocks
		for _, b := range doc.blocks {
			p.textBytes += len(b.text)
		}
		return p
	}
	// The vectors are made for the whole window of files at once
	// (embedWindow), so that short documents share requests.
	chunks := chunkBlocks(doc.blocks, s.cfg.ChunkChars, s.cfg.ChunkOverlap)
	if len(chunks) == 0 {
		return fail(fmt.Errorf("%s: %w", name, ErrNoText))
	}
	p.chunks, p.doc.ChunkCount = chunks, len(chunks)
	for _, c := range chunks {
		p.textBytes += len(c.Text)
	}
	return p
}

// embedTexts are the texts a prepared document's chunks are embedded by.
func (p *prepared) embedTexts() []string {
	texts := make([]string, len(p.chunks))
	for i, c := range p.chunks {
		texts[i] = clipBytes(indexedText(p.doc.Title, c.Heading, c.Text), maxEmbedChars)
	}
	return texts
}

// embedWindow makes the vectors of a window of prepared files. The
// passages of all its documents go to the embedding model in requests of
// up to EmbedBatch, several at a time: a request per document would cost
// a round trip per short document. A document whose request failed is
// embedded again on its own when the request also held others, so that
// one document the model refuses fails alone; a document that fails on
// its own is reported failed. Only a cancelled ctx is returned.
func (s *Service) embedWindow(ctx context.Context, items []*prepared) error {
	type ref struct {
		p   *prepared
		seq int // index into p.chunks
	}
	var (
		refs  []ref
		texts []string
	)
	for _, p := range items {
		if p == nil || p.err != nil || p.unchanged != nil || p.chunks == nil {
			continue
		}
		p.vectors = make([][]float32, len(p.chunks))
		for i, t := range p.embedTexts() {
			refs = append(refs, ref{p, i})
			texts = append(texts, t)
		}
	}
	type failure struct {
		err    error
		shared bool // a failed request held other documents too
	}
	var (
		mu     sync.Mutex
		failed = map[*prepared]failure{}
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.Workers)
	for start := 0; start < len(texts); start += s.cfg.EmbedBatch {
		end := min(start+s.cfg.EmbedBatch, len(texts))
		g.Go(func() error {
			vecs, err := s.embedPart(gctx, texts[start:end])
			if err != nil {
				if ctxErr := gctx.Err(); ctxErr != nil {
					return ctxErr
				}
				shared := refs[start].p != refs[end-1].p
				mu.Lock()
				for _, r := range refs[start:end] {
					failed[r.p] = failure{err: err, shared: shared || failed[r.p].shared}
				}
				mu.Unlock()
				return nil
			}
			for k, v := range vecs {
				r := refs[start+k]
				r.p.vectors[r.seq] = v
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if len(failed) == 0 {
		return nil
	}
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.Workers)
	for p, f := range failed {
		g.Go(func() error {
			err := f.err
			if f.shared {
				var vecs [][]float32
				if vecs, err = s.embedAll(gctx, p.embedTexts()); err == nil {
					p.vectors = vecs
					return nil
				}
				if ctxErr := gctx.Err(); ctxErr != nil {
					return ctxErr
				}
			}
			*p = prepared{err: fmt.Errorf("%s: embedding: %w", p.doc.Name, err)}
			return nil
		})
	}
	return g.Wait()
}

func (s *Service) read(f File) ([]byte, error) {
	if f.Open == nil {
		return nil, errors.New("no content")
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := readAll(rc, s.cfg.MaxFileBytes+1)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > s.cfg.MaxFileBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes (SOVA_SPACES_MAX_FILE_BYTES)", ErrTooLarge, s.cfg.MaxFileBytes)
	}
	return data, nil
}

// readAll reads up to limit bytes. When the reader knows its size (a file,
// an in-memory reader) the buffer is made that size at once: io.ReadAll
// grows by doubling, which for a 50 MiB file passes through buffers that
// add up to several times the file.
func readAll(r io.Reader, limit int64) ([]byte, error) {
	var size int64 = -1
	switch v := r.(type) {
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	case interface{ Len() int }:
		size = int64(v.Len())
	}
	if size < 0 || size > limit {
		return io.ReadAll(io.LimitReader(r, limit))
	}
	// One byte more than the size, so that a file that grew meanwhile is
	// seen (and read on, still within limit).
	lr := io.LimitReader(r, limit)
	buf := make([]byte, size+1)
	n, err := io.ReadFull(lr, buf)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return buf[:n], nil
	case err != nil:
		return nil, err
	}
	rest, err := io.ReadAll(lr)
	return append(buf, rest...), err
}

// ErrTooLarge is matched when a file is over the size limit.
var ErrTooLarge = errors.New("file too large")

func (s *Service) embedAll(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += s.cfg.EmbedBatch {
		vecs, err := s.embedPart(ctx, texts[start:min(start+s.cfg.EmbedBatch, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// embedPart embeds texts in one call to the model.
func (s *Service) embedPart(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := s.embed.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("the embedding model returned %d vectors for %d texts", len(vecs), len(texts))
	}
	return vecs, nil
}

// CleanName checks a document name: forward slashes, no empty, "." or
// ".." elements, no leading slash.
func CleanName(name string) (string, error) {
	n := strings.ReplaceAll(strings.TrimSpace(name), `\`, "/")
	n = strings.TrimLeft(n, "/")
	if n == "" {
		return "", errors.New("a document needs a name")
	}
	if c := path.Clean(n); c != n || c == "." || strings.HasPrefix(c, "../") || c == ".." {
		return "", fmt.Errorf("document name %q is not a clean relative path", name)
	}
	if len([]rune(n)) > sova.MaxDocumentNameChars {
		return "", fmt.Errorf("document name longer than %d characters", sova.MaxDocumentNameChars)
	}
	return n, nil
}

// write stores a batch of documents and indexes their chunks.
//
// The store is the source of truth: a search shows a chunk only when the
// store lists its document at the chunk's version. So the new chunks are
// indexed first, while they are still invisible; then one short store
// transaction writes the rows that make them visible (SQLite's write lock
// is not held while indexing). If either step fails, the new chunks are
// removed again and the space is as it was. After the commit, the chunks
// of the versions they replace are removed. Whatever a crash or a failed
// removal leaves behind is invisible and is cleaned up by reconcile.
func (s *Service) write(ctx context.Context, userID, spaceID string, batch []*prepared) error {
	docs := make([]*sova.Document, len(batch))
	ids := make([]string, len(batch))
	added := make([]DocVersion, len(batch))
	for i, p := range batch {
		docs[i], ids[i] = p.doc, p.doc.ID
		added[i] = DocVersion{DocID: p.doc.ID, Version: p.doc.Version}
	}
	if err := s.putChunks(ctx, spaceID, batch); err != nil {
		s.removeVersions(ctx, spaceID, added, "undoing a failed index change", err)
		return err
	}
	var replaced []DocVersion
	err := s.store.PutDocuments(ctx, userID, spaceID, docs, func(old []sova.Document) error {
		// The chunks were indexed under the IDs known when the batch was
		// read; a row that changed since (another process) is not ours.
		for i, d := range docs {
			if d.ID != ids[i] {
				return fmt.Errorf("document %q changed while it was being added: %w", d.Name, sova.ErrConflict)
			}
		}
		for _, d := range old {
			replaced = append(replaced, DocVersion{DocID: d.ID, Version: d.Version})
		}
		return nil
	})
	if err != nil {
		s.removeVersions(ctx, spaceID, added, "undoing an index change whose store transaction failed", err)
		return err
	}
	s.removeVersions(ctx, spaceID, replaced, "removing the chunks of replaced documents", nil)
	return nil
}

// putChunks indexes the chunks of a batch of documents in steps of at
// most indexStepBytes of text, each one index segment. One step for a
// whole large document would hold the index's analysis of all its chunks
// at once (about 15× the text for a 50 MiB file); the steps are invisible
// until the store names the version (see write), so a failure midway
// leaves the space as it was once write removes the version.
func (s *Service) putChunks(ctx context.Context, spaceID string, batch []*prepared) error {
	var (
		step []IndexedChunk
		size int
		err  error
	)
	flush := func() error {
		if len(step) == 0 {
			return nil
		}
		err := s.index.Apply(ctx, spaceID, &Batch{Put: step})
		step, size = step[:0], 0
		return err
	}
	put := func(ic IndexedChunk) {
		if err != nil {
			return
		}
		step = append(step, ic)
		size += len(ic.Title) + len(ic.Heading) + len(ic.Text)
		if size >= indexStepBytes {
			err = flush()
		}
	}
	for _, p := range batch {
		if p.chunks == nil {
			p.doc.ChunkCount = eachChunk(p.blocks, s.cfg.ChunkChars, s.cfg.ChunkOverlap, func(c Chunk) {
				put(IndexedChunk{DocID: p.doc.ID, Version: p.doc.Version, DocName: p.doc.Name, Title: p.doc.Title, Chunk: c})
			})
			continue
		}
		for i, c := range p.chunks {
			ic := IndexedChunk{DocID: p.doc.ID, Version: p.doc.Version, DocName: p.doc.Name, Title: p.doc.Title, Chunk: c}
			if p.vectors != nil {
				ic.Vector = p.vectors[i]
			}
			put(ic)
		}
	}
	if err != nil {
		return err
	}
	return flush()
}

// indexStepBytes bounds the text indexed in one step (putChunks). It is
// counted in bytes, not chunks: the analysis a step holds grows with its
// text, while every segment costs merging later: a step of 512 chunks
// cut the short chunks of short documents into twice the segments their
// text needed. 512 chunks of Russian text at the default size come to
// about 870 KiB, so a large document is indexed in steps of no more
// memory than before (TestUploadPeakMemory sits close to its bound).
const indexStepBytes = 768 << 10

// removeVersions drops chunks from the index after the store no longer
// names them. A failure only leaves invisible leftovers, so it is logged
// and the space is reconciled on its next change.
func (s *Service) removeVersions(ctx context.Context, spaceID string, versions []DocVersion, what string, cause error) {
	if len(versions) == 0 {
		return
	}
	// The store has spoken; the index follows even when the request is gone.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := s.index.Apply(ctx, spaceID, &Batch{Remove: versions}); err != nil {
		s.log.Warn(what+" failed; the leftovers are invisible and will be removed later", "space", spaceID, "cause", cause, "err", err)
		s.mu.Lock()
		delete(s.reconciled, spaceID)
		s.mu.Unlock()
	}
}

// DeleteDocuments deletes documents: their rows, then their chunks.
func (s *Service) DeleteDocuments(ctx context.Context, userID, spaceID string, docIDs []string) error {
	unlock, err := s.lock(ctx, spaceID)
	if err != nil {
		return err
	}
	defer unlock()
	var deleted []DocVersion
	err = s.store.DeleteDocuments(ctx, userID, spaceID, docIDs, func(rows []sova.Document) error {
		for _, d := range rows {
			deleted = append(deleted, DocVersion{DocID: d.ID}) // every version
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.removeVersions(ctx, spaceID, deleted, "removing the chunks of deleted documents", nil)
	return nil
}

// reconcile brings a space's index in line with the store once per
// process: chunks of versions the store does not name are removed, and
// documents whose chunks are missing lose their checksum, so that adding
// the file again reads it. The caller holds the space's lock.
func (s *Service) reconcile(ctx context.Context, userID, spaceID string) error {
	s.mu.Lock()
	done := s.reconciled[spaceID]
	s.mu.Unlock()
	if done {
		return nil
	}
	docs, err := s.store.ListDocuments(ctx, userID, spaceID)
	if err != nil {
		return err
	}
	have, err := s.index.Versions(ctx, spaceID)
	if err != nil {
		return err
	}
	want := make(map[string]string, len(docs))
	for _, d := range docs {
		want[d.ID] = d.Version
	}
	present := make(map[string]bool, len(have))
	var stale Batch
	for _, dv := range have {
		if want[dv.DocID] == dv.Version {
			present[dv.DocID] = true
			continue
		}
		stale.Remove = append(stale.Remove, dv)
	}
	if len(stale.Remove) > 0 {
		s.log.Warn("removing chunks left over by an unfinished change", "space", spaceID, "versions", len(stale.Remove))
		if err := s.index.Apply(ctx, spaceID, &stale); err != nil {
			return err
		}
	}
	var lost []string
	for _, d := range docs {
		if !present[d.ID] && d.ChunkCount > 0 {
			lost = append(lost, d.ID)
		}
	}
	if len(lost) > 0 {
		s.log.Warn("documents whose chunks are missing from the index will be read again when added", "space", spaceID, "documents", len(lost))
		if err := s.store.ForgetDocumentContent(ctx, userID, spaceID, lost); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.reconciled[spaceID] = true
	s.mu.Unlock()
	return nil
}

// EmbedFunc adapts an embedding function with float64 vectors, such as
// (*llm.Client).Embed, to an Embedder.
type EmbedFunc func(ctx context.Context, texts []string) ([][]float64, error)

// Embed implements Embedder.
func (f EmbedFunc) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := f(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(vs))
	for i, v := range vs {
		out[i] = make([]float32, len(v))
		for j, x := range v {
			out[i][j] = float32(x)
		}
	}
	return out, nil
}
