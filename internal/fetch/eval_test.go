package fetch

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/sova-ai/sova/internal/extractbench"
)

// moduleDir returns where the Go module cache holds module (the version
// go.mod requires), or "" when it cannot be found.
func moduleDir(t testing.TB, module string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// evalSets are the evaluation sets found on this machine: the shared
// article-extraction benchmark (SOVA_EXTRACT_BENCH_DIR) and the sets the
// extractor modules ship.
func evalSets(t testing.TB) map[string][]extractbench.Page {
	sets := map[string][]extractbench.Page{}
	if dir := os.Getenv("SOVA_EXTRACT_BENCH_DIR"); dir != "" {
		if p, err := extractbench.Load(dir); err == nil {
			sets["article-extraction"] = p
		} else {
			t.Log(err)
		}
	}
	if dir := moduleDir(t, extractbench.TrafilaturaModule); dir != "" {
		if p, err := extractbench.LoadComparison(dir); err == nil {
			sets["trafilatura-eval"] = p
		} else {
			t.Log(err)
		}
	}
	if dir := moduleDir(t, extractbench.ReadabilityModule); dir != "" {
		if p, err := extractbench.LoadReadabilityPages(filepath.Join(dir, "test-pages")); err == nil {
			sets["readability-pages"] = p
		} else {
			t.Log(err)
		}
	}
	return sets
}

// TestExtractionEval compares the chosen text with each extractor alone
// and with the better of the two per page (an upper bound for choosing)
// on every evaluation set found. It is a development aid:
// SOVA_EXTRACT_EVAL=1 runs it, SOVA_EXTRACT_EVAL_OUT=dir also writes the
// pages where the choice lost, with both texts.
func TestExtractionEval(t *testing.T) {
	if os.Getenv("SOVA_EXTRACT_EVAL") == "" {
		t.Skip("SOVA_EXTRACT_EVAL is not set")
	}
	outDir := os.Getenv("SOVA_EXTRACT_EVAL_OUT")
	for name, pages := range evalSets(t) {
		if only := os.Getenv("SOVA_EXTRACT_EVAL_SET"); only != "" && only != name {
			continue
		}
		var mu sync.Mutex
		docs := map[string][]extractbench.Doc{}
		g := errgroup.Group{}
		g.SetLimit(2)
		for _, p := range pages {
			g.Go(func() error {
				raw, err := p.HTML()
				if err != nil {
					return err
				}
				u, _ := url.Parse(p.URL)
				var sova, traf, read string
				c, err := extractCandidates(decode(raw, ""), u)
				if err == nil {
					traf, read = PlainText(c.traf), PlainText(c.read)
					if ex, err := c.choose(); err == nil {
						sova = PlainText(ex.markdown)
					}
				}
				ds, dt, dr := extractbench.Score(p, sova), extractbench.Score(p, traf), extractbench.Score(p, read)
				best := dt
				if dr.F1() > dt.F1() || (dr.F1() == dt.F1() && dr.Recall > dt.Recall) {
					best = dr
				}
				mu.Lock()
				docs["sova"] = append(docs["sova"], ds)
				docs["trafilatura"] = append(docs["trafilatura"], dt)
				docs["readability"] = append(docs["readability"], dr)
				docs["best of two"] = append(docs["best of two"], best)
				mu.Unlock()
				if outDir != "" && ds.F1() < best.F1() {
					note := fmt.Sprintf("%s\n%s\nsova %.2f (%+v) traf %.2f (%+v) read %.2f (%+v)\nwith %q\nwithout %q\n",
						p.ID, p.URL, ds.F1(), ds.Snippets, dt.F1(), dt.Snippets, dr.F1(), dr.Snippets, p.With, p.Without)
					body := note + "\n===== SOVA\n" + sova + "\n\n===== TRAFILATURA\n" + traf + "\n\n===== READABILITY\n" + read + "\n"
					_ = os.MkdirAll(filepath.Join(outDir, name), 0o755)
					_ = os.WriteFile(filepath.Join(outDir, name, strings.ReplaceAll(p.ID, "/", "_")+".txt"), []byte(body), 0o644)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"sova", "trafilatura", "readability", "best of two"} {
			r := extractbench.Summarize(docs[v], 0, 0)
			t.Logf("%-18s %-12s P %.4f R %.4f F1 %.4f (%d pages)", name, v, r.Precision, r.Recall, r.F1, len(docs[v]))
		}
	}
}
