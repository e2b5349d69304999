package spaces

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/store"
)

// shortDocs makes n distinct short Markdown documents of 1–2 KB, the size
// of a typical note or page: a title, a heading or two and paragraphs of
// words drawn from a vocabulary of a few thousand, the same for the same n.
func shortDocs(n int) []File {
	rng := rand.New(rand.NewPCG(28, uint64(n)))
	syllables := []string{"ka", "lo", "mi", "ren", "to", "va", "sel", "dor", "an", "pe", "qui", "stra", "mon", "bel", "ti", "gor", "nu", "fa", "zer", "il"}
	common := strings.Fields("the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there would their we him been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three")
	vocab := make([]string, 0, 3000)
	vocab = append(vocab, common...)
	for len(vocab) < cap(vocab) {
		var w strings.Builder
		for range 2 + rng.IntN(3) {
			w.WriteString(syllables[rng.IntN(len(syllables))])
		}
		vocab = append(vocab, w.String())
	}
	word := func() string {
		if rng.IntN(2) == 0 {
			return common[rng.IntN(len(common))]
		}
		return vocab[rng.IntN(len(vocab))]
	}
	sentence := func(b *strings.Builder) {
		n := 6 + rng.IntN(14)
		for i := range n {
			w := word()
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			if i < n-1 {
				b.WriteByte(' ')
			}
		}
		b.WriteString(". ")
	}
	files := make([]File, n)
	for i := range files {
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d: %s %s\n\n", i, word(), word())
		size := 1024 + rng.IntN(1024)
		for b.Len() < size {
			if rng.IntN(4) == 0 {
				fmt.Fprintf(&b, "\n\n## %s %s\n\n", word(), word())
			}
			for range 2 + rng.IntN(3) {
				sentence(&b)
			}
			b.WriteString("\n\n")
		}
		files[i] = BytesFile(fmt.Sprintf("notes/%04d.md", i), []byte(b.String()))
	}
	return files
}

// BenchmarkShortIngest measures adding 1,000 short documents (1–2 KB) to
// a new space in one call, BM25 only and with embeddings from a local
// server speaking the OpenAI /v1/embeddings wire format. It reports
// documents per second, CPU-seconds per 1,000 documents (the Add and the
// index's closing, which waits for its background merging; with
// embeddings this includes the in-process server's work) and embedding
// requests per 1,000 documents.
func BenchmarkShortIngest(b *testing.B) {
	const n = 1000
	files := shortDocs(n)
	for _, mode := range []string{"bm25", "embed"} {
		b.Run(mode, func(b *testing.B) {
			var srv *llmtest.Server
			var embed Embedder
			if mode == "embed" {
				srv = llmtest.New(b)
				client, err := llm.New(llm.Config{BaseURL: srv.URL(), Model: "embed-small"})
				if err != nil {
					b.Fatal(err)
				}
				embed = EmbedFunc(client.Embed)
			}
			var cpu float64
			var passages int
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				dir := b.TempDir()
				st, err := store.OpenSQLite(b.Context(), filepath.Join(dir, "sova.db"))
				if err != nil {
					b.Fatal(err)
				}
				idx, err := OpenBleve(filepath.Join(dir, "spaces"), BleveOptions{})
				if err != nil {
					b.Fatal(err)
				}
				svc := NewService(st, idx, embed, Config{}, nil)
				sp, err := svc.CreateSpace(b.Context(), user, "notes", "")
				if err != nil {
					b.Fatal(err)
				}
				cpu0 := cpuSeconds()
				b.StartTimer()
				res, err := svc.Add(b.Context(), user, sp.ID, files, AddOptions{})
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range res {
					if r.Status != StatusAdded {
						b.Fatalf("%s: %s %s", r.Name, r.Status, r.Error)
					}
				}
				got, err := svc.Space(b.Context(), user, sp.ID)
				if err != nil {
					b.Fatal(err)
				}
				passages = got.ChunkCount
				_ = svc.Close()
				cpu += cpuSeconds() - cpu0 // the Space lookup in it is small
				_ = st.Close()
				b.StartTimer()
			}
			secs := b.Elapsed().Seconds() / float64(b.N)
			if cpuSeconds() >= 0 {
				b.ReportMetric(cpu/float64(b.N)*1000/n, "cpu-s/1k-docs")
			}
			b.ReportMetric(n/secs, "docs/s")
			b.ReportMetric(float64(passages), "passages")
			if srv != nil {
				b.ReportMetric(float64(len(srv.EmbeddingRequests()))/float64(b.N)*1000/n, "embed-reqs/1k-docs")
			}
		})
	}
}
