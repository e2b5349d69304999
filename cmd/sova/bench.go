package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova/internal/extractbench"
	"github.com/sova-ai/sova/internal/fetch"
)

// extractBenchEnv names the directory of the article-extraction benchmark
// when --dir is not given.
const extractBenchEnv = "SOVA_EXTRACT_BENCH_DIR"

func newBench() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure Sova's parts on benchmark data",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(newBenchExtract())
	return cmd
}

func newBenchExtract() *cobra.Command {
	var (
		dir, format   string
		workers, show int
		asJSON        bool
	)
	cmd := &cobra.Command{
		Use:   "extract",
		Short: "Score main-content extraction on the article-extraction benchmark",
		Long: `Run the page reader's content extraction on every page of the article
extraction benchmark (html/<id>.html.gz with ground-truth.json, from
scrapinghub/article-extraction-benchmark) and score it the way the
benchmark publishes its figures: 4-word shingles of \w+ words, precision
and recall per page averaged over pages, F1 from the two averages.

--format text scores the extracted Markdown reduced to plain text (link
targets and syntax removed), which compares with the published scores;
markdown scores the Markdown as the model receives it, link URLs included.

--dir may also name the root of a module that ships an evaluation set: the
go-trafilatura module (its trafilatura evaluation set: about 980 pages,
each with phrases the main text must and must not contain, scored as that
evaluation does) or codeberg.org/readeck/go-readability (the Readability.js
test pages, scored with shingles against their expected text).`,
		Example: `  sova bench extract --dir ../shared/benchmarks/article-extraction
  sova bench extract --format both --worst 10
  SOVA_EXTRACT_BENCH_DIR=bench/article-extraction sova bench extract --json
  sova bench extract --dir "$(go list -m -f '{{.Dir}}' github.com/markusmobius/go-trafilatura)"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				dir = os.Getenv(extractBenchEnv)
			}
			if dir == "" {
				return errors.New("no benchmark directory: pass --dir or set " + extractBenchEnv)
			}
			var formats []string
			switch format {
			case "text", "markdown":
				formats = []string{format}
			case "both":
				formats = []string{"text", "markdown"}
			default:
				return fmt.Errorf("--format %q: use text, markdown or both", format)
			}
			pages, err := extractbench.Load(dir)
			if err != nil {
				return err
			}
			var results []benchResult
			for _, f := range formats {
				rep, err := extractbench.Run(cmd.Context(), pages, extractorFor(f), workers)
				if err != nil {
					return err
				}
				results = append(results, benchResult{Format: f, Report: rep})
			}
			if asJSON {
				return writeBenchJSON(cmd.OutOrStdout(), results, show)
			}
			return writeBenchTable(cmd.OutOrStdout(), len(pages), results, show)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "benchmark directory (default $"+extractBenchEnv+")")
	cmd.Flags().StringVar(&format, "format", "text", "what is scored: text, markdown or both")
	cmd.Flags().IntVar(&workers, "workers", runtime.GOMAXPROCS(0), "pages extracted in parallel")
	cmd.Flags().IntVar(&show, "worst", 0, "also list this many pages with the lowest F1")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the figures as JSON")
	return cmd
}

type benchResult struct {
	Format string
	Report *extractbench.Report
}

func extractorFor(format string) extractbench.Extractor {
	return func(html []byte, pageURL string) (string, error) {
		_, md, err := fetch.Extract(html, pageURL)
		if err != nil || format == "markdown" {
			return md, err
		}
		return fetch.PlainText(md), nil
	}
}

func writeBenchTable(w io.Writer, pages int, results []benchResult, worst int) error {
	scoring := "shingles"
	if len(results) > 0 && results[0].Report.Snippets != nil {
		scoring = "snippets the main text must and must not contain"
	}
	fmt.Fprintf(w, "article extraction: %d pages, scored by %s\n\n", pages, scoring)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "format\tprecision\trecall\tF1\taccuracy\tfailures\ttime")
	for _, r := range results {
		rep := r.Report
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.4f\t%.3f\t%d\t%s\n", r.Format, rep.Precision, rep.Recall, rep.F1,
			rep.Accuracy, rep.Failures, rep.Elapsed.Round(10*time.Millisecond))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		if worst <= 0 {
			break
		}
		fmt.Fprintf(w, "\nlowest F1 (%s):\n", r.Format)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "F1\tprecision\trecall\tpage")
		for _, d := range r.Report.Worst(worst) {
			note := d.URL
			if d.Err != nil {
				note += " (" + strings.SplitN(d.Err.Error(), "\n", 2)[0] + ")"
			}
			fmt.Fprintf(tw, "%.3f\t%.3f\t%.3f\t%s\n", d.F1(), d.Precision, d.Recall, note)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func writeBenchJSON(w io.Writer, results []benchResult, worst int) error {
	type page struct {
		ID        string  `json:"id"`
		URL       string  `json:"url"`
		F1        float64 `json:"f1"`
		Precision float64 `json:"precision"`
		Recall    float64 `json:"recall"`
		Error     string  `json:"error,omitempty"`
	}
	type result struct {
		Format    string  `json:"format"`
		Pages     int     `json:"pages"`
		Precision float64 `json:"precision"`
		Recall    float64 `json:"recall"`
		F1        float64 `json:"f1"`
		Accuracy  float64 `json:"accuracy"`
		Failures  int     `json:"failures"`
		Seconds   float64 `json:"seconds"`
		Worst     []page  `json:"worst,omitempty"`
	}
	out := make([]result, 0, len(results))
	for _, r := range results {
		rep := r.Report
		res := result{
			Format: r.Format, Pages: len(rep.Docs), Precision: rep.Precision, Recall: rep.Recall,
			F1: rep.F1, Accuracy: rep.Accuracy, Failures: rep.Failures, Seconds: rep.Elapsed.Seconds(),
		}
		for _, d := range rep.Worst(worst) {
			p := page{ID: d.ID, URL: d.URL, F1: d.F1(), Precision: d.Precision, Recall: d.Recall}
			if d.Err != nil {
				p.Error = d.Err.Error()
			}
			res.Worst = append(res.Worst, p)
		}
		out = append(out, res)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
