package spaces

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"codeberg.org/go-pdf/fpdf"
)

// TestUploadPeakMemory measures the heap an upload of each format takes
// in this process, from the file on disk (where the server spools an
// upload) to its chunks written (BM25 only, no embedding model), and
// fails when it passes 3× the file or 300 MB. PDF, DOCX and HTML are
// parsed in a worker process, whose peak resident size is printed beside
// (getrusage of the children: the largest so far). It runs with
// SOVA_UPLOAD_MEMORY_MB set to the file size in MiB; the figures are in
// docs/benchmarks.md:
//
//	SOVA_UPLOAD_MEMORY_MB=24 go test -count=1 -run TestUploadPeakMemory -v ./internal/spaces
func TestUploadPeakMemory(t *testing.T) {
	mb := os.Getenv("SOVA_UPLOAD_MEMORY_MB")
	if mb == "" {
		t.Skip("set SOVA_UPLOAD_MEMORY_MB (e.g. 49) to measure")
	}
	var size int
	if _, err := fmt.Sscan(mb, &size); err != nil || size < 1 {
		t.Fatalf("SOVA_UPLOAD_MEMORY_MB=%q", mb)
	}
	size <<= 20
	para := "Пример абзаца о бюджете города, в котором есть цифры 1930 и 2024, и ещё немного текста для длины. "
	var table strings.Builder
	table.WriteString("| format | file | chunks | peak heap above the start | × the file | worker peak RSS | time |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, tc := range []struct {
		name, ext string
		make      func(t *testing.T, size int) []byte
	}{
		{"markdown", ".md", func(_ *testing.T, size int) []byte { return textFile(size, "## Раздел %d\n\n", para) }},
		{"text", ".txt", func(_ *testing.T, size int) []byte { return textFile(size, "Раздел %d\n\n", para) }},
		{"html", ".html", func(_ *testing.T, size int) []byte {
			var b bytes.Buffer
			b.WriteString("<!doctype html><html><head><title>Отчёт</title></head><body><article>")
			for i := 0; b.Len() < size; i++ {
				if i%20 == 0 {
					fmt.Fprintf(&b, "<h2>Раздел %d</h2>\n", i/20)
				}
				fmt.Fprintf(&b, "<p>%s</p>\n", para)
			}
			b.WriteString("</article></body></html>")
			return b.Bytes()
		}},
		// The PDF reader takes over SOVA_PARSE_TIMEOUT (20 s) for an
		// uncompressed PDF of 10 MiB on a shared 2-core machine: 4 MiB.
		{"pdf", ".pdf", func(t *testing.T, size int) []byte { return largePDF(t, min(size, 4<<20)) }},
		{"docx", ".docx", largeDOCX},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.make(t, size)
			path := filepath.Join(t.TempDir(), "big"+tc.ext)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			fileSize := len(data)
			data = nil //nolint:ineffassign,staticcheck // not part of the measure
			e := newEnv(t, Config{}, nil, nil)
			sp := e.space(t, "big")
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			var peak atomic.Uint64
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				var m runtime.MemStats
				for {
					runtime.ReadMemStats(&m)
					if m.HeapInuse > peak.Load() {
						peak.Store(m.HeapInuse)
					}
					select {
					case <-stop:
						return
					case <-time.After(10 * time.Millisecond):
					}
				}
			}()
			start := time.Now()
			res := e.add(t, sp.ID, File{Name: "big" + tc.ext, Open: func() (io.ReadCloser, error) { return os.Open(path) }})
			took := time.Since(start)
			close(stop)
			<-done
			if res[0].Status == StatusFailed {
				t.Fatalf("%s: %s", tc.name, res[0].Error)
			}
			extra := float64(peak.Load()-base.HeapInuse) / (1 << 20)
			fileMiB := float64(fileSize) / (1 << 20)
			var ru syscall.Rusage
			worker := "—"
			if _, ok := isolatedFormats[Format(tc.name)]; ok && syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
				worker = fmt.Sprintf("%d MiB", ru.Maxrss>>10)
			}
			fmt.Fprintf(&table, "| %s | %.0f MiB | %d | %.0f MiB | %.1f× | %s | %s |\n",
				tc.name, fileMiB, res[0].Document.ChunkCount, extra, extra/fileMiB, worker, took.Round(100*time.Millisecond))
			if res[0].Document.Notice != "" {
				t.Logf("%s: notice: %s", tc.name, res[0].Document.Notice)
			}
			if extra*(1<<20) > 300e6 {
				t.Errorf("%s: peak heap %.0f MiB for a %.0f MiB file: over 300 MB", tc.name, extra, fileMiB)
			}
			// An HTML file goes to its worker from disk, and the reader
			// keeps at most 5 MiB of its source: what this process holds
			// is far under the file.
			if tc.name == "html" && fileMiB >= 32 && extra > fileMiB/2 {
				t.Errorf("html: peak heap %.0f MiB for a %.0f MiB file: the file was held here", extra, fileMiB)
			}
			// A DOCX's text comes back from its worker in one buffer of
			// the size the worker announces, its paragraphs in one block
			// per section: like the formats read here, under 3× the file.
			if tc.name == "docx" && fileMiB >= 16 && extra > 3*fileMiB {
				t.Errorf("docx: peak heap %.0f MiB for a %.0f MiB file: over 3× the file", extra, fileMiB)
			}
			// PDF and HTML hold only what their reader keeps of the file
			// (a PDF's text can be several times the file), bounded by
			// the 300 MB above.
			if _, isolated := isolatedFormats[Format(tc.name)]; !isolated && extra > 3*fileMiB {
				t.Errorf("%s: peak heap %.0f MiB for a %.0f MiB file: over 3× the file", tc.name, extra, fileMiB)
			}
		})
	}
	t.Log("\n" + table.String())
}

func textFile(size int, head, para string) []byte {
	var b bytes.Buffer
	b.Grow(size + 4096)
	for i := 0; b.Len() < size; i++ {
		if i%20 == 0 {
			fmt.Fprintf(&b, head, i/20)
		}
		b.WriteString(para)
		b.WriteString("\n\n")
	}
	return b.Bytes()
}

// largePDF writes an uncompressed PDF of about size bytes: pages of
// paragraphs under headings (Latin text: the core fonts have no Cyrillic).
func largePDF(t *testing.T, size int) []byte {
	build := func(pages int) []byte {
		pdf := fpdf.New("P", "mm", "A4", "")
		pdf.SetCompression(false)
		para := "Revenue of the city budget grew by twelve percent in 2024, driven by exports of turbines to the north; the board approved it. "
		for page := range pages {
			pdf.AddPage()
			pdf.SetFont("Helvetica", "B", 14)
			pdf.Cell(0, 8, fmt.Sprintf("Section %d", page))
			pdf.Ln(10)
			pdf.SetFont("Helvetica", "", 8)
			for range 12 {
				pdf.MultiCell(0, 3.5, para+para+para, "", "L", false)
				pdf.Ln(2)
			}
		}
		var buf bytes.Buffer
		if err := pdf.Output(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	perPage := len(build(10)) / 10
	return build(max(1, size/perPage))
}

// largeDOCX writes a Word document of about size bytes compressed.
func largeDOCX(t *testing.T, size int) []byte {
	var body strings.Builder
	para := "Пример абзаца о бюджете города, в котором есть цифры %d и 2024, и ещё немного текста для длины. "
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "word/document.xml", Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`)
	written := 0
	for i := 0; written < size; i++ {
		body.Reset()
		if i%20 == 0 {
			body.WriteString(`<w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t>` + fmt.Sprintf("Раздел %d", i/20) + `</w:t></w:r></w:p>`)
		}
		body.WriteString(`<w:p><w:r><w:t xml:space="preserve">` + fmt.Sprintf(para, i) + `</w:t></w:r></w:p>`)
		n, _ := io.WriteString(w, body.String())
		written += n
	}
	fmt.Fprint(w, `</w:body></w:document>`)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
