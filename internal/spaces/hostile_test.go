package spaces

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/isolate"
	"github.com/sova-ai/sova/internal/pdfpages"
	"github.com/sova-ai/sova/internal/sovatest/hostile"
)

// addWithin adds files and fails the test when Add has not returned
// within d: the parsers these tests feed used to spin forever while
// holding the space's lock.
func addWithin(t *testing.T, ctx context.Context, svc *Service, spaceID string, d time.Duration, files ...File) ([]FileResult, time.Duration, error) {
	t.Helper()
	type result struct {
		res []FileResult
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		res, err := svc.Add(ctx, user, spaceID, files, AddOptions{})
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		return r.res, time.Since(start), r.err
	case <-time.After(d):
		t.Fatalf("Add did not return within %s", d)
		return nil, 0, nil
	}
}

// Hostile files uploaded to a space fail with a clear error within
// seconds, and the space takes the next upload at once.
func TestAddHostileFiles(t *testing.T) {
	e := newEnv(t, Config{Parse: isolate.Limits{Timeout: 3 * time.Second * slow, Memory: 128 << 20}}, nil, nil)
	sp := e.space(t, "Hostile")
	tests := []struct {
		name string
		data []byte
		is   error
		msg  string
	}{
		{"loop.pdf", hostile.SelfReferentialPDF(), pdfpages.ErrPageTree, "page tree is malformed: it never ends"},
		{"pages.pdf", hostile.PDFClaimingPages(2_000_000_000), pdfpages.ErrTooManyPages, "claims 2000000000 pages"},
		{"objstm.pdf", hostile.PDFObjectStreamLoop(), isolate.ErrTimeout, "parsing the PDF took longer than " + (3 * time.Second * slow).String()},
		{"xref.pdf", hostile.PDFWithHugeXref(), isolate.ErrMemory, "the PDF needs more than 128 MiB of memory"},
		{"bomb.docx", hostile.DOCXWithHugeRun(400<<20, true), ErrZipBomb, "unpacks to 400 MiB"},
		{"liar.docx", hostile.DOCXWithHugeRun(400<<20, false), ErrZipBomb, "more than the 4096 bytes its header declares"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, took, err := addWithin(t, t.Context(), e.svc, sp.ID, 20*time.Second*slow, BytesFile(tt.name, tt.data))
			if err != nil {
				t.Fatalf("Add: %v", err)
			}
			if res[0].Status != StatusFailed || !errors.Is(res[0].Err(), tt.is) || !strings.Contains(res[0].Error, tt.msg) {
				t.Fatalf("%s: %s %q, want %v saying %q", tt.name, res[0].Status, res[0].Error, tt.is, tt.msg)
			}
			t.Logf("%d bytes, %s: %s", len(tt.data), took.Round(time.Millisecond), res[0].Error)
			// The space is free at once.
			name := strings.Repeat("n", i+1) + ".md"
			res, _, err = addWithin(t, t.Context(), e.svc, sp.ID, 10*time.Second, BytesFile(name, []byte(budgetMD)))
			if err != nil || res[0].Status != StatusAdded {
				t.Fatalf("the next upload: %v %+v", err, res)
			}
		})
	}
}

// A parse that runs long holds up no other change to the space, and its
// upload ends when its context does.
func TestStuckParseNeitherLocksTheSpaceNorIgnoresCancel(t *testing.T) {
	e := newEnv(t, Config{}, nil, nil)
	sp := e.space(t, "Busy")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stuck := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := e.svc.Add(ctx, user, sp.ID, []File{BytesFile("objstm.pdf", hostile.PDFObjectStreamLoop())}, AddOptions{})
		stuck <- err
	}()
	time.Sleep(300 * time.Millisecond) // the worker is parsing
	res, took, err := addWithin(t, t.Context(), e.svc, sp.ID, 10*time.Second, BytesFile("budget.md", []byte(budgetMD)))
	if err != nil || res[0].Status != StatusAdded {
		t.Fatalf("an upload beside the stuck one: %v %+v", err, res)
	}
	t.Logf("an upload beside a stuck parse took %s", took.Round(time.Millisecond))
	if got := e.found(t, sp.ID, "budget"); len(got) == 0 {
		t.Error("the document added beside the stuck parse is not found")
	}

	cancel()
	select {
	case err := <-stuck:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled upload: err = %v", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the cancelled upload returned after %s", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled upload did not return")
	}
	res, _, err = addWithin(t, t.Context(), e.svc, sp.ID, 10*time.Second, BytesFile("after.md", []byte(budgetRU)))
	if err != nil || res[0].Status != StatusAdded {
		t.Fatalf("an upload after the cancel: %v %+v", err, res)
	}
}

// Three DOCX bombs uploaded at once (three hundred KiB each, unpacking to
// 400 MiB of one text run) are refused before they are unpacked: the
// server's memory hardly moves, and no worker comes near its cap.
func TestDOCXBombsAtOnceStayWithinMemory(t *testing.T) {
	e := newEnv(t, Config{}, nil, nil)
	sp := e.space(t, "Bombs")
	bomb := hostile.DOCXWithHugeRun(400<<20, true)
	liar := hostile.DOCXWithHugeRun(400<<20, false)

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second*slow)
	defer cancel()
	// All three are read at once: the cap on one person's uploads at
	// once (uploadcap.go) would refuse the third before it is read.
	e.svc.cfg.UploadsPerPerson = 3
	var wg sync.WaitGroup
	errs := make([]string, 3)
	for i, data := range [][]byte{bomb, liar, bomb} {
		wg.Go(func() {
			res, err := e.svc.Add(ctx, user, sp.ID, []File{BytesFile("bomb.docx", data)}, AddOptions{})
			switch {
			case err != nil:
				errs[i] = err.Error()
			case res[0].Status != StatusFailed || !errors.Is(res[0].Err(), ErrZipBomb):
				errs[i] = res[0].Status + " " + res[0].Error
			}
		})
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	for i, msg := range errs {
		if msg != "" {
			t.Errorf("bomb %d: %s", i, msg)
		}
	}
	allocated := int64(after.TotalAlloc - before.TotalAlloc)
	self, children := peakRSS()
	t.Logf("%d KiB each; allocated here %d MiB; peak RSS here %d MiB, of a worker %d MiB", len(bomb)>>10, allocated>>20, self>>20, children>>20)
	if allocated > 64<<20 {
		t.Errorf("adding the bombs allocated %d MiB in the server", allocated>>20)
	}
	if self > 400<<20 || children > 400<<20 {
		t.Errorf("peak resident memory: %d MiB here, %d MiB in a worker", self>>20, children>>20)
	}
}

// The DOCX reader's limits, in this process: what it allocates on a bomb
// is bounded whatever the bomb claims.
func TestDOCXLimits(t *testing.T) {
	randomText := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abcdefghijklmnopqrstuvwxyz "[rand.IntN(27)]
		}
		return string(b)
	}
	stored := func(body string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "word/document.xml", Method: zip.Store})
		_, _ = w.Write([]byte(`<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` + body + `</w:body></w:document>`))
		_ = zw.Close()
		return buf.Bytes()
	}
	manyEntries := func(n int) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for i := range n {
			_, _ = zw.CreateHeader(&zip.FileHeader{Name: "x/" + strings.Repeat("a", i%7) + string(rune('a'+i%26)) + "/" + time.Duration(i).String(), Method: zip.Store})
		}
		_ = zw.Close()
		return buf.Bytes()
	}
	tests := []struct {
		name     string
		data     []byte
		is       error
		msg      string
		maxAlloc int64
	}{
		{"honest bomb, over the part limit", hostile.DOCXWithHugeRun(400<<20, true), ErrZipBomb, "unpacks to 400 MiB, more than 256 MiB", 1 << 20},
		{"honest bomb, under the part limit", hostile.DOCXWithHugeRun(200<<20, true), ErrZipBomb, "unpack to 200 MiB", 1 << 20},
		{"lying header", hostile.DOCXWithHugeRun(400<<20, false), ErrZipBomb, "more than the 4096 bytes its header declares", 4 << 20},
		{"a run of 6 MiB", stored(`<w:p><w:r><w:t>` + randomText(6<<20) + `</w:t></w:r></w:p>`), ErrTooMuchText, "longer than 4 MiB", 24 << 20},
		{"a paragraph of 10 MiB", stored(`<w:p>` + strings.Repeat(`<w:r><w:t>`+randomText(1<<20)+`</w:t></w:r>`, 10) + `</w:p>`), ErrTooMuchText, "a paragraph longer than 8 MiB", 64 << 20},
		{"deep nesting", stored(strings.Repeat("<w:sdt>", 5000)), nil, "nested more than 1000 deep", 4 << 20},
		{"twenty thousand entries", manyEntries(20_000), ErrZipBomb, "20000 entries in the archive", 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := parseDOCX(tt.data)
			runtime.ReadMemStats(&after)
			if err == nil || tt.is != nil && !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %v saying %q", err, tt.is, tt.msg)
			}
			allocated := int64(after.TotalAlloc - before.TotalAlloc)
			t.Logf("%d KiB file: %d KiB allocated; %v", len(tt.data)>>10, allocated>>10, err)
			if allocated > tt.maxAlloc+int64(len(tt.data)) {
				t.Errorf("allocated %d MiB", allocated>>20)
			}
		})
	}
}

// Files are parsed before the lock is taken: two uploads of the same name
// read at once are settled under the lock, the later one replacing the
// earlier, never two documents of one name.
func TestConcurrentUploadsOfOneName(t *testing.T) {
	e := newEnv(t, Config{}, nil, nil)
	sp := e.space(t, "Race")
	var wg sync.WaitGroup
	statuses := make([]string, 2)
	for i, text := range []string{budgetMD, budgetRU} {
		wg.Go(func() {
			res, err := e.svc.Add(t.Context(), user, sp.ID, []File{BytesFile("plan.md", []byte(text))}, AddOptions{})
			if err != nil {
				statuses[i] = err.Error()
				return
			}
			statuses[i] = res[0].Status
		})
	}
	wg.Wait()
	slices.Sort(statuses)
	if !slices.Equal(statuses, []string{StatusAdded, StatusReplaced}) {
		t.Fatalf("statuses %v", statuses)
	}
	docs, err := e.svc.Documents(t.Context(), user, sp.ID)
	if err != nil || len(docs) != 1 {
		t.Fatalf("%d documents, err %v", len(docs), err)
	}
	// Adding either again is unchanged or replaces; still one document.
	e.add(t, sp.ID, BytesFile("plan.md", []byte(budgetMD)))
	if docs, _ := e.svc.Documents(t.Context(), user, sp.ID); len(docs) != 1 {
		t.Fatalf("%d documents", len(docs))
	}
}
