package fetch

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/isolate"
	"github.com/sova-ai/sova/internal/pdfpages"
	"github.com/sova-ai/sova/internal/sovatest/hostile"
)

// fetchWithin fetches url and fails the test when Fetch has not returned
// within d: the parsers these tests feed used to spin forever.
func fetchWithin(t *testing.T, ctx context.Context, f *Fetcher, url string, d time.Duration) (*Page, time.Duration, error) {
	t.Helper()
	type result struct {
		page *Page
		err  error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		p, err := f.Fetch(ctx, url)
		done <- result{p, err}
	}()
	select {
	case r := <-done:
		return r.page, time.Since(start), r.err
	case <-time.After(d):
		t.Fatalf("Fetch did not return within %s", d)
		return nil, 0, nil
	}
}

// Hostile PDFs from the web end with a clear error within seconds, through
// the real fetcher: the page tree is checked before the library walks it,
// and what the checks miss is stopped by the worker's limits.
func TestFetchHostilePDFs(t *testing.T) {
	tests := []struct {
		name  string
		body  []byte
		parse isolate.Limits
		is    error
		msg   string
	}{
		{"page tree that is its own kid", hostile.SelfReferentialPDF(), isolate.Limits{},
			pdfpages.ErrPageTree, "the PDF's page tree is malformed: it never ends"},
		{"two billion pages claimed", hostile.PDFClaimingPages(2_000_000_000), isolate.Limits{},
			pdfpages.ErrTooManyPages, "claims 2000000000 pages"},
		{"object stream that extends itself", hostile.PDFObjectStreamLoop(), isolate.Limits{Timeout: 2 * time.Second * slow},
			isolate.ErrTimeout, "parsing the PDF took longer than " + (2 * time.Second * slow).String()},
		{"cross-reference table of two billion entries", hostile.PDFWithHugeXref(), isolate.Limits{Memory: 128 << 20},
			isolate.ErrMemory, "the PDF needs more than 128 MiB of memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, staticPage("application/pdf", tt.body))
			f := newTestFetcher(t, Config{Timeout: 30 * time.Second * slow, Parse: tt.parse})
			_, took, err := fetchWithin(t, t.Context(), f, srv.URL+"/paper.pdf", 20*time.Second*slow)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %v saying %q", err, tt.is, tt.msg)
			}
			t.Logf("%s: %v", took.Round(time.Millisecond), err)
		})
	}
}

// A PDF that keeps the parser busy ends with the fetch's own timeout and
// with the caller's cancel, whichever comes first.
func TestFetchPDFStopsOnTimeoutAndCancel(t *testing.T) {
	srv := serve(t, staticPage("application/pdf", hostile.PDFObjectStreamLoop()))

	t.Run("fetch timeout", func(t *testing.T) {
		f := newTestFetcher(t, Config{Timeout: 2 * time.Second})
		_, took, err := fetchWithin(t, t.Context(), f, srv.URL, 15*time.Second)
		if err == nil || !strings.Contains(err.Error(), "timed out after 2s") {
			t.Fatalf("err = %v", err)
		}
		if took > 5*time.Second {
			t.Errorf("returned after %s", took)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		f := newTestFetcher(t, Config{Timeout: time.Minute})
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(700*time.Millisecond, cancel)
		_, took, err := fetchWithin(t, ctx, f, srv.URL, 15*time.Second)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if took > 3*time.Second {
			t.Errorf("returned %s after the start; cancelled at 700ms", took)
		}
	})
	t.Run("an ordinary PDF right after", func(t *testing.T) {
		srv := serve(t, staticPage("application/pdf", makePDF(t, "After", pdfPara1)))
		page, _, err := fetchWithin(t, t.Context(), newTestFetcher(t, Config{}), srv.URL, 15*time.Second*slow)
		if err != nil || !strings.Contains(page.Markdown, pdfPara1) {
			t.Fatalf("page %+v, err %v", page, err)
		}
	})
}

// HTML is extracted in this process under a deadline: at the deadline the
// fetch gives up, and the abandoned extraction gives its slot back when it
// ends.
func TestHTMLExtractionDeadline(t *testing.T) {
	page := "<html><body><article>" + strings.Repeat("<p>Tidal power turns the rise and fall of the sea into electricity.</p>", 3000) + "</article></body></html>"
	_, err := extractHTMLWithin(t.Context(), time.Nanosecond, page, nil)
	if !errors.Is(err, isolate.ErrTimeout) || err.Error() != "parsing the HTML page took longer than 1ns" {
		t.Fatalf("err = %v", err)
	}
	deadline := time.Now().Add(10 * time.Second * slow)
	for len(htmlSlots) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned extraction kept its slot")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ex, err := extractHTMLWithin(t.Context(), 10*time.Second, page, nil)
	if err != nil || !strings.Contains(ex.markdown, "Tidal power") {
		t.Fatalf("err %v", err)
	}
}

func TestHTMLSourceIsBounded(t *testing.T) {
	page := "<html><body><p>" + strings.Repeat("word ", maxHTMLBytes/5+1000) + "</p></body></html>"
	ex, err := extractHTML(page, nil)
	if err != nil || !ex.cut {
		t.Fatalf("cut %v, err %v", ex.cut, err)
	}
}

// BenchmarkReadPDF compares reading a small PDF in this process with
// reading it in a worker process, as Fetch does: the difference is what
// isolation costs per PDF (mostly the worker's start: this test binary
// links the same extractors, and their initialisation, as sova).
func BenchmarkReadPDF(b *testing.B) {
	doc := makePDF(&testing.T{}, "How Tidal Power Works", pdfPara1, pdfPara2, "\f", pdfPara3)
	b.Run("in-process", func(b *testing.B) {
		for b.Loop() {
			if _, err := extractPDF(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("worker", func(b *testing.B) {
		f := New(Config{})
		var cpu time.Duration
		for b.Loop() {
			_, u, err := isolate.RunUsage(context.Background(), f.cfg.Parse, pdfKind, doc)
			if err != nil {
				b.Fatal(err)
			}
			cpu += u.CPU
		}
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "worker-cpu-ms/op")
	})
}

const htmlBenchKind = "fetch.test.html"

func init() {
	isolate.Register(htmlBenchKind, "the HTML page", func(page []byte) ([]byte, error) {
		ex, err := extractHTML(string(page), nil)
		return []byte(ex.markdown), err
	})
}

// BenchmarkExtractHTML measures one article page (testdata, 5.5 KB):
// extracted directly, under extractHTMLWithin's deadline as Fetch does, and
// in a worker process, the isolation HTML does not get because of this
// figure.
func BenchmarkExtractHTML(b *testing.B) {
	raw, err := os.ReadFile("testdata/boilerplate_article.html")
	if err != nil {
		b.Fatal(err)
	}
	page := string(raw)
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := extractHTML(page, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("deadline", func(b *testing.B) {
		for b.Loop() {
			if _, err := extractHTMLWithin(context.Background(), 20*time.Second, page, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("worker", func(b *testing.B) {
		for b.Loop() {
			if _, err := isolate.Run(context.Background(), isolate.Limits{}, htmlBenchKind, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
