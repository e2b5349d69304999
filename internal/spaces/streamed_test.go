package spaces

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// A file parsed in a worker (HTML, PDF, DOCX by extension) goes from where
// it is to the worker without being read into memory first; it is still
// held to the size limit, and a file that changes between the reading that
// hashes it and the one that parses it is refused, not indexed under the
// other content's hash.
func TestStreamedFilesKeepTheirChecks(t *testing.T) {
	e := newEnv(t, Config{MaxFileBytes: 2000}, nil, nil)
	sp := e.space(t, "Streamed")
	page := func(word string) []byte {
		return []byte("<!doctype html><html><head><title>Report</title></head><body><article><h1>Report</h1><p>The code word is " +
			word + ". The city budget grew by twelve percent in 2024, driven by exports of turbines to the north.</p></article></body></html>")
	}
	var opens atomic.Int32
	moving := File{Name: "moving.html", Open: func() (io.ReadCloser, error) {
		n := opens.Add(1)
		return bytesReader{bytes.NewReader(page(fmt.Sprintf("moving%d", n)))}, nil
	}}
	res := e.add(t, sp.ID,
		BytesFile("good.html", page("pelican")),
		BytesFile("big.html", append(page("walrus"), []byte(strings.Repeat("<p>filler</p>", 200))...)),
		moving,
	)
	if got, want := statuses(res), []string{"good.html:added", "big.html:failed", "moving.html:failed"}; !slices.Equal(got, want) {
		t.Fatalf("statuses = %v, want %v", got, want)
	}
	if !errors.Is(res[1].Err(), ErrTooLarge) {
		t.Errorf("big.html: err = %v, want ErrTooLarge", res[1].Err())
	}
	if !strings.Contains(res[2].Error, "changed while it was read") {
		t.Errorf("moving.html: error %q, want that it changed while it was read", res[2].Error)
	}
	if got := e.found(t, sp.ID, "pelican"); !slices.Equal(got, []string{"good.html"}) {
		t.Errorf("pelican: found %v", got)
	}
}
