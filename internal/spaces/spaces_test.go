package spaces

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/store"
)

const user = "u1"

type testEnv struct {
	svc   *Service
	st    store.Store
	index Index
	dir   string
}

// newEnv opens a SQLite store and a Bleve index in a temporary directory.
// wrap, when set, wraps the store and the index (to inject failures).
func newEnv(t *testing.T, cfg Config, embed Embedder, wrap func(store.Store, Index) (store.Store, Index)) *testEnv {
	t.Helper()
	dir := t.TempDir()
	st, err := store.OpenSQLite(t.Context(), filepath.Join(dir, "sova.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	idx, err := OpenBleve(filepath.Join(dir, "spaces"), BleveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ix Index = idx
	var s store.Store = st
	if wrap != nil {
		s, ix = wrap(st, idx)
	}
	svc := NewService(s, ix, embed, cfg, nil)
	t.Cleanup(func() { _ = svc.Close() })
	return &testEnv{svc: svc, st: st, index: idx, dir: dir}
}

func (e *testEnv) space(t *testing.T, name string) *sova.Space {
	t.Helper()
	sp, err := e.svc.CreateSpace(t.Context(), user, name, "")
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func (e *testEnv) add(t *testing.T, spaceID string, files ...File) []FileResult {
	t.Helper()
	res, err := e.svc.Add(t.Context(), user, spaceID, files, AddOptions{})
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	return res
}

func statuses(res []FileResult) []string {
	var out []string
	for _, r := range res {
		out = append(out, r.Name+":"+r.Status)
	}
	return out
}

// found returns "document#seq" of the hits.
func (e *testEnv) found(t *testing.T, spaceID, q string) []string {
	t.Helper()
	hits, err := e.svc.Search(t.Context(), user, []string{spaceID}, q, 10)
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.Document)
	}
	return out
}

const budgetMD = `# Vostok project

## Budget

The budget of the Vostok project is five million roubles, approved in March.

## Risks

The turbine supplier delivered late twice.
`

const budgetRU = `# Проект «Восток»

## Бюджет

Бюджет проекта утверждён советом директоров в марте: пять миллионов рублей.
`

func TestAddSearchReplaceDelete(t *testing.T) {
	e := newEnv(t, Config{}, nil, nil)
	sp := e.space(t, "Projects")
	res := e.add(t, sp.ID,
		BytesFile("vostok.md", []byte(budgetMD)),
		BytesFile("ru/восток.md", []byte(budgetRU)),
		BytesFile("misc.txt", []byte("Nothing to see here about gardening and roses.")),
	)
	if got := statuses(res); !slices.Equal(got, []string{"vostok.md:added", "ru/восток.md:added", "misc.txt:added"}) {
		t.Fatalf("statuses = %v", got)
	}

	hits, err := e.svc.Search(t.Context(), user, []string{sp.ID}, "When was the budget approved?", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Document != "vostok.md" {
		t.Fatalf("hits = %+v", hits)
	}
	h := hits[0]
	if h.Heading != "Vostok project > Budget" || h.Title != "Vostok project" || h.SpaceName != "Projects" || h.ChunkCount != 2 {
		t.Errorf("hit = %+v", h)
	}
	if !strings.Contains(h.Snippet, "budget") || !strings.Contains(h.Text, "five million roubles") {
		t.Errorf("snippet %q, text %q", h.Snippet, h.Text)
	}
	if h.Position() != "chunk 1 of 2, Vostok project > Budget" {
		t.Errorf("position = %q", h.Position())
	}
	gotSpace, gotDoc, seq, err := ParsePassageURL(h.URL)
	if err != nil || gotSpace != sp.ID || gotDoc != h.DocumentID || seq != h.Seq {
		t.Errorf("URL %q parses to %s %s %d %v", h.URL, gotSpace, gotDoc, seq, err)
	}

	// Russian inflections meet: "бюджета" finds "Бюджет"; the heading alone
	// ("Бюджет") is searchable with its passage.
	if got := e.found(t, sp.ID, "утверждение бюджета"); len(got) == 0 || got[0] != "ru/восток.md" {
		t.Errorf("Russian search found %v", got)
	}

	// The same file again is left alone; a changed one replaces its chunks.
	if got := statuses(e.add(t, sp.ID, BytesFile("vostok.md", []byte(budgetMD)))); !slices.Equal(got, []string{"vostok.md:unchanged"}) {
		t.Errorf("re-add = %v", got)
	}
	changed := strings.ReplaceAll(budgetMD, "five million roubles", "seven million roubles, raised in June")
	if got := statuses(e.add(t, sp.ID, BytesFile("vostok.md", []byte(changed)))); !slices.Equal(got, []string{"vostok.md:replaced"}) {
		t.Errorf("changed re-add = %v", got)
	}
	hits, _ = e.svc.Search(t.Context(), user, []string{sp.ID}, "budget roubles", 10)
	var texts []string
	for _, h := range hits {
		texts = append(texts, h.Text)
	}
	joined := strings.Join(texts, "|")
	if strings.Contains(joined, "five million") || !strings.Contains(joined, "seven million") {
		t.Errorf("after replacing, passages = %q", joined)
	}
	vers, err := e.index.Versions(t.Context(), sp.ID)
	if err != nil || len(vers) != 3 {
		t.Errorf("index versions = %v, %v; want one per document", vers, err)
	}

	docs, err := e.svc.Documents(t.Context(), user, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	var misc string
	for _, d := range docs {
		if d.Name == "misc.txt" {
			misc = d.ID
		}
	}
	if err := e.svc.DeleteDocuments(t.Context(), user, sp.ID, []string{misc}); err != nil {
		t.Fatal(err)
	}
	if got := e.found(t, sp.ID, "gardening roses"); len(got) != 0 {
		t.Errorf("deleted document still found: %v", got)
	}
	got, err := e.svc.Space(t.Context(), user, "Projects")
	if err != nil || got.DocumentCount != 2 {
		t.Errorf("space after delete = %+v, %v", got, err)
	}
	if err := e.svc.DeleteDocuments(t.Context(), user, sp.ID, []string{"missing"}); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("deleting a missing document: err = %v", err)
	}
	if _, err := e.svc.Search(t.Context(), user, []string{sp.ID}, "  ", 5); !errors.Is(err, ErrEmptyQuery) {
		t.Errorf("empty query: err = %v", err)
	}
}

func TestAddReportsBadFilesAndKeepsGoodOnes(t *testing.T) {
	e := newEnv(t, Config{MaxFileBytes: 2000}, nil, nil)
	sp := e.space(t, "Mixed")
	res := e.add(t, sp.ID,
		BytesFile("good.md", []byte(budgetMD)),
		BytesFile("picture.png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00")),
		BytesFile("big.txt", []byte(strings.Repeat("word ", 1000))),
		BytesFile("empty.md", []byte("# Title only\n")),
		BytesFile("../escape.txt", []byte("text")),
		File{Name: "unreadable.txt", Open: func() (io.ReadCloser, error) { return nil, os.ErrPermission }},
	)
	want := []string{"good.md:added", "picture.png:failed", "big.txt:failed", "empty.md:failed", "../escape.txt:failed", "unreadable.txt:failed"}
	if got := statuses(res); !slices.Equal(got, want) {
		t.Fatalf("statuses = %v, want %v", got, want)
	}
	checks := []error{nil, ErrUnsupportedFormat, ErrTooLarge, ErrNoText, nil, os.ErrPermission}
	for i, want := range checks {
		if want != nil && !errors.Is(res[i].Err(), want) {
			t.Errorf("%s: err = %v, want %v", res[i].Name, res[i].Err(), want)
		}
	}
	docs, _ := e.svc.Documents(t.Context(), user, sp.ID)
	if len(docs) != 1 {
		t.Errorf("%d documents stored, want 1", len(docs))
	}
}

func TestAddInBatches(t *testing.T) {
	e := newEnv(t, Config{BatchFiles: 2, Workers: 3}, nil, nil)
	sp := e.space(t, "Many")
	var files []File
	for _, w := range []string{"alpha", "bravo", "charlie", "delta", "echo"} {
		files = append(files, BytesFile(w+".txt", []byte("The code word is "+w+".")))
	}
	files = append(files, BytesFile("alpha.txt", []byte("twice")))
	var read atomic.Int32
	res, err := e.svc.Add(t.Context(), user, sp.ID, files, AddOptions{OnRead: func(string) { read.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	if read.Load() != 5 || len(res) != 6 || res[5].Status != StatusFailed || !errors.Is(res[5].Err(), sova.ErrConflict) {
		t.Fatalf("read %d, results %v", read.Load(), statuses(res))
	}
	for _, w := range []string{"alpha", "bravo", "charlie", "delta", "echo"} {
		if got := e.found(t, sp.ID, w); !slices.Equal(got, []string{w + ".txt"}) {
			t.Errorf("%s: found %v", w, got)
		}
	}
}

// failingIndex fails Apply while armed.
type failingIndex struct {
	Index
	armed atomic.Bool
}

var errInjected = errors.New("injected failure")

func (f *failingIndex) Apply(ctx context.Context, space string, b *Batch) error {
	if f.armed.Load() {
		return errInjected
	}
	return f.Index.Apply(ctx, space, b)
}

// failingCommitStore runs the caller's index change and then fails, as a
// commit that fails after the index was written would: the rows roll back.
type failingCommitStore struct {
	store.Store
	armed atomic.Bool
}

func (f *failingCommitStore) PutDocuments(ctx context.Context, userID, spaceID string, docs []*sova.Document, apply func([]sova.Document) error) error {
	return f.Store.PutDocuments(ctx, userID, spaceID, docs, f.wrap(apply))
}

func (f *failingCommitStore) DeleteDocuments(ctx context.Context, userID, spaceID string, ids []string, apply func([]sova.Document) error) error {
	return f.Store.DeleteDocuments(ctx, userID, spaceID, ids, f.wrap(apply))
}

func (f *failingCommitStore) wrap(apply func([]sova.Document) error) func([]sova.Document) error {
	return func(d []sova.Document) error {
		if err := apply(d); err != nil {
			return err
		}
		if f.armed.Load() {
			return errInjected
		}
		return nil
	}
}

// snapshot is what a space holds: its documents' checksums and chunk
// counts, and the index's versions.
func snapshot(t *testing.T, e *testEnv, spaceID string) string {
	t.Helper()
	docs, err := e.st.ListDocuments(t.Context(), user, spaceID)
	if err != nil {
		t.Fatal(err)
	}
	vers, err := e.index.Versions(t.Context(), spaceID)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, d := range docs {
		parts = append(parts, d.Name+"="+d.SHA256[:8]+"/"+d.Version[:8])
	}
	for _, v := range vers {
		parts = append(parts, "index:"+v.Version[:8])
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

func TestFailedIndexLeavesSpaceAsItWas(t *testing.T) {
	var fi *failingIndex
	e := newEnv(t, Config{}, nil, func(s store.Store, i Index) (store.Store, Index) {
		fi = &failingIndex{Index: i}
		return s, fi
	})
	sp := e.space(t, "S")
	e.add(t, sp.ID, BytesFile("vostok.md", []byte(budgetMD)))
	before := snapshot(t, e, sp.ID)

	fi.armed.Store(true)
	changed := strings.ReplaceAll(budgetMD, "five million", "nine million")
	res, err := e.svc.Add(t.Context(), user, sp.ID, []File{
		BytesFile("vostok.md", []byte(changed)), BytesFile("new.md", []byte("# New\n\nBrand new zeppelin text.")),
	}, AddOptions{})
	if !errors.Is(err, errInjected) {
		t.Fatalf("err = %v, want the injected failure", err)
	}
	if got := statuses(res); !slices.Equal(got, []string{"vostok.md:failed", "new.md:failed"}) {
		t.Errorf("statuses = %v", got)
	}
	fi.armed.Store(false)
	if after := snapshot(t, e, sp.ID); after != before {
		t.Errorf("space changed:\nbefore %s\nafter  %s", before, after)
	}
	if got := e.found(t, sp.ID, "zeppelin"); len(got) != 0 {
		t.Errorf("failed document is searchable: %v", got)
	}
	hits, _ := e.svc.Search(t.Context(), user, []string{sp.ID}, "budget million", 5)
	if len(hits) == 0 || !strings.Contains(hits[0].Text, "five million") {
		t.Errorf("old passage lost: %+v", hits)
	}
}

func TestFailedCommitUndoesTheIndex(t *testing.T) {
	var fs *failingCommitStore
	e := newEnv(t, Config{}, nil, func(s store.Store, i Index) (store.Store, Index) {
		fs = &failingCommitStore{Store: s}
		return fs, i
	})
	sp := e.space(t, "S")
	e.add(t, sp.ID, BytesFile("vostok.md", []byte(budgetMD)))
	before := snapshot(t, e, sp.ID)

	fs.armed.Store(true)
	changed := strings.ReplaceAll(budgetMD, "five million", "nine million")
	_, err := e.svc.Add(t.Context(), user, sp.ID, []File{
		BytesFile("vostok.md", []byte(changed)), BytesFile("new.md", []byte("# New\n\nBrand new zeppelin text.")),
	}, AddOptions{})
	if !errors.Is(err, errInjected) {
		t.Fatalf("err = %v, want the injected failure", err)
	}
	if after := snapshot(t, e, sp.ID); after != before {
		t.Errorf("space changed after a failed commit:\nbefore %s\nafter  %s", before, after)
	}
	if got := e.found(t, sp.ID, "zeppelin"); len(got) != 0 {
		t.Errorf("rolled-back document is searchable: %v", got)
	}
	hits, _ := e.svc.Search(t.Context(), user, []string{sp.ID}, "budget million", 5)
	if len(hits) == 0 || !strings.Contains(hits[0].Text, "five million") {
		t.Errorf("old passage not restored: %+v", hits)
	}

	// A delete whose commit fails keeps the document searchable.
	docs, _ := e.svc.Documents(t.Context(), user, sp.ID)
	if err := e.svc.DeleteDocuments(t.Context(), user, sp.ID, []string{docs[0].ID}); !errors.Is(err, errInjected) {
		t.Fatalf("delete: err = %v", err)
	}
	if after := snapshot(t, e, sp.ID); after != before {
		t.Errorf("space changed after a failed delete:\nbefore %s\nafter  %s", before, after)
	}
	if got := e.found(t, sp.ID, "turbine supplier"); !slices.Equal(got, []string{"vostok.md"}) {
		t.Errorf("after a failed delete found %v", got)
	}
}

// TestCrashBetweenIndexAndStore writes to the index as an ingestion would
// and never commits, as if the process died: searches must not show the
// leftovers, and the next writer removes them and marks documents whose
// chunks were lost so that adding them again reads them.
func TestCrashBetweenIndexAndStore(t *testing.T) {
	e := newEnv(t, Config{}, nil, nil)
	sp := e.space(t, "S")
	e.add(t, sp.ID, BytesFile("vostok.md", []byte(budgetMD)))
	docs, _ := e.svc.Documents(t.Context(), user, sp.ID)
	doc := docs[0]

	crashed := &Batch{
		Remove: []DocVersion{{DocID: doc.ID}}, // the replaced version's chunks go in the same batch
		Put: []IndexedChunk{
			{DocID: doc.ID, Version: "v-new", DocName: "vostok.md", Chunk: Chunk{Seq: 1, Text: "Replacement text about a zeppelin."}},
			{DocID: "orphan", Version: "v-orphan", DocName: "orphan.md", Chunk: Chunk{Seq: 1, Text: "An orphan about a zeppelin."}},
		},
	}
	if err := e.index.Apply(t.Context(), sp.ID, crashed); err != nil {
		t.Fatal(err)
	}
	// A new process over the same store and index.
	svc := NewService(e.st, e.index, nil, Config{}, nil)
	hits, err := svc.Search(t.Context(), user, []string{sp.ID}, "zeppelin", 5)
	if err != nil || len(hits) != 0 {
		t.Fatalf("uncommitted chunks visible: %+v, %v", hits, err)
	}
	// The next change reconciles first.
	if _, err := svc.Add(t.Context(), user, sp.ID, []File{BytesFile("other.txt", []byte("Unrelated text."))}, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	vers, _ := e.index.Versions(t.Context(), sp.ID)
	for _, v := range vers {
		if v.Version == "v-new" || v.Version == "v-orphan" {
			t.Errorf("leftover %v still indexed", v)
		}
	}
	got, err := e.st.GetDocument(t.Context(), user, sp.ID, doc.ID)
	if err != nil || got.SHA256 != "" {
		t.Fatalf("document whose chunks were lost = %+v, %v; want its checksum cleared", got, err)
	}
	res, err := svc.Add(t.Context(), user, sp.ID, []File{BytesFile("vostok.md", []byte(budgetMD))}, AddOptions{})
	if err != nil || res[0].Status != StatusReplaced {
		t.Fatalf("adding the lost file again: %v, %v", statuses(res), err)
	}
	if got := e.found(t, sp.ID, "turbine supplier"); !slices.Equal(got, []string{"vostok.md"}) {
		t.Errorf("re-added document found in %v", got)
	}
}

func TestSearchIsScopedByUser(t *testing.T) {
	e := newEnv(t, Config{}, nil, nil)
	sp := e.space(t, "Private")
	e.add(t, sp.ID, BytesFile("diary.md", []byte("# Diary\n\nMy secret zeppelin plans.")))
	hits, err := e.svc.Search(t.Context(), "someone-else", []string{sp.ID}, "zeppelin", 5)
	if err != nil || len(hits) != 0 {
		t.Errorf("another user's search = %+v, %v", hits, err)
	}
	if _, err := e.svc.Space(t.Context(), "someone-else", sp.ID); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("another user's lookup: err = %v", err)
	}
	if _, err := e.svc.Add(t.Context(), "someone-else", sp.ID, []File{BytesFile("x.txt", []byte("x"))}, AddOptions{}); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("another user's add: err = %v", err)
	}
}

func TestSearchAcrossSpaces(t *testing.T) {
	e := newEnv(t, Config{}, nil, nil)
	a, b, empty := e.space(t, "A"), e.space(t, "B"), e.space(t, "Empty")
	e.add(t, a.ID, BytesFile("a.md", []byte("# A\n\nZeppelin flights over the Atlantic in 1929.")))
	e.add(t, b.ID, BytesFile("b.md", []byte("# B\n\nA zeppelin hangar in Friedrichshafen.")))
	hits, err := e.svc.Search(t.Context(), user, []string{a.ID, b.ID, empty.ID}, "zeppelin", 10)
	if err != nil {
		t.Fatal(err)
	}
	spacesSeen := map[string]bool{}
	for _, h := range hits {
		spacesSeen[h.SpaceName] = true
	}
	if len(hits) != 2 || !spacesSeen["A"] || !spacesSeen["B"] {
		t.Errorf("hits = %+v", hits)
	}
}

func TestDeleteSpaceDropsItsIndex(t *testing.T) {
	e := newEnv(t, Config{}, nil, nil)
	sp := e.space(t, "Gone")
	e.add(t, sp.ID, BytesFile("a.md", []byte("# A\n\nSome text.")))
	dir := filepath.Join(e.dir, "spaces", sp.ID)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("index directory: %v", err)
	}
	if err := e.svc.DeleteSpace(t.Context(), user, sp.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("index directory still there: %v", err)
	}
	if _, err := e.svc.Space(t.Context(), user, "Gone"); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("deleted space found: %v", err)
	}
}

func TestIndexBusyAndIdleClose(t *testing.T) {
	dir := t.TempDir()
	first, err := OpenBleve(dir, BleveOptions{IdleClose: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := OpenBleve(dir, BleveOptions{LockTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	put := &Batch{Put: []IndexedChunk{{DocID: "d", Version: "v", DocName: "d.txt", Chunk: Chunk{Seq: 1, Text: "hello"}}}}
	if err := first.Apply(t.Context(), "space", put); err != nil {
		t.Fatal(err)
	}
	if _, err := second.Search(t.Context(), Query{Spaces: []string{"space"}, Text: "hello", Limit: 1}); !errors.Is(err, ErrIndexBusy) {
		t.Fatalf("second process: err = %v, want ErrIndexBusy", err)
	}
	// Once idle, the first lets go and the second can open the index.
	deadline := time.Now().Add(5 * time.Second)
	for {
		hits, err := second.Search(t.Context(), Query{Spaces: []string{"space"}, Text: "hello", Limit: 1})
		if err == nil {
			if len(hits) != 1 {
				t.Errorf("hits = %+v", hits)
			}
			break
		}
		if !errors.Is(err, ErrIndexBusy) || time.Now().After(deadline) {
			t.Fatalf("after the idle close: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// conceptEmbedder embeds texts as bags of concepts: synonyms share a
// dimension, so "automobile" is near "car" although no word is shared.
type conceptEmbedder struct{ calls atomic.Int32 }

var concepts = [][]string{{"car", "automobile", "vehicle"}, {"boat", "ship", "vessel"}, {"money", "budget", "funds"}}

func (c *conceptEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	c.calls.Add(1)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(concepts)+1)
		v[len(concepts)] = 0.01
		lower := strings.ToLower(t)
		for d, words := range concepts {
			for _, w := range words {
				v[d] += float32(strings.Count(lower, w))
			}
		}
		out[i] = v
	}
	return out, nil
}

func TestHybridSearchFindsSynonyms(t *testing.T) {
	emb := &conceptEmbedder{}
	e := newEnv(t, Config{}, emb, nil)
	sp := e.space(t, "Garage")
	e.add(t, sp.ID,
		BytesFile("car.md", []byte("# Garage\n\nThe red car needs new tyres before winter.")),
		BytesFile("boat.md", []byte("# Harbour\n\nThe boat is moored at pier four.")),
	)
	if got := e.found(t, sp.ID, "automobile"); !slices.Equal(got[:1], []string{"car.md"}) {
		t.Errorf("hybrid search for a synonym found %v", got)
	}
	// Keyword matches still come first when they exist.
	if got := e.found(t, sp.ID, "pier"); len(got) == 0 || got[0] != "boat.md" {
		t.Errorf("keyword search found %v", got)
	}
	// Without embeddings the synonym finds nothing.
	plain := NewService(e.st, e.index, nil, Config{}, nil)
	hits, err := plain.Search(t.Context(), user, []string{sp.ID}, "automobile", 5)
	if err != nil || len(hits) != 0 {
		t.Errorf("keyword-only search for a synonym = %+v, %v", hits, err)
	}
	// Vectors survive reopening the index.
	if err := e.index.Close(); err != nil {
		t.Fatal(err)
	}
	idx2, err := OpenBleve(filepath.Join(e.dir, "spaces"), BleveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer idx2.Close()
	svc2 := NewService(e.st, idx2, emb, Config{}, nil)
	hits, err = svc2.Search(t.Context(), user, []string{sp.ID}, "vehicle", 5)
	if err != nil || len(hits) == 0 || hits[0].Document != "car.md" {
		t.Errorf("after reopening: %+v, %v", hits, err)
	}
}

func TestCleanName(t *testing.T) {
	tests := map[string]string{
		"a.md": "a.md", "dir/sub/b.txt": "dir/sub/b.txt", `win\path\c.pdf`: "win/path/c.pdf", "/abs/d.md": "abs/d.md",
		"../up.md": "", "a/../b.md": "", "": "", "./x.md": "", "a//b.md": "",
	}
	for in, want := range tests {
		got, err := CleanName(in)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("CleanName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestPassageURL(t *testing.T) {
	u := PassageURL("sp-1", "doc-2", 7)
	if u != "sova://spaces/sp-1/documents/doc-2#chunk-7" {
		t.Errorf("URL = %q", u)
	}
	for _, bad := range []string{"https://example.com", "sova://spaces/a/documents/b", "sova://spaces/a/docs/b#chunk-1", "sova://spaces/a/documents/b#chunk-0"} {
		if _, _, _, err := ParsePassageURL(bad); err == nil {
			t.Errorf("ParsePassageURL(%q) accepted", bad)
		}
	}
}
